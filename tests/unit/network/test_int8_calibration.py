"""int8 calibration on a run's own games (network.backend_choice.shard_positions and
check_positions): the sampled planes are positions of the shards' games, calibration and checks
come from disjoint games, bad or absent shards fall back to the reference positions with a log
line, reading is bounded, and the runner, the automatic choice, the loader thread, `fastgo serve`
and `fastgo bench backends` hand the shard positions to int8 quantization. Also the agreement
measure: the near-tie tolerance and the policy KL bound."""
import argparse
import dataclasses
import json
import logging
import os
import pathlib
import threading

import numpy as np
import pytest

from fastgo.replay import encode_samples
from network import backend_choice
from network import runner as runner_module
from network.backend_choice import (
    REFERENCE,
    SHARDS,
    TORCH_FP32,
    BackendSetup,
    check_positions,
    reference_positions,
    shard_positions,
)
from network.backend_support import available_backends
from network.model import fuse_for_inference
from rundata.config import ModelConfig, ServerConfig, loads_config

SIZE, KOMI = 7, 0.5
CONFIG = ModelConfig(board_size=SIZE, blocks=2, channels=16)
INT8 = [name for name in ("onnx-int8", "openvino-int8") if name in available_backends()]
needs_int8 = pytest.mark.skipif(not INT8, reason="no int8 backend on this machine (needs VNNI)")


@pytest.fixture()
def trained(trained_like):
    """trained(seed=0): a network of CONFIG with realistic statistics (conftest's trained_like)."""
    return lambda seed=0: trained_like(CONFIG, seed=seed)


@pytest.fixture(scope="module")
def games(game_record, random_moves):
    """12 random 7x7 games of 10 to 40 moves before two passes, with ids."""
    rng = np.random.default_rng(7)
    return [dataclasses.replace(
        game_record(SIZE, KOMI, random_moves(SIZE, KOMI, rng, length=int(rng.integers(10, 41))),
                    0, seed=i), id=f"{i + 1:032x}") for i in range(12)]


@pytest.fixture(scope="module")
def shard_dir(tmp_path_factory, games, write_shard):
    """Two shards of six games each (names sort by time, as the workers write them)."""
    folder = tmp_path_factory.mktemp("shards")
    write_shard(folder, games[:6], "000000000001-w0-1-00001.shard", size=SIZE, komi=KOMI)
    write_shard(folder, games[6:], "000000000002-w0-1-00002.shard", size=SIZE, komi=KOMI)
    return str(folder)


def every_encoding(game) -> set:
    """The bytes of every position of `game` (0 .. L-1 moves played) under each of the 8
    symmetries, encoded by fastgo.replay from this game alone."""
    count = len(game.moves)
    game_ids = np.repeat(np.zeros(1, np.int32), count * 8)
    moves = np.repeat(np.arange(count, dtype=np.int32), 8)
    symmetries = np.tile(np.arange(8, dtype=np.uint8), count)
    total = len(moves)
    policy_start = np.zeros(count + 1, np.int64)
    np.cumsum(game.policy_count.astype(np.int64), out=policy_start[1:])
    planes = np.empty((total, CONFIG.planes, SIZE, SIZE), np.uint8)
    encode_samples(SIZE, KOMI, CONFIG.encoding, game.moves.astype(np.int16),
                   np.array([0, count], np.int64), np.array([game.winner], np.int8),
                   game.ownership.astype(np.int8).reshape(1, -1), policy_start,
                   game.policy_moves.astype(np.int16), game.policy_visits.astype(np.float32),
                   game.full.astype(np.uint8), game_ids, moves, symmetries, planes,
                   np.empty((total, SIZE * SIZE + 1), np.float32), np.empty(total, np.float32),
                   np.empty(total, np.float32), np.empty((total, SIZE * SIZE), np.float32))
    return {row.tobytes() for row in planes}


# -- the sampler ----------------------------------------------------------------------------------

