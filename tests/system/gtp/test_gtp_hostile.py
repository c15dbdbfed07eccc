"""Hostile GTP input: numbers Python refuses to convert, over-long lines and ids, FIFOs named
by loadsgf. Every line gets a GTP answer and the engine keeps serving."""
import os
import subprocess
import sys
import threading

import pytest

from fastgo import coords, gtp
from play.gtp.analyze import LineReader, parse_analyze_args
from play.gtp.engine import GtpEngine
from play.specs import make_player

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
HOSTILE_WORDS = ["9" * 5000, "\u00b2", "\u0663", "1_0", "nan", "inf", "-inf", "1e999", "0x10",
                 "+", "\U0001d7ff", "\u0663.5"]
HOSTILE_NUMBERS = HOSTILE_WORDS + [" 7", "7 ", ""]


@pytest.fixture
def engine():
    return GtpEngine(make_player("random", seed=1), size=9)


def answer(engine, line):
    response = engine.handle_line(line)
    assert response is not None and response.endswith("\n\n"), response
    return response


@pytest.mark.parametrize("text", HOSTILE_WORDS)
def test_number_arguments_get_a_gtp_error(engine, text):
    for command in ("boardsize", "komi", "fixed_handicap", "place_free_handicap"):
        assert answer(engine, f"{command} {text}").startswith("?"), command
    assert answer(engine, f"time_settings {text} 1 1").startswith("?")
    assert answer(engine, f"time_left b {text} 1").startswith("?")
    assert answer(engine, f"loadsgf x.sgf {text}").startswith("?")
    assert answer(engine, "2 name") == "=2 fastgo\n\n"        # still serving


def test_command_ids_beyond_range_are_refused_and_the_engine_goes_on(engine):
    assert answer(engine, "9" * 5000 + " name") == "? invalid command id\n\n"
    assert answer(engine, "9" * 20 + " name") == "? invalid command id\n\n"
    assert answer(engine, str(gtp.MAX_ID) + " name") == f"={gtp.MAX_ID} fastgo\n\n"
    assert answer(engine, "\u00b2 name").startswith("? unknown command")   # not an id
    assert answer(engine, "x" * (gtp.MAX_LINE_CHARS + 1)) == \
        f"? line longer than {gtp.MAX_LINE_CHARS} characters\n\n"
    assert answer(engine, "x" * (gtp.MAX_LINE_CHARS - 1)).startswith("? unknown command")
    assert answer(engine, "3 protocol_version") == "=3 2\n\n"


def test_valid_numbers_still_work(engine):
    assert answer(engine, "komi 6.5") == "= \n\n" and engine.komi == 6.5
    assert answer(engine, "komi -0.5") == "= \n\n"
    assert answer(engine, "komi 10001").startswith("?")
    assert answer(engine, "boardsize 13") == "= \n\n" and engine.size == 13
    assert answer(engine, "fixed_handicap 2") == "= D4 K10\n\n"
    assert answer(engine, "time_settings 300 30 5") == "= \n\n"


def test_parse_response_refuses_ids_it_cannot_convert():
    for bad in ("=" + "9" * 5000 + " x", "=99999999999999999999 x"):
        with pytest.raises(ValueError):
            gtp.parse_response(bad)
    assert gtp.parse_response("=\u00b2 x") == (True, None, "\u00b2 x")


def test_lz_analyze_numbers():
    assert parse_analyze_args(["b", "50"]) == (gtp.BLACK, 0.5)
    for args in (["9" * 5000], ["interval", "\u00b2"], ["interval", "9" * 50], ["minmoves", "-1"]):
        with pytest.raises(gtp.GtpError):
            parse_analyze_args(args)


def test_parse_int_and_float_bounds():
    assert coords.parse_int("9" * coords.MAX_NUMBER_CHARS) == int("9" * coords.MAX_NUMBER_CHARS)
    with pytest.raises(ValueError):
        coords.parse_int("9" * (coords.MAX_NUMBER_CHARS + 1))
    assert coords.parse_float("-7.25") == -7.25 and coords.parse_float(".5e1") == 5.0
    with pytest.raises(ValueError, match="outside"):
        coords.parse_int("26", low=2, high=25)
    for bad in HOSTILE_NUMBERS:
        with pytest.raises(ValueError):
            coords.parse_int(bad)
        with pytest.raises(ValueError):
            coords.parse_float(bad)


def test_loadsgf_of_a_fifo_answers_at_once(engine, tmp_path):
    fifo = tmp_path / "game.sgf"
    os.mkfifo(fifo)
    result = {}
    worker = threading.Thread(target=lambda: result.update(r=engine.handle_line(f"loadsgf {fifo}")),
                              daemon=True)
    worker.start()
    worker.join(5)
    assert not worker.is_alive(), "loadsgf blocked on a FIFO"
    assert result["r"].startswith("? cannot open file")


