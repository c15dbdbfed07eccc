"""Supervised pretraining from SGF (`fastgo train --sgf`): the import's skip-and-count on
malformed files, the shape of the imported records, held-out move-prediction accuracy rising
well above chance on the GNU Go test games (tests/data/sgf/games), the AlphaZero trainer
resuming from the pretrained checkpoint, and the command line end to end."""
from __future__ import annotations

import csv
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastgo import coords
from fastgo.features import encode_board
from fastgo.game import Game
from fastgo.replay import check_game
from fastgo.sgf import parse_sgf
from rundata.config import load_config
from rundata.rundir import open_run_dir
from rundata.shards import ShardWriter, list_shards, read_shard
from trainer.sgf_import import SgfInputError, Skip, find_sgf_files, game_record, import_sgf, parse_result

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "data", "sgf")
GAMES = os.path.join(DATA, "games")
BAD = os.path.join(DATA, "bad")

CONFIG = """
[model]
board_size = 9
blocks = 1
channels = 16
value_hidden = 16

[selfplay]
komi = 7.5

[trainer]
batch_size = 64
lr = 0.05
checkpoint_every = 60
keep_checkpoints = 3
device = "cpu"
threads = 1
seed = 3
"""


def write_config(path):
    path.write_text(CONFIG)
    return str(path)


# --- import --------------------------------------------------------------------------------------

def test_malformed_files_are_skipped_and_counted_by_kind(tmp_path):
    good = os.path.join(GAMES, "m00-g0.sgf")
    report, shards = import_sgf([BAD, good, good], tmp_path / "out", size=9, default_komi=7.5)
    # bad/ holds 10 .sgf files (notes.txt is not one); the good game is named twice
    assert report.read == 12 and report.used == 1
    assert report.skipped == {"bad SGF": 4, "illegal move": 1, "moves after the end": 1,
                              "moves out of turn": 1, "no usable result": 1,
                              "setup stones or handicap": 1, "wrong board size": 1,
                              "duplicate game": 1}
    first = report.first
    assert first["bad SGF"].startswith("empty.sgf: no game tree")          # sorted: empty first
    assert first["illegal move"] == "illegal.sgf move 4: W[ee] is illegal (occupied, suicide or ko)"
    assert first["moves after the end"] == "afterend.sgf move 4: W[cc] is played after two passes"
    assert first["moves out of turn"] == "outofturn.sgf move 2: B plays where W is to move"
    assert first["no usable result"] == "noresult.sgf: RE[] names no winner"
    assert first["setup stones or handicap"] == "handicap.sgf: 2 AB, 0 AW, HA[2]"
    assert first["wrong board size"] == "size19.sgf: SZ[19], the model plays 9"
    summary = report.summary()
    assert summary.startswith(f"12 games read, 1 used ({report.positions} positions); "
                              f"skipped: 4 bad SGF (first: ")
    assert "1 wrong board size (first: size19.sgf: SZ[19], the model plays 9)" in summary
    # huge SZ and a text file named .sgf are bad SGF too, each with its own reason
    reasons = {}
    for name in ("hugesz.sgf", "notsgf.sgf", "syntax.sgf"):
        report_one, _ = import_sgf([os.path.join(BAD, name)], tmp_path / name, size=9,
                                   default_komi=7.5)
        assert report_one.skipped == {"bad SGF": 1}
        reasons[name] = report_one.first["bad SGF"]
    # an explicit file is named as given
    assert reasons["hugesz.sgf"].startswith(os.path.join(BAD, "hugesz.sgf: SZ[1000] is outside 2..25"))
    assert reasons["notsgf.sgf"].startswith(os.path.join(BAD, "notsgf.sgf: expected '(' to open"))
    assert reasons["syntax.sgf"].startswith(os.path.join(BAD, "syntax.sgf: unclosed"))

    # the one game used: a shard read_shard accepts, holding a record built as self-play's
    assert [os.path.basename(p) for p in shards] == ["sgf-000000.shard"]
    shard = read_shard(shards[0])
    assert shard.header["size"] == 9 and shard.header["komi"] == 5.5 and len(shard.games) == 1
    game = shard.games[0]
    with open(good) as handle:
        sgf = parse_sgf(handle.read())
    played = np.array([m for _, m in sgf.moves], dtype=np.int16)
    assert np.array_equal(game.moves, played)
    assert np.array_equal(game.policy_moves, played) and np.all(game.policy_count == 1)
    assert np.all(game.policy_visits == 1.0) and np.all(game.full == 1)
    assert np.all(game.root_value == 0) and game.versions == []
    # GNU Go's games end by two passes with the Tromp-Taylor score in RE: real ownership
    bad, _, over, score, ownership = check_game(9, 5.5, played)
    assert bad == -1 and over and game.end == "passes"
    assert sgf.result == f"{'B' if score > 0 else 'W'}+{abs(score):g}"
    assert game.winner == (1 if score > 0 else -1) and abs(game.score - score) < 1e-3
    assert np.array_equal(game.ownership, ownership) and np.abs(ownership).sum() > 40
    assert report.passes == 1


