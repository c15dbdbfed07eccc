"""A real arena match (random against random on 5x5, 6 games, 2 at once) interrupted by a real
SIGINT or SIGTERM at many points, inside play_match and outside it: right after a batch is
returned, while its SGFs are written, while the --json file and the ratings row are written, and
twice in a row. Whatever the point, every game counted is in the JSON, in the table and has its
SGF, no temporary file is left, and the games over before the signal are among them."""
import json
import os
import signal

import pytest

import play.arena.loop
import play.arena.report
import play.match
from fastgo_cli.main import main
from rundata.ratings_table import read_table

GAMES, AT_ONCE = 6, 2


@pytest.fixture(autouse=True)
def own_handlers():
    """The arena ignores SIGINT and SIGTERM once interrupted (a second signal is quiet) and
    sets SIGTERM's handler: each test gets this process's handlers back."""
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)


def arena(tmp_path):
    argv = ["arena", "random", "random", "--games", str(GAMES), "--games-at-once", str(AT_ONCE),
            "--size", "5", "--seed", "3", "--json", str(tmp_path / "m.json"),
            "--sgf-dir", str(tmp_path / "sgf"), "--table", str(tmp_path / "t.jsonl")]
    return main(argv)


def outcome(tmp_path):
    data = json.loads((tmp_path / "m.json").read_text())
    rows = list(read_table(tmp_path / "t.jsonl"))
    files = sorted(os.listdir(tmp_path / "sgf"))
    table = sum(r["wins_a"] + r["wins_b"] + r["draws"] for r in rows)
    return data, table, files


def signal_after(calls, sig, after=1, times=1):
    """A wrapper of a function that sends `sig` to this process `times` times once it has been
    called `after` times (the call itself completes)."""
    def wrap(fn):
        def wrapped(*args, **kwargs):
            calls.append(fn.__name__)
            result = fn(*args, **kwargs)
            if len(calls) == after:
                for _ in range(times):
                    signal.raise_signal(sig)
            return result
        return wrapped
    return wrap


def signal_before(calls, sig, after=1, times=1):
    """A wrapper of a function that sends `sig` to this process `times` times as it is called
    the `after`-th time, before it runs: the moment between play_match's return and the batch
    being counted, when the wrapped function is the arena's _settle."""
    def wrap(fn):
        def wrapped(*args, **kwargs):
            calls.append(fn.__name__)
            if len(calls) == after:
                for _ in range(times):
                    signal.raise_signal(sig)
            return fn(*args, **kwargs)
        return wrapped
    return wrap


POINTS = {
    # where the signal comes: (object, attribute, the call after which, least games counted)
    "after a batch is returned": (play.arena.loop, "_settle", 1, AT_ONCE),
    "after the second batch is returned": (play.arena.loop, "_settle", 2, 2 * AT_ONCE),
    "inside play_match, at its end": (play.match, "play_match", 2, AT_ONCE),
    "while SGFs are written": (play.arena.report, "_write_atomic", 1, AT_ONCE),
    "while the last SGF of a batch is written": (play.arena.report, "_write_atomic", 2, AT_ONCE),
    "while the json file is written": (play.arena.report, "bounded_json", None, GAMES),
}


@pytest.mark.parametrize("times", [1, 2], ids=["once", "twice"])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=lambda s: s.name)
@pytest.mark.parametrize("point", sorted(POINTS))
def test_an_interrupt_at_any_point_keeps_every_finished_game(tmp_path, monkeypatch, capsys,
                                                              point, sig, times):
    owner, name, after, least = POINTS[point]
    calls = []
    if name == "bounded_json":                     # the report's own write: its dumps
        real = play.arena.report.bounded_json.dumps

        class Dumps:
            @staticmethod
            def dumps(*args, **kwargs):
                for _ in range(times):
                    signal.raise_signal(sig)
                return real(*args, **kwargs)
        monkeypatch.setattr(play.arena.report, "bounded_json", Dumps)
    elif name == "_settle":
        monkeypatch.setattr(owner, name, signal_before(calls, sig, after, times)(getattr(owner, name)))
    else:
        monkeypatch.setattr(owner, name, signal_after(calls, sig, after, times)(getattr(owner, name)))
    status = arena(tmp_path)
    err = capsys.readouterr().err
    assert status == 130 and "Traceback" not in err
    data, table, files = outcome(tmp_path)
    assert least <= data["games"] <= GAMES and data["interrupted"] == (name != "bounded_json")
    assert table == data["games"] and len(files) == data["games"]
    assert all(f.startswith("arena-") and f.endswith(".sgf") for f in files)   # no temporary
    assert [int(f[-8:-4]) for f in files] == list(range(data["games"]))      # numbered from 0


def test_an_uninterrupted_match_reports_every_game(tmp_path, capsys):
    assert arena(tmp_path) == 0
    data, table, files = outcome(tmp_path)
    assert data["games"] == table == len(files) == GAMES and not data["interrupted"]
