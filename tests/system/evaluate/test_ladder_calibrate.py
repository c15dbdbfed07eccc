"""`fastgo ladder` and `fastgo ladder calibrate` as a user runs them: the rungs and links of a
table, the least certain link played and each finished game added, and the command stopped at
any moment (Ctrl-C, SIGTERM, a kill) with every finished game kept and the table whole. The
players are random and pure MCTS at a few playouts, so that games take milliseconds."""
import os
import random
import signal

import pytest

from evaluation.calibration import direct_games, ladder_view, next_link
from fastgo_cli.main import main
from rundata.calibration_table import add_rows, read_calibration

# a made-up table: mcts:2 < mcts:6 < mcts:24 (and random below), the stand-in above them all
SEED_ROWS = [("random", "mcts:2", 3, 13), ("mcts:2", "mcts:6", 5, 11), ("mcts:6", "mcts:24", 4, 12),
             ("mcts:24", "gnugo:10", 0, 4)]


def seeded_table(path, stand_in=True):
    """The made-up table at `path`; without `stand_in`, its rows without gnugo:10 (whose games
    take seconds: the calibrations played here keep to the fast players)."""
    add_rows(path, [{"a": a, "b": b, "wins_a": wa, "wins_b": wb, "draws": 0}
                    for a, b, wa, wb in SEED_ROWS if stand_in or b != "gnugo:10"])
    return path


