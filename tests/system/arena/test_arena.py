"""The arena: random against mcts:100 on 9x9 is lopsided with an interval that says so, in
play_match and through `fastgo arena` (printed counts = --json = the ratings table row); the SPRT
stops early and names the hypothesis; SGFs; a checkpoint player; GTP engines that fail lose their
games and the match goes on; bad arguments are one line on stderr and exit status 2."""
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fastgo.sgf import read_sgf_file
from fastgo_cli.main import main
from play.match import play_match
from play.specs import make_player
from rundata.match_stats import elo_from_score, sprt_bounds, sprt_decision, sprt_llr, wilson_interval
from rundata.ratings_table import read_table

FAKE = str(Path(__file__).resolve().parents[2] / "fake_engines" / "fake_gtp.py")
ROOT = Path(__file__).resolve().parents[3]


def arena(capsys, *argv):
    """`fastgo arena ARGV` in process: (exit status, stdout, stderr)."""
    try:
        code = main(["arena", *argv])
    except SystemExit as exc:            # argparse's own errors
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def printed_counts(out):
    a = re.search(r"^A (\S+): (\d+) wins \((\d+) of (\d+) as Black, (\d+) of (\d+) as White\)",
                  out, re.M)
    b = re.search(r"^B (\S+): (\d+) wins \((\d+) of (\d+) as Black, (\d+) of (\d+) as White\)",
                  out, re.M)
    games = int(re.search(r"^games: (\d+)$", out, re.M).group(1))
    rate = re.search(r"^win rate of A: ([\d.]+) \(95% interval ([\d.]+) \.\. ([\d.]+)\)", out, re.M)
    elo = re.search(r"^Elo of A - B: ([-+]\d+) \(95% interval ([-+]\d+) \.\. ([-+]\d+)\)", out, re.M)
    return games, a, b, rate, elo


def test_random_against_mcts_is_lopsided():
    result = play_match(make_player("random", seed=1), make_player("mcts:100", seed=2), 20, size=9)
    assert result.games == 20 and result.games_a_black == 10
    assert result.wins_b >= 18
    low, high = result.wilson()
    assert high < 0.5                                # the interval excludes an even match
    elo, elo_low, elo_high = result.elo()
    assert elo_high < 0 and elo <= elo_high
    assert result.wins_a_black + result.wins_a_white == result.wins_a
    assert result.wins_b_black + result.wins_b_white == result.wins_b
    assert result.wins_b_black <= 10 and result.wins_b_white <= 10


def test_interval_and_sprt_arithmetic():
    low, high = wilson_interval(10, 20)
    assert low < 0.5 < high and low == pytest.approx(1 - high)
    assert elo_from_score(0.5) == 0 and elo_from_score(0.76) == pytest.approx(200, abs=1)
    lower, upper = sprt_bounds(0.05, 0.05)
    assert upper == pytest.approx(math.log(19)) and lower == pytest.approx(-math.log(19))
    assert sprt_llr(0, 0, 0, 0, 35) == 0
    assert sprt_llr(10, 0, 0, 0, 35) > 0 > sprt_llr(0, 10, 0, 0, 35)
    assert sprt_llr(3, 3, 4, 0, 35) == pytest.approx(sprt_llr(5, 5, 0, 0, 35))
    assert sprt_decision(3.0) == "H1" and sprt_decision(-3.0) == "H0" and sprt_decision(0.1) is None


