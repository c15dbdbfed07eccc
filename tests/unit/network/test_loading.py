"""One way a checkpoint becomes a network to play (network.loading.load_network) and a
player (play.network_player): the komi and rules a checkpoint records, the quickstart's assumed
(and said once) for an older one, the canaries for every caller, one-line errors; and the scan
that keeps it one: no module but the factory builds an in-process evaluator for a player."""
import logging
import re
from pathlib import Path

import pytest
import torch

from network.checkpoint import save_checkpoint
from network.loading import ASSUMED_KOMI, NetworkError, load_network, trained_at, training_record
from network.model import build_model
from play.network_player import make_search_player, make_search_side
from play.player_settings import PlayerSettings
from rundata.config import ModelConfig

ROOT = Path(__file__).resolve().parents[3]
CONFIG = ModelConfig(board_size=7, blocks=1, channels=8, score_head=True)


def checkpoint(tmp_path, name="net.ckpt", extra=None, nan=False):
    model = build_model(CONFIG, seed=1)
    if nan:
        with torch.no_grad():
            model.stem.weight.fill_(float("nan"))
    path = tmp_path / name
    save_checkpoint(path, model, step=12, extra=extra)
    return path


def test_the_komi_and_rules_a_checkpoint_records_reach_the_player(tmp_path):
    path = checkpoint(tmp_path, extra=training_record(6.5))
    network = load_network(path, "match", backend="torch")
    assert (network.komi, network.rules, network.assumed, network.step) == (6.5, "tromp-taylor",
                                                                            False, 12)
    player = make_search_player(network, PlayerSettings(visits=8))
    assert player.model_komi == 6.5 and player.board_size == 7 and player.visits == 8
    side = make_search_side(network, PlayerSettings(visits=4), name="n")
    assert side.board_size == 7 and side.visits == 4 and side.evaluator is network.evaluator
    heads = load_network(path, "analysis")
    assert heads.evaluator.model_version == 12 and heads.komi == 6.5


def test_an_older_checkpoint_is_taken_at_the_quickstarts_komi_said_once(tmp_path, caplog):
    path = checkpoint(tmp_path)
    with caplog.at_level(logging.WARNING, logger="fastgo.network"):
        first = load_network(path, "match", backend="torch")
        second = load_network(path, "match", backend="torch")
    assert first.komi == second.komi == ASSUMED_KOMI and first.assumed
    said = [r for r in caplog.records if "records no komi" in r.getMessage()]
    assert len(said) == 1 and str(path) in said[0].getMessage()


@pytest.mark.parametrize("extra, words", [({"komi": float("nan"), "rules": "tromp-taylor"}, "komi"),
                                          ({"komi": 1e9, "rules": "tromp-taylor"}, "komi"),
                                          ({"komi": "7.5", "rules": "tromp-taylor"}, "komi"),
                                          ({"komi": 7.5, "rules": "japanese"}, "rules")])
def test_recorded_values_out_of_range_are_refused(extra, words):
    with pytest.raises(NetworkError, match=f"recorded {words}"):
        trained_at(extra, "x.ckpt")


def test_nan_weights_and_bad_files_are_one_line_errors(tmp_path):
    with pytest.raises(NetworkError, match=r"^refusing --model .*non-finite"):
        load_network(checkpoint(tmp_path, "nan.ckpt", nan=True), "gtp", what="--model")
    with pytest.raises(NetworkError, match="refusing .*non-finite"):
        load_network(checkpoint(tmp_path, "nan2.ckpt", nan=True), "analysis")
    (tmp_path / "bad.ckpt").write_bytes(b"not a checkpoint")
    with pytest.raises(NetworkError, match="^cannot load A: .*not a fastgo checkpoint") as err:
        load_network(tmp_path / "bad.ckpt", "match", what="A")
    assert "\n" not in str(err.value)


def test_the_trainer_records_what_it_trains_at(tmp_path):
    from rundata.config import loads_config
    from rundata.rundir import open_run_dir
    from trainer.factory import make_trainer

    config = loads_config("[model]\nboard_size = 7\nblocks = 1\nchannels = 8\n"
                          "[selfplay]\nkomi = 5.5\n[trainer]\nmin_positions = 1\n")
    run = open_run_dir(str(tmp_path / "run"))
    trainer = make_trainer(config, run)
    trainer.save_checkpoint()
    network = load_network(run.latest, "match", backend="torch")
    assert (network.komi, network.rules, network.assumed) == (5.5, "tromp-taylor", False)