def test_sampled_planes_are_positions_of_the_shard_games_split_by_game(shard_dir, games):
    sample = shard_positions(CONFIG, shard_dir, calibration=40, held_out=30)
    assert sample and sample.calibration.shape == (40, CONFIG.planes, SIZE, SIZE)
    assert sample.held_out.shape == (30, CONFIG.planes, SIZE, SIZE)
    assert sample.calibration.dtype == np.uint8
    assert sample.shards == ("000000000002-w0-1-00002.shard", "000000000001-w0-1-00001.shard")
    assert sample.skipped == ()
    by_id = {g.id: g for g in games}
    assert not set(sample.calibration_games) & set(sample.held_out_games)
    assert set(sample.calibration_games) | set(sample.held_out_games) == set(by_id)
    for planes, ids in ((sample.calibration, sample.calibration_games),
                        (sample.held_out, sample.held_out_games)):
        allowed = set().union(*(every_encoding(by_id[i]) for i in ids))
        assert all(row.tobytes() in allowed for row in planes)
    # seeded: the same shards give the same positions on every load
    again = shard_positions(CONFIG, shard_dir, calibration=40, held_out=30)
    assert np.array_equal(again.calibration, sample.calibration)
    assert np.array_equal(again.held_out, sample.held_out)


def test_sample_sizes_are_capped_by_the_positions_there_are(shard_dir, games):
    sample = shard_positions(CONFIG, shard_dir, calibration=10_000, held_out=10_000)
    by_id = {g.id: g for g in games}
    # without replacement: every position of each half at most once
    assert len(sample.calibration) == sum(len(by_id[i].moves) for i in sample.calibration_games)
    assert len(sample.held_out) == sum(len(by_id[i].moves) for i in sample.held_out_games)


def test_check_positions_uses_shards_beside_the_reference_positions(shard_dir):
    positions = check_positions(CONFIG, shard_dir)
    sample = shard_positions(CONFIG, shard_dir)
    assert set(positions.checks) == {REFERENCE, SHARDS}
    assert np.array_equal(positions.calibration, sample.calibration)
    assert np.array_equal(positions.checks[SHARDS], sample.held_out)
    assert np.array_equal(positions.checks[REFERENCE], reference_positions(CONFIG, 64))
    assert "2 shard(s)" in positions.source


def assert_reference_fallback(positions):
    assert set(positions.checks) == {REFERENCE}
    assert np.array_equal(positions.calibration, reference_positions(CONFIG, 64))
    assert positions.source == "64 reference positions"


def test_no_shard_folder_means_reference_positions_without_a_word(caplog):
    with caplog.at_level(logging.INFO, logger="fastgo.backends"):
        assert_reference_fallback(check_positions(CONFIG, None))
    assert not caplog.records


def test_an_absent_or_empty_folder_falls_back_with_a_log_line(tmp_path, caplog):
    with caplog.at_level(logging.INFO, logger="fastgo.backends"):
        assert_reference_fallback(check_positions(CONFIG, tmp_path / "missing"))
        assert_reference_fallback(check_positions(CONFIG, tmp_path))
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2 and all("no usable shard" in line for line in lines), lines