def test_results_parse_and_unfinished_games_keep_the_written_result():
    assert parse_result("B+R") == (1, None) and parse_result("W+Resign") == (-1, None)
    assert parse_result("W+T") == (-1, None) and parse_result("B+Forfeit") == (1, None)
    assert parse_result("B+3.5") == (1, 3.5) and parse_result("w+0.5") == (-1, -0.5)
    assert parse_result("0") == (0, 0.0) and parse_result("Draw") == (0, 0.0)
    for text in ("", "?", "Void", "B+lots", "X+1", "B3"):
        with pytest.raises(ValueError):
            parse_result(text)
    # resigned mid-game: the result as written, ownership unknown
    sgf = parse_sgf("(;SZ[9]KM[6.5]RE[W+R];B[ee];W[cc];B[gg])")
    record = game_record(sgf, "r.sgf", size=9, default_komi=7.5)
    assert record.end == "recorded" and record.winner == -1 and record.komi == 6.5
    assert not record.ownership.any() and record.score == 0.0
    # over (two passes) but the recorded score is not the Tromp-Taylor one: kept as written
    sgf = parse_sgf("(;SZ[9]RE[B+12];B[ee];W[];B[])")
    record = game_record(sgf, "s.sgf", size=9, default_komi=7.5)
    assert record.end == "recorded" and record.winner == 1 and record.score == 12.0
    # the same game with the Tromp-Taylor score (81 points to Black, komi 7.5) ends by passes
    sgf = parse_sgf("(;SZ[9]RE[B+73.5];B[ee];W[];B[])")
    record = game_record(sgf, "t.sgf", size=9, default_komi=7.5)
    assert record.end == "passes" and np.all(record.ownership == 1)
    with pytest.raises(Skip) as err:
        game_record(parse_sgf("(;SZ[9]RE[B+R])"), "u.sgf", size=9, default_komi=7.5)
    assert err.value.kind == "no moves"
    # 2x2: the move cap is 8 moves; a game over by the cap with its score ends by "move_cap",
    # a ninth move is refused
    capped = [4, 0, 2, 4, 1, 4, 3, 4]
    _, _, over, score, _ = check_game(2, 0.5, np.array(capped, np.int16))
    nodes = "".join(f";{'BW'[i % 2]}[{coords.to_sgf(m, 2)}]" for i, m in enumerate(capped))
    result = f"{'B' if score > 0 else 'W'}+{abs(score):g}"
    record = game_record(parse_sgf(f"(;SZ[2]KM[0.5]RE[{result}]{nodes})"), "c.sgf", size=2,
                         default_komi=7.5)
    assert over and record.end == "move_cap" and abs(record.score - score) < 1e-3
    with pytest.raises(Skip) as err:
        game_record(parse_sgf(f"(;SZ[2]KM[0.5]RE[B+R]{nodes};B[aa])"), "d.sgf", size=2,
                    default_komi=7.5)
    assert (err.value.kind, err.value.reason) == (
        "moves after the end", "d.sgf move 9: B[aa] is played after the move cap of 8")