def test_no_module_but_the_factory_builds_an_evaluator_for_a_player(project_packages):
    """InProcessEvaluator( and HeadsEvaluator( are built, and the canaries checked, in
    network/loading.py only (the server checks its slots' own runners; the benches
    time raw networks they build themselves)."""
    allowed = {"network/loading.py", "network/batch_evaluator.py",
               "network/heads_evaluator.py", "network/runner.py",
               "inference_server/slots.py"}
    found = []
    for package in project_packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            if name in allowed or name.startswith("fastgo_cli/bench/"):
                continue
            text = path.read_text(encoding="utf-8")
            if re.search(r"\b(InProcessEvaluator|HeadsEvaluator)\(|\bcheck_canar\w*\(", text):
                found.append(name)
    assert found == []


HEADS = ModelConfig(board_size=7, blocks=1, channels=8, score_head=True, lead_head=True,
                    ownership_head=True)


def broken_head(tmp_path, layer, fill, part="bias"):
    """A checkpoint of HEADS whose `layer`'s `part` (bias or weight) holds `fill` (its policy
    and value heads untouched, so only the named head's canary can refuse it)."""
    model = build_model(HEADS, seed=1)
    with torch.no_grad():
        getattr(getattr(model, layer), part).fill_(fill)
    path = tmp_path / f"{layer}-{part}-{fill}.ckpt"
    save_checkpoint(path, model, step=3, extra=training_record(7.5))
    return path


@pytest.mark.parametrize("layer, fill, head, part", [
    ("lead_fc2", float("nan"), "lead", "bias"), ("lead_fc2", float("-inf"), "lead", "bias"),
    ("score_fc2", float("nan"), "score", "bias"), ("score_fc2", 1e38, "score", "bias"),
    ("score_fc2", float("inf"), "score", "bias"), ("lead_fc2", 1e38, "lead", "bias"),
    ("lead_fc2", 1e38, "lead", "weight"), ("ownership_conv", float("nan"), "ownership", "bias")])
def test_a_network_whose_score_lead_or_ownership_is_not_finite_is_refused_naming_the_head(
        tmp_path, layer, fill, head, part):
    path = broken_head(tmp_path, layer, fill, part)
    # analysis, and the GTP engine, whose kata-analyze serves every head: refused at load
    for use in ("analysis", "gtp"):
        with pytest.raises(NetworkError, match=rf"^refusing --model .*the {head} head") as err:
            load_network(path, use, backend="torch", what="--model")
        assert "\n" not in str(err.value) and str(path) in str(err.value)
    # the uses that read policy and value only: the same file plays a match, `fastgo play`
    for use in ("match", "play"):
        network = load_network(path, use, backend="torch")
        assert network.step == 3 and network.heads is None


def test_a_sound_network_with_every_head_loads_for_analysis_and_gtp(tmp_path):
    path = broken_head(tmp_path, "lead_fc2", 0.5)
    analysis = load_network(path, "analysis")
    assert analysis.evaluator.has_lead and analysis.heads is analysis.evaluator
    gtp = load_network(path, "gtp", backend="torch")
    assert gtp.heads.has_lead and gtp.heads.model_version == 3 and gtp.heads is not gtp.evaluator
    assert gtp.backend == "torch-fp32" and gtp.evaluator.model_version == 3


@pytest.fixture
def restore_threads():
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def test_loading_leaves_the_process_threads_to_the_program(tmp_path, restore_threads):
    """load_network sets no process-wide state: torch's threads stay what the program set,
    whatever the use or the runner's threads; set_torch_threads sets them (None: left)."""
    from network.loading import match_threads, set_torch_threads
    from play.arena.plan import ArenaPlan
    from play.arena.sides import arena_checkpoint_side

    path = checkpoint(tmp_path)
    torch.set_num_threads(3)
    for use, threads in (("match", None), ("match", 2), ("play", 1), ("gtp", None)):
        load_network(path, use, backend="torch", threads=threads)
        assert torch.get_num_threads() == 3, use
    set_torch_threads(None)
    assert torch.get_num_threads() == 3
    set_torch_threads(2)
    assert torch.get_num_threads() == 2
    assert (match_threads(0), match_threads(4)) == (1, 4)
    # the arena's checkpoint side is where a match's process takes one thread a side
    plan = ArenaPlan(a=str(path), b="random", games=2, settings_a=PlayerSettings(visits=2),
                     settings_b=PlayerSettings(visits=2), size=7)
    side = arena_checkpoint_side(str(path), plan, 1, "A")
    side.close()
    assert torch.get_num_threads() == 1