def test_bad_shards_are_skipped_and_alone_fall_back(tmp_path, shard_dir, games, write_shard,
                                                    caplog):
    with open(os.path.join(shard_dir, "000000000002-w0-1-00002.shard"), "rb") as handle:
        data = handle.read()
    (tmp_path / "000000000003-w1-1-00001.shard").write_bytes(data[:len(data) // 2])   # truncated
    (tmp_path / "000000000004-w1-1-00002.shard").write_bytes(b"\x93not a shard" * 10)
    (tmp_path / "000000000005-w1-1-00003.shard").mkdir()                              # not a file
    with caplog.at_level(logging.INFO, logger="fastgo.backends"):
        assert_reference_fallback(check_positions(CONFIG, tmp_path))
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 3 and all("shard skipped" in w for w in warnings), warnings
    assert any("no usable shard" in r.getMessage() for r in caplog.records)
    # beside a good shard, the bad ones cost nothing but a warning each
    write_shard(tmp_path, games[:6], "000000000001-w0-1-00001.shard", size=SIZE, komi=KOMI)
    sample = shard_positions(CONFIG, tmp_path)
    assert sample and sample.shards == ("000000000001-w0-1-00001.shard",)
    assert len(sample.skipped) == 3


def test_shards_of_another_board_size_are_skipped(tmp_path, game_record, random_moves,
                                                  write_shard, caplog):
    rng = np.random.default_rng(1)
    other = [game_record(5, KOMI, random_moves(5, KOMI, rng, length=8), 0, seed=i) for i in range(4)]
    write_shard(tmp_path, other, "000000000001-w0-1-00001.shard", size=5, komi=KOMI)
    with caplog.at_level(logging.WARNING, logger="fastgo.backends"):
        sample = shard_positions(CONFIG, tmp_path)
    assert not sample and sample.skipped == ("000000000001-w0-1-00001.shard",)
    assert "board 5x5" in caplog.records[0].getMessage()


def test_a_single_game_is_too_few_to_hold_any_out(tmp_path, games, write_shard, caplog):
    write_shard(tmp_path, games[:1], "000000000001-w0-1-00001.shard", size=SIZE, komi=KOMI)
    with caplog.at_level(logging.INFO, logger="fastgo.backends"):
        assert_reference_fallback(check_positions(CONFIG, tmp_path))
    assert any("fewer than two games" in r.getMessage() for r in caplog.records)


def test_reading_is_bounded_in_shards_bytes_positions_and_time(tmp_path, games, write_shard,
                                                               monkeypatch):
    import rundata.shards

    names = [f"{i:012d}-w0-1-{i:05d}.shard" for i in range(20)]
    for i, name in enumerate(names):
        write_shard(tmp_path, games[i % 12:i % 12 + 1], name, size=SIZE, komi=KOMI)
    opened = []
    real = rundata.shards.read_shard

    def spy(path, **kwargs):
        opened.append(os.path.basename(path))
        return real(path, **kwargs)

    monkeypatch.setattr(backend_choice, "read_shard", spy)       # where the choice reads shards
    sample = shard_positions(CONFIG, tmp_path, max_shards=4)
    assert opened == names[::-1][:4] and sample.shards == tuple(opened)
    opened.clear()
    assert not shard_positions(CONFIG, tmp_path, max_shards=4, seconds=0.0) and len(opened) <= 1
    opened.clear()
    monkeypatch.setattr(backend_choice, "POOL_POSITIONS", 1)        # the first shard is enough
    shard_positions(CONFIG, tmp_path, max_shards=4)
    assert opened == names[-1:]
    opened.clear()
    sample = shard_positions(CONFIG, tmp_path, max_shards=4, max_bytes=64)   # every shard too large
    assert len(opened) == 4 and len(sample.skipped) == 4 and not sample


# -- the agreement measure ------------------------------------------------------------------------

def test_near_ties_within_tie_logits_are_agreement():
    ref = np.array([[0.0, 1.0, 0.95], [0.0, 1.0, 0.8], [3.0, 0.0, 0.0]], np.float32)
    values = np.zeros(3, np.float32)
    # row 0: the candidate picks move 2, 0.05 below fp32's best (fp32 rates it at 95% of the
    # best's probability): agreed; row 1: picks move 2, 0.2 below: disagreed; row 2: agreed.
    cand = np.array([[0.0, 0.9, 1.0], [0.0, 0.9, 1.0], [3.0, 0.0, 0.0]], np.float32)
    agree = backend_choice.agreement((ref, values), (cand, values))
    assert backend_choice.TIE_LOGITS == pytest.approx(0.1)
    assert agree["top1"] == pytest.approx(2 / 3)


def test_policy_kl_is_the_mean_kl_of_the_softmax_policies_and_bounds_acceptance():
    ref = np.log(np.array([[0.5, 0.25, 0.25], [0.8, 0.1, 0.1]]))
    cand = np.log(np.array([[0.5, 0.5, 1e-9], [0.8, 0.1, 0.1]]))
    # KL row 0 = 0.5 ln(1) + 0.25 ln(0.25 / 0.5) + 0.25 ln(0.25 / 1e-9), row 1 = 0
    want = (0.25 * np.log(0.5) + 0.25 * np.log(0.25 / 1e-9)) / 2
    values = np.zeros(2, np.float32)
    agree = backend_choice.agreement((ref.astype(np.float32), values),
                                     (cand.astype(np.float32), values))
    assert agree["policy_kl"] == pytest.approx(want, rel=1e-4)
    assert agree["top1"] == 1.0 and not backend_choice.acceptable(agree)     # KL alone refuses
    assert backend_choice.acceptable({**agree, "policy_kl": backend_choice.MAX_POLICY_KL})
    assert not backend_choice.acceptable({**agree, "policy_kl": float("nan")})


def test_top1_is_required_on_the_positions_served_and_the_other_bounds_everywhere():
    good = {"top1": 0.99, "value_mae": 0.01, "policy_kl": 0.002, "max_logit_err": 0.5}
    flipped = {**good, "top1": 0.938}     # 4 near-ties of 64 random positions flipped
    everywhere = backend_choice.acceptable_everywhere
    assert everywhere({REFERENCE: flipped, SHARDS: good})        # the run's positions decide
    assert not everywhere({REFERENCE: flipped})                  # no shards: the reference does
    assert not everywhere({REFERENCE: good, SHARDS: flipped})
    # the reference positions' policy KL: the served bound without shards, a looser one with
    # them (int8 calibrated on the run's positions errs more on random games: 0.010-0.018 nats
    # measured where the run's positions gave at most 0.0043)
    assert everywhere({REFERENCE: {**flipped, "policy_kl": 0.018}, SHARDS: good})
    assert everywhere({REFERENCE: {**good, "policy_kl": backend_choice.MAX_REFERENCE_KL},
                       SHARDS: good})
    assert not everywhere({REFERENCE: {**good, "policy_kl": 0.06}, SHARDS: good})
    assert not everywhere({REFERENCE: {**good, "policy_kl": 0.018}})
    assert not everywhere({REFERENCE: good, SHARDS: {**good, "policy_kl": 0.011}})
    assert not everywhere({REFERENCE: {**good, "policy_kl": float("nan")}, SHARDS: good})
    assert not everywhere({REFERENCE: {**good, "value_mae": 0.06}, SHARDS: good})
    assert not everywhere({REFERENCE: {**good, "max_logit_err": float("inf")}, SHARDS: good})
    assert everywhere({REFERENCE: good}) and everywhere({REFERENCE: good, SHARDS: good})


def test_worst_takes_the_least_agreeing_figure_of_each_kind():
    a = {"top1": 0.99, "value_mae": 0.01, "policy_kl": 0.002, "max_logit_err": 0.5}
    b = {"top1": 0.97, "value_mae": 0.02, "policy_kl": 0.001, "max_logit_err": float("nan")}
    w = backend_choice.worst({REFERENCE: a, SHARDS: b})
    assert w["top1"] == 0.97 and w["value_mae"] == 0.02 and w["policy_kl"] == 0.002
    assert np.isnan(w["max_logit_err"])


def test_ranked_keeps_measured_refusals_and_stops_at_fp32():
    table = {TORCH_FP32: {"evals_per_s": 100.0, "ok": True},
             "onnx-int8": {"evals_per_s": 900.0, "ok": False},
             "openvino-f32": {"evals_per_s": 300.0, "ok": True},
             "onnx-fp32": {"evals_per_s": 90.0, "ok": True},
             "openvino-int8": {"error": "RuntimeError: x", "ok": False}}
    assert backend_choice.ranked(table) == ["onnx-int8", "openvino-f32", TORCH_FP32]
    assert backend_choice.ranked({}) == [TORCH_FP32]


def test_the_table_shows_every_set_of_positions():
    row = {"evals_per_s": 100.0, "ok": True, "top1": 0.9, "value_mae": 0.01, "policy_kl": 0.001,
           "max_logit_err": 0.1,
           "checks": {REFERENCE: {"top1": 0.99, "value_mae": 0.01, "policy_kl": 0.0001},
                      SHARDS: {"top1": 0.9, "value_mae": 0.02, "policy_kl": 0.001}}}
    old = {"evals_per_s": 50.0, "ok": True, "top1": 1.0, "value_mae": 0.0, "max_logit_err": 0.0}
    text = backend_choice.format_table({TORCH_FP32: old, "onnx-int8": row})
    head, fp32, int8 = text.splitlines()
    assert "reference top1" in head and "shards top1" in head
    assert "0.990" in int8 and "0.900" in int8 and "2.00" in int8
    assert fp32.split()[-1] == "yes" and fp32.count("-") >= 3     # a cached row without sets


# -- who gets the shard positions -----------------------------------------------------------------

def spy_builds(monkeypatch, module):
    """Records (name, calibration, thread name) of every backend `module` builds."""
    built = []
    real = module.build_backend

    def build(name, *args, **kwargs):
        built.append((name, kwargs.get("calibration"), threading.current_thread().name))
        return real(name, *args, **kwargs)

    monkeypatch.setattr(module, "build_backend", build)
    return built


@needs_int8
def test_the_runner_calibrates_int8_on_shard_positions_and_checks_both_sets(
        shard_dir, monkeypatch, caplog, trained):
    monkeypatch.setattr(runner_module, "_REFUSED", runner_module.Refusals())
    built = spy_builds(monkeypatch, runner_module)
    want = shard_positions(CONFIG, shard_dir).calibration
    with caplog.at_level(logging.INFO, logger="fastgo.runner"):
        runner = runner_module.ModelRunner(trained(), backend=INT8[0], capacity=4, threads=1,
                                           setup=BackendSetup(shards=shard_dir))
    calibrations = [c for name, c, _ in built if name == INT8[0]]
    assert len(calibrations) == 1 and np.array_equal(calibrations[0], want)
    assert calibrations[0].shape == (len(want), CONFIG.planes, SIZE, SIZE)
    text = " ".join(r.getMessage() for r in caplog.records)
    assert "reference top-1" in text and "shards top-1" in text and shard_dir in text
    assert runner.backend in (INT8[0], TORCH_FP32)


@needs_int8
def test_only_the_setup_names_the_shards_a_runner_calibrates_on(shard_dir, monkeypatch, trained):
    monkeypatch.setattr(runner_module, "_REFUSED", runner_module.Refusals())
    built = spy_builds(monkeypatch, runner_module)
    runner_module.ModelRunner(trained(), backend=INT8[0], capacity=4, threads=1,
                              setup=BackendSetup(shards=pathlib.Path(shard_dir)))
    runner_module.ModelRunner(trained(), backend=INT8[0], capacity=4, threads=1)   # no setup
    first, second = [c for name, c, _ in built if name == INT8[0]]
    assert np.array_equal(first, shard_positions(CONFIG, shard_dir).calibration)
    assert np.array_equal(second, reference_positions(CONFIG, 64))
    assert BackendSetup(shards=pathlib.Path(shard_dir)).shards == shard_dir
    assert BackendSetup(shards="").shards is None


@needs_int8
def test_a_hot_reload_requantizes_on_the_loader_thread(shard_dir, tmp_path, monkeypatch, trained):
    from inference_server.slots import Reloader
    from network.checkpoint import save_checkpoint

    monkeypatch.setattr(runner_module, "_REFUSED", runner_module.Refusals())
    built = spy_builds(monkeypatch, runner_module)
    path = str(tmp_path / "latest.ckpt")
    save_checkpoint(path, trained(seed=5), step=7)
    server = ServerConfig(device="cpu", backend=INT8[0], threads=1, max_batch=8,
                          max_request_positions=8)
    reloader = Reloader(CONFIG, server, setup=BackendSetup(shards=shard_dir))
    try:
        assert reloader.request("current", path)
        job = reloader.done.get(timeout=120)
    finally:
        reloader.stop()
    assert not job.error and job.version == 7
    int8 = [(c, thread) for name, c, thread in built if name == INT8[0]]
    assert len(int8) == 1 and int8[0][1] == "reloader"
    assert np.array_equal(int8[0][0], shard_positions(CONFIG, shard_dir).calibration)


@needs_int8
def test_auto_measures_with_shard_calibration_and_both_sets(shard_dir, monkeypatch, trained):
    built = spy_builds(monkeypatch, backend_choice)
    positions = check_positions(CONFIG, shard_dir)
    net = fuse_for_inference(trained(seed=2))
    name, table = backend_choice.choose_backend(net, batch=8, threads=1, seconds=0.02,
                                                use_cache=False, positions=positions)
    int8 = [c for n, c, _ in built if n.endswith("int8")]
    assert int8 and all(c is positions.calibration for c in int8)
    measured = [row for row in table.values() if "error" not in row]
    assert measured and all(set(row["checks"]) == {REFERENCE, SHARDS} for row in measured)
    for row in measured:
        assert row["top1"] == min(a["top1"] for a in row["checks"].values())
        served, reference = row["checks"][SHARDS], row["checks"][REFERENCE]
        assert row["ok"] == (served["top1"] >= 0.95 and served["policy_kl"] <= 0.01
                             and reference["policy_kl"] <= 0.05
                             and max(served["value_mae"], reference["value_mae"]) <= 0.05
                             and np.isfinite(served["max_logit_err"])
                             and np.isfinite(reference["max_logit_err"]))
    assert name == backend_choice.pick(table)


@needs_int8
def test_int8_calibrated_on_shards_agrees_on_held_out_games(shard_dir, trained):
    """With real calibration data the int8 model stays within the bounds on other games."""
    from network.backends import build_backend

    net = fuse_for_inference(trained(seed=3))
    positions = check_positions(CONFIG, shard_dir)
    fp32 = build_backend(TORCH_FP32, net, threads=1)
    int8 = build_backend(INT8[0], net, threads=1, calibration=positions.calibration)
    for label, planes in positions.checks.items():
        agree = backend_choice.agreement(fp32.run(planes), int8.run(planes))
        assert backend_choice.acceptable(agree), (label, agree)


# -- the commands ---------------------------------------------------------------------------------

def test_serve_takes_shards_from_the_option_or_the_run_directory(tmp_path):
    from roles.serve import calibration_shards
    from rundata.rundir import open_run_dir

    run = open_run_dir(tmp_path / "run")

    def config(path):
        return loads_config(f'[server]\ncheckpoints = {{ current = "{path}" }}\n')

    in_run = config(run.latest)
    outside = config(tmp_path / "elsewhere" / "net.ckpt")
    assert calibration_shards(argparse.Namespace(shards="/some/dir"), in_run) == "/some/dir"
    assert calibration_shards(argparse.Namespace(shards=None), in_run) == run.shards
    assert calibration_shards(argparse.Namespace(shards=None), outside) is None
    assert calibration_shards(argparse.Namespace(shards=None), loads_config("")) is None


def test_server_process_passes_the_shard_folder():
    from supervision.role_process import ServerProcess

    assert ServerProcess("c.toml", shards="runs/x/shards").argv[-2:] == ["--shards", "runs/x/shards"]
    assert "--shards" not in ServerProcess("c.toml").argv


@needs_int8
def test_bench_backends_reports_both_sets_in_its_json(shard_dir, tmp_path, capsys):
    from fastgo_cli.bench import backends as bench
    from fastgo_cli.main import command_parser

    parser, _ = command_parser("bench", "backends")
    out = tmp_path / "bench.json"
    args = parser.parse_args(["--net", "b2c16", "--size", str(SIZE), "--batch", "8",
                              "--threads", "1", "--seconds", "0.02", "--shards", shard_dir,
                              "--backends", f"{TORCH_FP32},{INT8[0]}", "--json", str(out)])
    assert bench.run(args) == 0
    doc = json.loads(out.read_text())
    assert {"batch", "evals_per_s", "auto", "agreement"} <= set(doc)
    assert doc["positions"] == {REFERENCE: 64, SHARDS: len(shard_positions(CONFIG, shard_dir).held_out)}
    for name in (TORCH_FP32, INT8[0]):
        row = doc["agreement"][name]
        assert {"top1", "value_mae"} <= set(row) and set(row["positions"]) == {REFERENCE, SHARDS}
    assert "shards top1" in capsys.readouterr().out