def test_cli_counts_json_table_and_sgf(tmp_path, capsys):
    out_json, table, sgf_dir = tmp_path / "r.json", tmp_path / "ratings.jsonl", tmp_path / "sgf"
    code, out, err = arena(capsys, "random", "mcts:100", "--games", "20", "--seed", "1",
                           "--json", str(out_json), "--table", str(table),
                           "--sgf-dir", str(sgf_dir))
    assert code == 0, err
    games, a, b, rate, elo = printed_counts(out)
    data = json.loads(out_json.read_text())
    assert games == data["games"] == 20
    assert a.group(1) == data["a"] == "random" and b.group(1) == data["b"] == "mcts:100"
    assert int(a.group(2)) == data["wins_a"] and int(b.group(2)) == data["wins_b"]
    assert data["wins_a"] + data["wins_b"] + data["draws"] == 20
    assert data["wins_b"] >= 18 and data["win_rate_ci"][1] < 0.5 and data["elo_ci"][1] < 0
    assert float(rate.group(1)) == pytest.approx(data["win_rate_a"], abs=5e-4)
    assert float(rate.group(3)) == pytest.approx(data["win_rate_ci"][1], abs=5e-4)
    assert int(elo.group(3)) == round(data["elo_ci"][1])
    assert int(b.group(3)) == data["wins_b_black"] and int(b.group(5)) == data["wins_b_white"]
    assert int(a.group(4)) == int(a.group(6)) == 10            # colors alternate
    rows = read_table(table)
    assert len(rows) == 1
    assert {k: rows[0][k] for k in ("a", "b", "wins_a", "wins_b", "draws", "games", "size")} == \
        {"a": "random", "b": "mcts:100", "wins_a": data["wins_a"], "wins_b": data["wins_b"],
         "draws": data["draws"], "games": 20, "size": 9}
    files = sorted(sgf_dir.glob("arena-*.sgf"))
    assert len(files) == 20 and not list(sgf_dir.glob(".tmp-*"))
    first, second = read_sgf_file(files[0]), read_sgf_file(files[1])
    assert (first.black_player, first.white_player) == ("random", "mcts:100")
    assert (second.black_player, second.white_player) == ("mcts:100", "random")
    assert first.size == 9 and first.komi == 7.5 and first.result[:1] in "BW0"
    # a second match appends a line and leaves the first one as it was
    before = table.read_bytes()
    code, out, err = arena(capsys, "mcts:100", "random", "--games", "2", "--table", str(table))
    assert code == 0 and table.read_bytes().startswith(before) and len(read_table(table)) == 2


@pytest.mark.parametrize("a, b, accepted", [("random", "mcts:100", "H0"),
                                            ("mcts:100", "random", "H1")])
def test_sprt_stops_early(tmp_path, capsys, a, b, accepted):
    out_json = tmp_path / "r.json"
    code, out, err = arena(capsys, a, b, "--games", "200", "--sprt", "0,200", "--games-at-once", "4",
                           "--seed", "3", "--json", str(out_json), "--table",
                           str(tmp_path / "t.jsonl"))
    assert code == 0, err
    data = json.loads(out_json.read_text())
    assert data["games"] < 40 and data["games"] % 4 == 0          # stopped after a chunk
    assert data["sprt"]["accepted"] == accepted
    assert f"{accepted} accepted" in out
    llr = data["sprt"]["llr"]
    assert (llr <= data["sprt"]["lower"]) if accepted == "H0" else (llr >= data["sprt"]["upper"])
    assert read_table(tmp_path / "t.jsonl")[0]["sprt"] == [0.0, 200.0, accepted]


def test_checkpoint_player(tmp_path, capsys):
    path = tiny_checkpoint(tmp_path)
    out_json = tmp_path / "r.json"
    code, out, err = arena(capsys, str(path), "random", "--games", "4", "--visits", "8",
                           "--json", str(out_json), "--table", str(tmp_path / "t.jsonl"),
                           "--seed", "2")
    assert code == 0, err
    data = json.loads(out_json.read_text())
    assert data["games"] == 4 and data["size"] == 7 and data["visits"] == 8
    assert data["a"] == f"{os.path.normpath(str(path))}#3@v8"
    assert read_table(tmp_path / "t.jsonl")[0]["visits"] == 8
    code, out, err = arena(capsys, str(path), "random", "--games", "2", "--size", "9",
                           "--no-table")
    assert code == 2 and "plays 7x7 only" in err and len(err.strip().splitlines()) == 1


def test_failing_engine_loses_and_the_arena_goes_on(tmp_path, capsys):
    out_json = tmp_path / "r.json"
    code, out, err = arena(capsys, f"gtp:{sys.executable} {FAKE} crash", "random", "--games", "3",
                           "--json", str(out_json), "--table", str(tmp_path / "t.jsonl"),
                           "--sgf-dir", str(tmp_path / "sgf"))
    assert code == 0, err
    data = json.loads(out_json.read_text())
    assert data["games"] == 3 and data["wins_b"] == 3 and len(data["forfeits"]) == 3
    assert all(f["reason"] == "engine crashed (exit code 3): fake engine: fatal error, giving up"
               for f in data["forfeits"])
    assert "lost 3 game(s) by fault; the match went on" in out
    assert "engine restarts" in out
    assert read_table(tmp_path / "t.jsonl")[0]["forfeits"] == 3
    records = [read_sgf_file(f) for f in sorted((tmp_path / "sgf").glob("*.sgf"))]
    assert [r.result for r in records] == ["W+F", "B+F", "W+F"]     # the engine was Black first
    assert all("forfeits: engine crashed (exit code 3)" in r.comments[0] for r in records)