def test_line_reader_drops_an_overlong_line_and_keeps_the_next(tmp_path):
    read_fd, write_fd = os.pipe()
    data = b"name\n" + b"x" * (3 * gtp.MAX_LINE_CHARS) + b"\n2 version\nlast"
    writer = threading.Thread(target=lambda: (os.write(write_fd, data), os.close(write_fd)))
    writer.start()
    with os.fdopen(read_fd, "rb", buffering=0) as stream:
        reader = LineReader(stream)
        lines = [reader.readline() for _ in range(5)]
    writer.join(5)
    assert lines[0] == "name\n"
    assert isinstance(lines[1], gtp.OverlongLine)
    assert lines[2:] == ["2 version\n", "last", None]


def test_engine_process_survives_hostile_lines():
    script = ("9" * 5000 + " name\n" + "boardsize \u00b2\n" + "komi 1_0\n" + "x" * 200_000 + "\n"
              + "fixed_handicap " + "9" * 5000 + "\n" + "7 name\nquit\n")
    done = subprocess.run([sys.executable, "-m", "fastgo_cli.main", "gtp", "--seed", "1"],
                          input=script, capture_output=True, text=True, timeout=60, cwd=ROOT)
    responses = done.stdout[:-2].split("\n\n")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert [r[0] for r in responses] == ["?", "?", "?", "?", "?", "=", "="], responses
    assert responses[-2] == "=7 fastgo"


def test_gtp_cli_refuses_out_of_range_seed_and_komi():
    for args in (["--seed", str(1 << 64)], ["--seed", "-1"], ["--komi", "nan"]):
        done = subprocess.run([sys.executable, "-m", "fastgo_cli.main", "gtp", *args], input="quit\n",
                              capture_output=True, text=True, timeout=60, cwd=ROOT)
        assert done.returncode == 2 and "Traceback" not in done.stderr, (args, done.stderr)


def test_gtp_model_with_nan_weights_is_refused_at_start(tmp_path):
    import torch

    from network.checkpoint import save_checkpoint
    from network.model import build_model
    from rundata.config import ModelConfig

    model = build_model(ModelConfig(blocks=1, channels=8), seed=0)
    with torch.no_grad():
        model.stem.weight.fill_(float("nan"))
    save_checkpoint(tmp_path / "nan.ckpt", model, step=1)
    done = subprocess.run([sys.executable, "-m", "fastgo_cli.main", "gtp", "--model",
                           str(tmp_path / "nan.ckpt"), "--device", "cpu"], input="name\n",
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 2 and done.stdout == "", (done.stdout, done.stderr[-2000:])
    assert "non-finite" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("layer, part, fill, words", [
    ("lead_fc2", "bias", float("nan"), "the lead head gives non-finite outputs"),
    ("score_fc2", "bias", float("inf"), "the score head gives non-finite outputs"),
    ("lead_fc2", "weight", 1e38, "the lead head")])
def test_gtp_model_with_a_broken_analysis_head_is_refused_at_start_in_one_line(
        tmp_path, layer, part, fill, words):
    # genmove reads policy and value only; kata-analyze reads the lead and score heads too, so
    # the engine checks them at its start instead of failing at the first kata-analyze
    import torch

    from network.checkpoint import save_checkpoint
    from network.loading import training_record
    from network.model import build_model
    from rundata.config import ModelConfig

    model = build_model(ModelConfig(board_size=7, blocks=1, channels=8, score_head=True,
                                    lead_head=True, ownership_head=True), seed=1)
    with torch.no_grad():
        getattr(getattr(model, layer), part).fill_(fill)
    path = tmp_path / "broken.ckpt"
    save_checkpoint(path, model, step=2, extra=training_record(7.5))   # no assumed-komi warning
    done = subprocess.run([sys.executable, "-m", "fastgo_cli.main", "gtp", "--model", str(path),
                           "--device", "cpu", "--backend", "torch"],
                          input="name\ngenmove b\nkata-analyze w 10\n", capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and done.stdout == "", (done.stdout, done.stderr[-2000:])
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert lines[0].startswith(f"fastgo gtp: refusing --model {path}: {words}"), lines


def test_a_failing_player_is_reset_and_the_engine_goes_on():
    from play.players import Player

    class Flaky(Player):
        name = "flaky"

        def __init__(self):
            self.calls = self.resets = 0

        def genmove(self, game):
            self.calls += 1
            if self.calls == 1:
                raise RuntimeError("evaluator died")
            return game.board.pass_move

        def reset(self):
            self.resets += 1

    player = Flaky()
    engine = GtpEngine(player, size=9)
    assert answer(engine, "genmove b") == "? genmove failed: RuntimeError\n\n"
    assert player.resets == 1
    assert answer(engine, "genmove b") == "= pass\n\n"