def test_fastgo_ladder_prints_each_rung_and_the_games_of_each_link(tmp_path, capsys,
                                                                   monkeypatch):
    from play import specs

    monkeypatch.setattr(specs, "missing", lambda spec: None)     # every rung plays here
    table = seeded_table(tmp_path / "calibration.jsonl")
    assert main(["ladder", "--table", str(table)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert "52 games, 5 rungs" in lines[0] and "gnugo:10 = 1800" in lines[0]
    names = [line.split()[0] for line in lines[2:7]]
    assert names == ["random", "mcts:2", "mcts:6", "mcts:24", "gnugo:10"]
    # mcts:6's line: its rating, then its link to mcts:24: 4-12-0, 16 games, score 0.25
    six = lines[4].split()
    assert six[3:6] == ["4-12-0", "16", "0.25"] and float(six[1]) < 1800
    assert "gnugo:10" in lines[6] and "1800" in lines[6]
    # a rung this machine cannot play is rated below the links, named with what it lacks
    monkeypatch.setattr(specs, "missing", lambda spec: specs.Missing(
        "GNU Go", "not installed", "apt-get install gnugo") if spec.kind == "gnugo" else None)
    assert main(["ladder", "--table", str(table)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines[2:6]] == ["random", "mcts:2", "mcts:6", "mcts:24"]
    assert lines[6] == "not played here (no GNU Go (add it: apt-get install gnugo)):"
    assert lines[7].split()[:2] == ["gnugo:10", "1800"]


def test_the_least_certain_link_comes_first_and_a_new_rung_meets_the_middle():
    rows = [{"a": a, "b": b, "wins_a": wa, "wins_b": wb, "draws": 0} for a, b, wa, wb in SEED_ROWS]
    players = ["random", "mcts:2", "mcts:6", "mcts:24", "gnugo:10"]
    chosen = next_link(rows, players, target=100)
    assert (chosen.low, chosen.high, chosen.games) == ("mcts:24", "gnugo:10", 4)
    assert next_link(rows, players, target=5).games == 4
    assert next_link(rows, players, target=4) is None           # every link has 4 games
    # a player the table does not rate is linked only when asked for (a rung of one's own)
    assert next_link(rows, players + ["mcts:50"], target=5) is not None
    assert "mcts:50" not in {next_link(rows, players + ["mcts:50"], target=100).low,
                             next_link(rows, players + ["mcts:50"], target=100).high}
    own = next_link(rows, players + ["mcts:50"], target=100, only="mcts:50")
    assert (own.low, own.games) == ("mcts:50", 0) and own.high == ladder_view(rows).order[2][0]
    near = next_link(rows, players + ["mcts:50"], target=100, only="mcts:50", near="mcts:24")
    assert (near.low, near.high) == ("mcts:50", "mcts:24")
    # once rated, its neighbours by the fit: it beat mcts:24 8-0, so it sits between mcts:24
    # and gnugo:10 (which won 4-0 against mcts:24), and the link it has not played comes next
    rows.append({"a": "mcts:50", "b": "mcts:24", "wins_a": 8, "wins_b": 0, "draws": 0})
    after = next_link(rows, players + ["mcts:50"], target=100, only="mcts:50", near="mcts:24")
    assert {after.low, after.high} == {"mcts:50", "gnugo:10"} and after.games == 0


def calibrate(fastgo, table, log_path):
    return fastgo("ladder", "calibrate", "--table", table, "--minutes", "2", "--games-at-once", "4",
                  "--target", "1000", log_path=log_path)


def test_calibrate_plays_the_links_and_adds_each_game(tmp_path, fastgo, stop):
    table = seeded_table(tmp_path / "calibration.jsonl", stand_in=False)
    before = sum(r["games"] for r in read_calibration(table))
    proc = fastgo("ladder", "calibrate", "--table", table, "--minutes", "0.05", "--games-at-once", "4",
                  "--target", "1000", "--seed", "7", "--exclude", "random")
    out, _ = proc.communicate(timeout=60)
    text = out.decode()
    assert proc.returncode == 0, text
    rows = read_calibration(table)
    added = [r for r in rows if r.get("source") == "ladder calibrate"]
    assert added and all(r["games"] == 1 and r["seed"] == 7 for r in added)
    assert f"{len(added)} games added" in text
    assert sum(r["games"] for r in rows) == before + len(added)
    assert {r["a"] for r in added} | {r["b"] for r in added} <= {"mcts:2", "mcts:6", "mcts:24"}
    # colours alternate within a link: game numbers run on from the link's games so far
    pairs = {}
    for r in added:
        pairs.setdefault((r["a"], r["b"]), []).append((r["game"], r["a_black"]))
    for games in pairs.values():
        assert all(black == (number % 2 == 0) for number, black in games)


@pytest.mark.parametrize("how", ["SIGINT", "SIGTERM", "SIGKILL"])
def test_calibrate_stopped_at_any_moment_keeps_every_finished_game(tmp_path, fastgo, stop,
                                                                   wait_for, how):
    rng = random.Random(how)
    table = seeded_table(tmp_path / "calibration.jsonl", stand_in=False)
    seeded = len(read_calibration(table))
    log = tmp_path / "calibrate.log"
    proc = calibrate(fastgo, table, log_path=log)
    try:
        # a moment somewhere after its first few games
        want = seeded + rng.randint(1, 12)
        wait_for(lambda: len(read_calibration(table)) >= want, 60, what="games added")
        proc.send_signal(getattr(signal, how))
        code = proc.wait(timeout=30)
    finally:
        stop(proc)
    text = log.read_text()
    rows = read_calibration(table)
    assert not rows.skipped and "Traceback" not in text             # whole, no damaged line
    leftover = [f for f in os.listdir(tmp_path) if f.startswith(".")]
    if how == "SIGKILL":      # a temporary file the kill left is removed by the next addition
        add_rows(table, [{"a": "mcts:2", "b": "mcts:6", "wins_a": 1, "wins_b": 0, "draws": 0}])
        assert [f for f in os.listdir(tmp_path) if f.startswith(".")] == []
        rows = read_calibration(table)[:-1]
    else:
        assert leftover == []                                       # no temporary file
    added = len(rows) - seeded
    assert added >= want - seeded
    if how == "SIGKILL":
        assert code == -signal.SIGKILL
    else:
        assert code == 130
        # every game it says it finished is in the table, and no other
        assert f"interrupted; {added} finished games added" in text
    # every row is one whole game of two of the table's players
    for r in rows[seeded:]:
        assert r["games"] == 1 and r["source"] == "ladder calibrate"
    assert {p for pair in direct_games(rows[seeded:]) for p in pair} <= {
        "random", "mcts:2", "mcts:6", "mcts:24"}


def test_calibrate_refuses_what_it_cannot_do_in_one_line(tmp_path, capsys):
    table = seeded_table(tmp_path / "calibration.jsonl")
    for argv, said in [
            (["--minutes", "0"], "--minutes must be in"),
            (["--minutes", "1", "--games-at-once", "0"], "--games-at-once must be in 1..256"),
            (["--minutes", "1", "--rung", "ref:no-such-rung"], "unknown reference player ref:no-such"),
            (["--minutes", "1", "--rung", "nonsense:::"], "--rung"),
            (["--minutes", "1", "--rung", "some.ckpt"], "a checkpoint file is no rung")]:
        assert main(["ladder", "calibrate", "--table", str(table), *argv]) == 2
        err = capsys.readouterr().err
        assert said in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    os.remove(table)
    os.symlink("/etc/hostname", table)
    assert main(["ladder", "--table", str(table)]) == 2
    assert "symbolic link" in capsys.readouterr().err