@pytest.mark.parametrize("argv, message", [
    (["random", "mcts:10", "--games", "0"], "--games must be in 1.."),
    (["random", "mcts:10", "--games", "abc"], "--games: invalid int value"),
    (["random", "mcts:0"], "playouts must be an integer"),
    (["random", "foo:3"], "unknown player spec 'foo:3'"),
    (["random", "missing.ckpt"], "B 'missing.ckpt': no such checkpoint file"),
    (["random", "mcts:10", "--sprt", "35,0"], "ELO0 must be below ELO1"),
    (["random", "mcts:10", "--sprt", "x"], "expected ELO0,ELO1"),
    (["random", "mcts:10", "--size", "40"], "--size 40 is outside 2..25"),
    (["random", "mcts:10", "--json", "/nonexistent/dir/r.json"], "does not exist"),
    (["gtp:/nonexistent/engine --gtp", "random"], "A: cannot start GTP engine"),
    ([f"gtp:{sys.executable} {FAKE} dead", "random"], "does not start a 9x9 game"),
    (["gtp:", "random"], "has no command"),
    (['gtp:""', "random"], "has no command"),          # was: cannot start /usr/games/
    (["gtp:'  ' --level 1", "random"], "has no command"),
])
def test_bad_arguments(tmp_path, capsys, argv, message):
    code, out, err = arena(capsys, *argv, "--table", str(tmp_path / "t.jsonl"))
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith("fastgo arena: ")
    assert not (tmp_path / "t.jsonl").exists()


def test_not_a_checkpoint_in_a_subprocess(tmp_path):
    bogus = tmp_path / "notes.ckpt"
    bogus.write_text("hello, not a checkpoint\n")
    proc = subprocess.run([sys.executable, "-m", "fastgo_cli.main", "arena", str(bogus), "random",
                           "--games", "2", "--table", str(tmp_path / "t.jsonl")],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 2
    assert "not a fastgo checkpoint" in proc.stderr and str(bogus) in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


@pytest.mark.gnugo
def test_gnugo_through_the_cli(tmp_path, capsys, gnugo_path):
    out_json = tmp_path / "r.json"
    code, out, err = arena(capsys, "mcts:100", f"gtp:{gnugo_path} --mode gtp --level 1",
                           "--games", "2", "--size", "9", "--json", str(out_json),
                           "--table", str(tmp_path / "t.jsonl"), "--seed", "5")
    assert code == 0, err
    data = json.loads(out_json.read_text())
    assert data["games"] == 2 and data["forfeits"] == []
    assert data["b"] == f"gtp:{gnugo_path} --mode gtp --level 1"
    assert read_table(tmp_path / "t.jsonl")[0]["games"] == 2


def test_interrupt_records_finished_chunks(tmp_path):
    import signal

    table = tmp_path / "t.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "fastgo_cli.main", "arena", "mcts:2000",
                             "random", "--games", "400", "--games-at-once", "2", "--table", str(table)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        header = proc.stdout.readline()
        progress = proc.stdout.readline()            # the first chunk is finished
        assert header.startswith("fastgo arena:") and progress.strip().startswith("2 games")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130
    assert "interrupted after" in err and "Traceback" not in err
    row = read_table(table)[0]
    assert row["interrupted"] is True and row["games"] >= 2


@pytest.fixture
def own_handlers():
    """An interrupted match leaves SIGINT and SIGTERM ignored in its process on its way out (a
    command that ends): this process's handlers come back after the test, so a later test (or
    a child it starts) gets its SIGINT."""
    import signal

    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)


