"""A real `fastgo arena random mcts:50 --games 12 --games-at-once 4` in a process of its own, sent
a real SIGINT (once, or twice in a row) at many points of the match: inside a batch, as the last
game of the last batch is over and before play_match tallies it, after the tally and before
play_match returns, after it returned, while the last batch's SGFs are written, after the last
batch is counted, while the report is said, while --json is written, while the ratings row is
appended, while the engines are ended, and while the sides are made. Whatever the point: the
JSON's game count is the SGFs kept and the table's, no temporary file is left, no traceback is
printed; a signal once the last game is over loses none of the twelve games. And once more by
a signal from outside, after the first batch's progress line."""
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from rundata.ratings_table import read_table

ROOT = Path(__file__).resolve().parents[3]
GAMES, AT_ONCE = 12, 4
BATCHES = GAMES // AT_ONCE

# the driver: the arena in this process, SIGINT sent to itself at the N-th call of a function
DRIVER = '''
import importlib, os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)   # not an ignored one inherited
module, name, when, n, times = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
owner = importlib.import_module(module)
if "." in name:
    cls, name = name.split(".")
    owner = getattr(owner, cls)
real = getattr(owner, name)
calls = []

def fire():
    for _ in range(times):
        os.kill(os.getpid(), signal.SIGINT)

def wrapped(*args, **kwargs):
    calls.append(1)
    if when == "before" and len(calls) == n:
        fire()
    out = real(*args, **kwargs)
    if when == "after" and len(calls) == n:
        fire()
    return out

setattr(owner, name, wrapped)
from fastgo_cli.main import main
sys.exit(main(sys.argv[6:]))
'''

POINTS = {
    # (module, function, before or after the call, at its N-th call, every game kept)
    "inside the first batch": ("play.match", "_count", "before", 40, False),
    "the last game over, before play_match's tally": ("play.match", "_tally", "before", BATCHES,
                                                      True),
    "after the last tally, before play_match returns": ("play.match", "_tally", "after",
                                                        BATCHES, True),
    "after the last play_match returned": ("play.match", "play_match", "after", BATCHES, True),
    "while the last SGF is written": ("play.arena.report", "_write_atomic", "before", GAMES, True),
    "after the last batch is counted": ("play.arena.loop", "_settle", "after", BATCHES, True),
    "while the report is said": ("play.arena.report", "report_lines", "before", 1, True),
    "while the json is written": ("play.arena.report", "_write_atomic", "before", GAMES + 1,
                                  True),
    "while the ratings row is appended": ("rundata.ratings_table", "append_result", "before",
                                          1, True),
    "while the engines are ended": ("play.players", "UctPlayer.close", "before", 1, True),
    "while the sides are made": ("play.arena.sides", "make_arena_side", "before", 2, False),
}


def argv(tmp_path):
    return ["arena", "random", "mcts:50", "--games", str(GAMES), "--games-at-once",
            str(AT_ONCE), "--seed", "5", "--json", str(tmp_path / "m.json"),
            "--sgf-dir", str(tmp_path / "sgf"), "--table", str(tmp_path / "t.jsonl")]


def check_outcome(tmp_path, err):
    """The JSON's games (0 without one): its count is the SGFs kept and the table's, no
    temporary file anywhere, no traceback."""
    assert "Traceback" not in err, err
    left = [name for folder, _, names in os.walk(tmp_path) for name in names
            if name.startswith(".tmp-")]
    assert left == []
    sgfs = sorted(os.listdir(tmp_path / "sgf")) if (tmp_path / "sgf").is_dir() else []
    if not (tmp_path / "m.json").exists():
        assert sgfs == [] and not (tmp_path / "t.jsonl").exists()
        return 0
    data = json.loads((tmp_path / "m.json").read_text())
    assert len(sgfs) == data["games"]
    assert [int(name[-8:-4]) for name in sgfs] == list(range(data["games"]))
    rows = list(read_table(tmp_path / "t.jsonl")) if data["games"] else []
    assert sum(r["wins_a"] + r["wins_b"] + r["draws"] for r in rows) == data["games"]
    return data["games"]


@pytest.mark.parametrize("times", [1, 2], ids=["once", "twice"])
@pytest.mark.parametrize("point", list(POINTS))
def test_a_real_match_interrupted_at_any_point_keeps_its_finished_games(tmp_path, point, times):
    module, name, when, n, whole = POINTS[point]
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    proc = subprocess.run([sys.executable, str(driver), module, name, when, str(n), str(times),
                           *argv(tmp_path)], capture_output=True, text=True, cwd=ROOT,
                          timeout=600)
    assert proc.returncode == 130, proc.stderr
    games = check_outcome(tmp_path, proc.stderr)
    if whole:                      # the last game was over: not one of the twelve is lost
        assert games == GAMES
    if point == "while the sides are made":
        assert proc.stderr.strip() == "fastgo arena: interrupted before the match started"
    elif point in ("while the engines are ended", "while the ratings row is appended",
                   "while the json is written", "while the report is said"):
        assert proc.stderr.strip() == (f"fastgo arena: interrupted after {GAMES} games "
                                       "(all reported)")
        assert not json.loads((tmp_path / "m.json").read_text())["interrupted"]
    else:
        assert proc.stderr.strip() == f"fastgo arena: interrupted after {games} games"
        assert json.loads((tmp_path / "m.json").read_text())["interrupted"]


def test_a_signal_from_outside_after_the_first_batch(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "fastgo_cli.main", *argv(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert proc.stdout.readline().startswith("fastgo arena:")
        assert proc.stdout.readline().strip().startswith(f"{AT_ONCE} games")
        proc.send_signal(signal.SIGINT)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert AT_ONCE <= check_outcome(tmp_path, err) <= GAMES