def test_bad_paths_are_refused_before_anything_is_read(tmp_path):
    with pytest.raises(SgfInputError, match="does not exist"):
        find_sgf_files([tmp_path / "missing"])
    with pytest.raises(SgfInputError, match="not an .sgf file"):
        find_sgf_files([os.path.join(BAD, "notes.txt")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(SgfInputError, match="no .sgf files under"):
        find_sgf_files([tmp_path / "empty"])
    with pytest.raises(SgfInputError, match="more than 5 SGF files"):
        find_sgf_files([GAMES], max_files=5)
    from trainer.supervised import pretrain
    config = load_config(write_config(tmp_path / "c.toml"))
    run_dir = open_run_dir(tmp_path / "run")
    lines = []
    with pytest.raises(SgfInputError, match="no usable games"):
        pretrain(config, run_dir, [os.path.join(BAD, "size19.sgf")], out=lines.append)
    assert lines == ["fastgo train: 1 games read, 0 used (0 positions); skipped: 1 wrong board "
                     f"size (first: {os.path.join(BAD, 'size19.sgf')}: SZ[19], the model plays 9)"]
    with pytest.raises(SgfInputError, match="1 usable game, need at least 2"):
        pretrain(config, run_dir, [os.path.join(GAMES, "m00-g0.sgf")], holdout=0.1,
                 out=lines.append)
    assert not os.path.exists(run_dir.latest)          # nothing trained, nothing written


# --- training ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def pretrained(tmp_path_factory):
    """One seeded run: 150 steps of 64 positions on the test games, 15% of them held out."""
    from trainer.supervised import pretrain
    torch.manual_seed(0)
    root = tmp_path_factory.mktemp("sl")
    config = load_config(write_config(root / "c.toml"))
    run_dir = open_run_dir(root / "run")
    lines = []
    result = pretrain(config, run_dir, [GAMES], holdout=0.15, steps=150, log_every=50,
                      out=lines.append)
    return config, run_dir, result, lines


def _chance_and_top1(model, games, size=9, encoding="alphazero"):
    """Independently of the trainer's data path: replays each game with fastgo.game, counts the
    legal moves of every position and checks the network's argmax against the move played."""
    legal, hits, positions = 0, 0, 0
    model.eval()
    for g in games:
        game = Game(size=size, komi=g.komi)
        planes = []
        for move in g.moves:
            legal += int(game.legal_moves().sum())
            planes.append(encode_board(game.board, encoding))
            game.play(int(move))
        with torch.no_grad():
            logits, _ = model(torch.from_numpy(np.stack(planes)).float())
        hits += int((logits.argmax(1).numpy() == g.moves).sum())
        positions += len(g.moves)
    return positions / legal, hits / positions, positions


def test_heldout_accuracy_rises_well_above_chance(pretrained):
    from trainer.supervised import load_games, split_games
    config, run_dir, result, lines = pretrained
    report, trainer = result["report"], result["trainer"]
    assert lines[0].startswith(f"fastgo train: {report.read} games read, {report.used} used")
    assert report.used >= 150
    games = load_games([os.path.join(run_dir.root, "sgf_shards", n)
                        for n in list_shards(os.path.join(run_dir.root, "sgf_shards"))])
    train, held = split_games(games, 0.15, config.trainer.seed)
    assert len(held) == round(0.15 * len(games))                    # games, not positions
    assert not {g.id for g in held} & {g.id for g in train}
    chance, top1, positions = _chance_and_top1(trainer.model, held)
    evaluation = result["evaluation"]
    assert evaluation["heldout_positions"] == positions
    assert abs(evaluation["heldout_top1"] - top1) < 1e-9              # the trainer's own figure
    assert evaluation["heldout_top5"] >= evaluation["heldout_top1"]
    assert 0.01 < chance < 0.05                                       # ~40 legal moves on 9x9
    assert top1 > 3 * chance, (top1, chance)
    with open(run_dir.metrics, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [int(r["step"]) for r in rows] == [0, 50, 100, 150]
    assert all(r["phase"] == "supervised" for r in rows)
    before, after = float(rows[0]["heldout_top1"]), float(rows[-1]["heldout_top1"])
    assert after > before + chance, (before, after)
    assert float(rows[-1]["heldout_top5"]) > after
    assert float(rows[-1]["policy_loss"]) < float(rows[1]["policy_loss"]) + 0.5


def test_the_alphazero_trainer_resumes_from_the_pretrained_checkpoint(pretrained):
    from network.checkpoint import load_checkpoint
    from trainer.factory import make_trainer
    config, run_dir, result, _ = pretrained
    ckpt = load_checkpoint(run_dir.latest, expect=config.model)
    assert ckpt.step == 150 and os.path.exists(run_dir.checkpoint(150))
    assert ckpt.extra["trainer"]["supervised"]["samples"] == 150 * 64
    trainer = make_trainer(config, run_dir)
    assert trainer.step == 150 and trainer.samples == 0 and not trainer.used_shards
    state = result["trainer"].model.state_dict()
    assert all(torch.equal(v, state[k]) for k, v in trainer.model.state_dict().items())
    # imported games live in sgf_shards/: the self-play window never sees them
    assert trainer.ingest() == 0 and trainer.window.positions == 0
    assert list_shards(run_dir.shards) == []


def test_value_flag_trains_the_value_head_and_ownership_only_where_known(tmp_path):
    from trainer.supervised import GameSet, SupervisedTrainer
    config = load_config(write_config(tmp_path / "c.toml"))
    records = tmp_path / "records"
    records.mkdir()
    (records / "resigned.sgf").write_text("(;SZ[9]KM[7.5]RE[W+R];B[ee];W[cc];B[gg];W[gc])")
    (records / "timed.sgf").write_text("(;SZ[9]KM[7.5]RE[B+T];B[ee];W[cc];B[gc])")
    report, shards = import_sgf([records], tmp_path / "s1", size=9, default_komi=7.5)
    recorded = [g for p in shards for g in read_shard(p).games]
    assert report.used == 2 and {g.end for g in recorded} == {"recorded"}
    report, shards = import_sgf([os.path.join(GAMES, "m00-g0.sgf")], tmp_path / "s2", size=9,
                                default_komi=7.5)
    finished = read_shard(shards[0]).games
    trainer = SupervisedTrainer(config, open_run_dir(tmp_path / "run"),
                                GameSet(recorded, 9, 7.5, "alphazero"), None, value=True)
    assert list(trainer.sl_train.ownership_known) == [0.0, 0.0]
    stats = trainer.sl_step()
    assert stats["ownership_loss"] == 0.0 and stats["value_loss"] > 0.0
    trainer.sl_train = GameSet(finished, 9, 7.5, "alphazero")
    stats = trainer.sl_step()
    assert stats["ownership_loss"] > 0.0 and stats["value_loss"] > 0.0
    # without --value the value head is not trained
    trainer.sl_value = False
    before = trainer.model.value_fc2.weight.detach().clone()
    stats = trainer.sl_step()
    assert stats["value_loss"] == 0.0 and torch.equal(trainer.model.value_fc2.weight, before)
    assert stats["loss"] == stats["policy_loss"] > 0.0
    # a metrics.csv the AlphaZero trainer began: its header gains the supervised columns after
    # its own, and its later rows stay aligned
    from trainer.metrics import ALPHAZERO_FIELDS as METRICS_FIELDS
    path = trainer.run_dir.metrics
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=METRICS_FIELDS)
        writer.writeheader()
        writer.writerow({k: 7 for k in METRICS_FIELDS})
    trainer.write_sl_metrics({}, 0, 0.0, {"heldout_top1": 0.25, "heldout_top5": 0.5,
                                          "heldout_loss": 3.0, "heldout_value_mse": 1.0})
    with open(path, "a", newline="") as handle:
        csv.DictWriter(handle, fieldnames=METRICS_FIELDS).writerow({k: 9 for k in METRICS_FIELDS})
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["step"] for r in rows] == ["7", str(trainer.step), "9"]
    assert rows[1]["heldout_top1"] == "0.25000" and rows[1]["phase"] == "supervised"
    assert rows[1]["heldout_value_mse"] == "1.00000" and rows[1]["loss"] == ""
    assert rows[0]["heldout_top1"] == "" and rows[2]["heldout_top1"] is None   # padded; short
    assert rows[0]["quarantined"] == "7" and rows[2]["quarantined"] == "9"


# --- the command line ----------------------------------------------------------------------------

def _fastgo(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "fastgo_cli.main", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)


def test_cli_trains_from_sgf_and_refuses_bad_arguments_in_one_line(tmp_path):
    config = write_config(tmp_path / "c.toml")
    files = [os.path.join(GAMES, n) for n in sorted(os.listdir(GAMES))[:20]]
    out = _fastgo("train", "--config", config, "--run-dir", tmp_path / "run", "--quiet",
                  "--sgf", *files, os.path.join(BAD, "size19.sgf"), "--holdout", "0.2",
                  "--steps", "4", "--log-every", "2")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert lines[0].startswith("fastgo train: 21 games read, ")
    assert "1 wrong board size (first: " in lines[0]
    assert lines[-1].startswith("fastgo train: stopped at step 4; held-out top-1 ")
    run = tmp_path / "run"
    assert (run / "checkpoints" / "latest.ckpt").exists()
    assert (run / "checkpoints" / "ckpt-000000004.ckpt").exists()
    assert len(list_shards(run / "sgf_shards")) >= 1 and list_shards(run / "shards") == []
    with open(run / "metrics.csv", newline="") as handle:
        assert [r["step"] for r in csv.DictReader(handle)] == ["0", "2", "4"]
    # a malformed argument: one line, exit 2, from the real command ...
    out = _fastgo("train", "--config", config, "--run-dir", tmp_path / "r2", "--sgf",
                  tmp_path / "missing")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip() == f"fastgo train: --sgf: {tmp_path / 'missing'} does not exist"


def test_bad_sgf_arguments_are_one_line_and_exit_2(tmp_path, capsys):
    """... and, in this process, the other malformed forms."""
    from fastgo_cli.main import main
    config = write_config(tmp_path / "c.toml")
    cases = ((["--sgf", os.path.join(BAD, "notes.txt")], "is not an .sgf file or a directory"),
             (["--sgf", GAMES, "--holdout", "1.5"], "--holdout: must be in [0, 1), got 1.5"),
             (["--sgf", GAMES, "--steps", "many"], "argument --steps: invalid int value"),
             (["--sgf", GAMES, "--steps", "3", "--epochs", "1"], "give one of them"),
             (["--sgf", GAMES, "--max-steps", "3"], "unrecognized arguments: --max-steps 3"),
             (["--sgf"], "expected at least one argument"))
    for args, expected in cases:
        try:
            status = main(["train", "--config", config, "--run-dir", str(tmp_path / "r"), *args])
        except SystemExit as exit_:
            status = exit_.code
        err = capsys.readouterr().err
        assert status == 2, (args, err)
        assert len(err.strip().splitlines()) == 1 and expected in err, (args, err)
        assert err.startswith("fastgo train: ")
    assert not (tmp_path / "r").exists()          # refused before the run directory was made


# --- fuzz ----------------------------------------------------------------------------------------

_MOVE = st.one_of(st.integers(0, 80), st.just(81))
_RESULT = st.sampled_from(["B+R", "W+R", "B+T", "W+0.5", "B+7.5", "0", "?", "", "B+x", "W+81.5"])


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(moves=st.lists(st.tuples(st.sampled_from("BW"), _MOVE), max_size=40),
       alternate=st.booleans(), result=_RESULT, komi=st.sampled_from([None, "0.5", "7.5", "-3"]),
       size=st.sampled_from([9, 9, 9, 7]))
def test_fuzz_any_game_is_skipped_with_a_reason_or_becomes_a_valid_shard(moves, alternate, result,
                                                                          komi, size):
    """Random move sequences (occupied points, suicide, ko, colors out of turn, moves after two
    passes) and results: game_record either skips with a kind and a reason naming the file, or
    builds a record that read_shard accepts with every rule checked."""
    if alternate:
        moves = [("BW"[i % 2], m) for i, (_, m) in enumerate(moves)]
    nodes = "".join(f";{c}[{coords.to_sgf(m, 9) if m < 81 else ''}]" for c, m in moves)
    text = f"(;SZ[{size}]" + (f"KM[{komi}]" if komi else "") + (f"RE[{result}]" if result else "") \
        + nodes + ")"
    try:
        sgf = parse_sgf(text)
    except ValueError:
        return                                  # a 9x9 point on a 7x7 board: the reader refuses
    try:
        record = game_record(sgf, "f.sgf", size=9, default_komi=7.5)
    except Skip as skip:
        assert skip.kind and skip.reason.startswith("f.sgf")
        return
    assert size == 9 and len(record.moves) == len(moves)
    with tempfile.TemporaryDirectory() as directory:
        writer = ShardWriter(directory, prefix="f", size=9, komi=record.komi)
        writer.add(record)
        shard = read_shard(writer.close("f.shard"))
    game = shard.games[0]
    assert np.array_equal(game.moves, record.moves) and game.end == record.end
    assert game.winner == record.winner