def test_an_interrupted_batch_keeps_its_finished_games(tmp_path, capsys, monkeypatch,
                                                       own_handlers):
    # Ctrl-C in the middle of a batch of games played at once: the games already over are
    # counted, written as SGFs under their own numbers and appended; the others are not
    import play.match

    real = play.match.play_match
    rounds = []

    def interrupted_at_round_18(*args, **kwargs):
        def stop():
            rounds.append(1)
            if len(rounds) == 18:
                raise KeyboardInterrupt
            return False
        return real(*args, **kwargs, stop=stop)

    monkeypatch.setattr(play.match, "play_match", interrupted_at_round_18)
    sgf_dir, out_json, table = tmp_path / "sgf", tmp_path / "r.json", tmp_path / "t.jsonl"
    code, out, err = arena(capsys, "random", "mcts:8", "--games", "12", "--games-at-once", "12",
                           "--size", "5", "--seed", "3", "--sgf-dir", str(sgf_dir),
                           "--json", str(out_json), "--table", str(table))
    assert code == 130 and "Traceback" not in err
    data = json.loads(out_json.read_text())
    games = data["games"]
    assert 0 < games < 12 and data["interrupted"] is True
    assert f"interrupted after {games} games" in err
    assert printed_counts(out)[0] == games == read_table(table)[0]["games"]
    files = sorted(sgf_dir.glob("arena-*.sgf"))
    assert len(files) == games
    wins_a = 0
    for path in files:
        number = int(path.stem.rsplit("-", 1)[1])
        record = read_sgf_file(path)
        a_black = record.black_player == "random"
        assert a_black == (number % 2 == 0)              # colours alternate by the game's number
        assert record.result[:1] in ("B", "W")
        wins_a += (record.result[:1] == "B") == a_black
    assert wins_a == data["wins_a"] and games - wins_a == data["wins_b"] + data["draws"]


def tiny_checkpoint(tmp_path):
    """A 7x7 b1c8 network at step 3, as a checkpoint file."""
    from network.checkpoint import save_checkpoint
    from network.model import build_model
    from rundata.config import ModelConfig

    path = tmp_path / "net.ckpt"
    save_checkpoint(path, build_model(ModelConfig(board_size=7, blocks=1, channels=8), seed=1),
                    step=3)
    return path


def test_equal_time_gives_engines_the_clock_and_networks_their_visits(tmp_path, capsys):
    """--move-seconds: the checkpoint's visits come from its own measured speed (so they are not
    the default --visits) and the table says the seconds; a GTP engine gets time_settings and
    time_left with the seconds a move (the 'clock' engine loses every game by a non-move
    otherwise); the report gives each side's time and visits per move."""
    path = tiny_checkpoint(tmp_path)
    out_json = tmp_path / "r.json"
    code, out, err = arena(capsys, str(path), f"gtp:{sys.executable} {FAKE} clock 1",
                           "--games", "2", "--move-seconds", "0.05", "--json", str(out_json),
                           "--table", str(tmp_path / "t.jsonl"), "--seed", "2")
    assert code == 0, err
    data = json.loads(out_json.read_text())
    assert data["forfeits"] == [] and data["wins_a"] == 2     # the engine only passes
    assert data["move_seconds"] == 0.05 and data["a"].endswith("#3@0.05s")
    measured = re.search(r"A searches ([\d,]+) visits/s on one thread: ([\d,]+) visits a move",
                         out)
    rate, visits = (int(g.replace(",", "")) for g in measured.groups())
    assert visits == max(1, int(0.05 * rate)) or abs(visits - 0.05 * rate) <= 1
    assert data["visits_per_move_a"] == visits
    assert data["visits_per_move_b"] is None and data["seconds_per_move_b"] > 0
    assert re.search(r"^time per move A: [\d.]+ s, [\d,]+ visits$", out, re.M)
    row = read_table(tmp_path / "t.jsonl")[0]
    assert row["move_seconds"] == 0.05 and "visits" not in row


def test_an_engine_that_overruns_its_time_loses(tmp_path, capsys):
    out_json = tmp_path / "r.json"
    code, out, err = arena(capsys, f"gtp:{sys.executable} {FAKE} slow", "random", "--games", "1",
                           "--move-seconds", "0.1", "--json", str(out_json), "--no-table")
    assert code == 0, err
    data = json.loads(out_json.read_text())
    assert data["wins_b"] == 1 and len(data["forfeits"]) == 1
    assert data["forfeits"][0]["reason"].startswith("engine overran its time")
    assert "0.1 s allowed" in data["forfeits"][0]["reason"]


def test_visits_and_seconds_are_one_or_the_other(tmp_path, capsys):
    code, out, err = arena(capsys, "random", "mcts:10", "--visits", "8", "--move-seconds", "1",
                           "--no-table")
    assert code == 2 and "give visits or seconds a move, not both" in err


def test_game_clock_tells_engines_their_time_left_and_spreads_the_networks_time(tmp_path, capsys):
    """--game-seconds: a GTP engine is told `time_settings T 0 0` and, before each genmove, a
    time left that never grows ('gameclock' answers a non-move otherwise and loses); the
    checkpoint's moves are charged to its clock, within T a game; the table says the clock."""
    path = tiny_checkpoint(tmp_path)
    out_json = tmp_path / "r.json"
    code, out, err = arena(capsys, str(path), f"gtp:{sys.executable} {FAKE} gameclock 3",
                           "--games", "2", "--game-seconds", "3", "--json", str(out_json),
                           "--table", str(tmp_path / "t.jsonl"), "--seed", "2")
    assert code == 0, err
    data = json.loads(out_json.read_text())
    assert data["forfeits"] == [] and data["wins_a"] == 2     # the engine only passes
    assert data["game_seconds"] == 3 and data["a"].endswith("#3@3s-game")
    assert re.search(r"A searches [\d,]+ visits/s on one thread$", out, re.M)
    # each of A's moves is charged what its visits take at its speed, all within 3 s a game
    charged = data["clock_per_move_a"]
    assert charged is not None and 0 < charged < 3
    assert data["visits_per_move_a"] >= 1
    assert data["clock_per_move_b"] is not None       # the engine's wall time, charged too
    assert re.search(r"^time per move A: [\d.]+ s, [\d,]+ visits, [\d.]+ s on its game clock$",
                     out, re.M)
    row = read_table(tmp_path / "t.jsonl")[0]
    assert row["game_seconds"] == 3 and "visits" not in row and "move_seconds" not in row


def test_an_engine_past_its_game_clock_loses_on_time(tmp_path, capsys):
    # 'slow' takes 1.6 s a move from its fifth: past 0.5 s + its margin of 1.01 s
    out_json = tmp_path / "r.json"
    code, out, err = arena(capsys, f"gtp:{sys.executable} {FAKE} slow", "random", "--games", "1",
                           "--game-seconds", "0.5", "--json", str(out_json), "--no-table")
    assert code == 0, err
    data = json.loads(out_json.read_text())
    assert data["wins_b"] == 1 and len(data["forfeits"]) == 1
    assert data["forfeits"][0]["reason"].startswith("lost on time")
    assert "0.5 s game clock" in data["forfeits"][0]["reason"]


@pytest.mark.parametrize("argv, message", [
    (("--game-seconds", "10", "--move-seconds", "1"), "give one time control, not both"),
    (("--game-seconds", "10", "--visits", "8"), "give visits or a game clock, not both"),
    (("--game-seconds", "0"), "expected seconds in (0, 86400]"),
    (("--game-seconds", "nan"), "expected seconds in (0, 86400]"),
])
def test_game_clock_arguments(capsys, argv, message):
    code, out, err = arena(capsys, "random", "mcts:10", *argv, "--no-table")
    assert code == 2 and message in err, err


def test_a_reference_player_plays_at_its_own_visits_even_at_equal_time(tmp_path, capsys,
                                                                       monkeypatch,
                                                                       reference_folder):
    """ref:NAME in the arena: the index's visits a move, not --visits, and --move-seconds does
    not retime it (the other network side is); the table names it ref:NAME."""
    from fastgo.reference_players import REFERENCES_ENV

    monkeypatch.setenv(REFERENCES_ENV, str(reference_folder(tmp_path / "refs", [("low", 3)])))
    out_json, table = tmp_path / "r.json", tmp_path / "t.jsonl"
    code, out, err = arena(capsys, "ref:low", "random", "--games", "2", "--visits", "50",
                           "--json", str(out_json), "--table", str(table), "--seed", "4")
    assert code == 0, err
    data = json.loads(out_json.read_text())
    assert data["a"] == "ref:low" and 2 <= data["visits_per_move_a"] <= 3
    (row,) = read_table(table)
    assert (row["a"], row["b"], row["games"]) == ("ref:low", "random", 2) and "visits" not in row
    code, out, err = arena(capsys, "ref:low", "ref:low", "--games", "2", "--move-seconds", "0.05",
                           "--json", str(out_json), "--table", str(table), "--seed", "5")
    assert code == 0, err
    data = json.loads(out_json.read_text())
    assert data["visits_per_move_a"] <= 3 and data["visits_per_move_b"] <= 3
    assert "visits/s on one thread" not in out                    # nothing was timed
    code, out, err = arena(capsys, "ref:nothing", "random", "--games", "2")
    assert code == 2 and "unknown reference player ref:nothing (known: ref:low)" in err
