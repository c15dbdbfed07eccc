"""GtpSide: an external GTP engine as a match side. A fake engine that crashes, answers garbage
or out of protocol, plays an illegal move or hangs loses that game with the reason recorded and
the match goes on (the engine started again); an engine that cannot start is an error. Our own
`fastgo gtp` engine as a side checks that each game's position reaches the engine intact while
games are interleaved; GNU Go plays when installed."""
import sys
import time
from pathlib import Path

import pytest

from fastgo.board import BLACK
from fastgo.player_spec import parse_gtp_spec
from play.gtp.side import GtpEngineError, GtpSide
from play.match import play_match
from play.specs import make_player

FAKE = str(Path(__file__).resolve().parents[2] / "fake_engines" / "fake_gtp.py")
GAMES = 4


def fake(mode, **options):
    return GtpSide([sys.executable, FAKE, mode], name=f"fake-{mode}", **options)


@pytest.mark.parametrize("mode, reason, restarts", [
    ("crash", "engine crashed (exit code 3): fake engine: fatal error, giving up", GAMES - 1),
    ("garbage", "engine answered genmove with 'banana', not a move", 0),
    ("noise", "out of protocol", GAMES - 1),
    ("illegal", "illegal move", 0),
    ("hang", "engine timed out (no answer within 0.3 s)", GAMES - 1),
])
def test_faulty_engine_loses_each_game_and_the_match_goes_on(mode, reason, restarts):
    side = fake(mode, move_timeout=0.3)
    started = time.monotonic()
    try:
        # the engine is A: Black in games 0 and 2, White in 1 and 3
        result = play_match(side, make_player("random", seed=5), GAMES, size=9)
    finally:
        side.close()
    assert time.monotonic() - started < 15
    assert result.games == GAMES and result.wins_b == GAMES and result.wins_a == 0
    assert len(result.forfeits) == GAMES
    assert sorted(f["game"] for f in result.forfeits) == list(range(GAMES))
    for f in result.forfeits:
        assert f["player"] == f"fake-{mode}" and reason in f["reason"]
        assert f["color"] == ("B" if f["game"] % 2 == 0 else "W")
        assert f["move"] >= 5                   # the fake misbehaves from its 4th board move
    assert side.restarts == restarts
    assert len(side.failures) == GAMES
    if mode == "illegal":
        assert all("(occupied)" in f["reason"] for f in result.forfeits)


def test_faults_in_some_games_only_and_as_side_b():
    # a well-behaved (passing) engine as B: no forfeit, B loses on the board, not by fault
    side = fake("pass")
    try:
        result = play_match(make_player("random", seed=1), side, 2, size=5)
    finally:
        side.close()
    assert result.forfeits == [] and result.games == 2
    assert side.restarts == 0 and side.failures == []
    assert side.genmove_command == "genmove"     # the fake does not list kgs-genmove_cleanup


def test_engine_that_cannot_start_is_an_error():
    with pytest.raises(GtpEngineError, match="cannot start GTP engine"):
        GtpSide(["/nonexistent/engine", "--gtp"]).prepare(1, 9, 7.5)
    side = fake("dead")
    with pytest.raises(GtpEngineError, match="does not start a 9x9 game"):
        side.prepare(1, 9, 7.5)
    side.close()


def test_spec_parsing():
    assert parse_gtp_spec('gtp:gnugo --mode gtp --level 1') == ["gnugo", "--mode", "gtp",
                                                                "--level", "1"]
    assert parse_gtp_spec('gtp:"my engine" -x') == ["my engine", "-x"]
    assert GtpSide("gtp:gnugo --mode gtp").name == "gtp:gnugo --mode gtp"
    for bad in ("gtp:", "gtp:   ", 'gtp:"unclosed', "random"):
        with pytest.raises(ValueError):
            parse_gtp_spec(bad)


def test_interleaved_games_reach_the_engine_intact():
    # fastgo's own random engine: any position out of step would show as a refused play or an
    # illegal move, i.e. a forfeit
    side = GtpSide([sys.executable, "-m", "fastgo_cli.main", "gtp", "--player", "random",
                    "--seed", "3"], name="fastgo-gtp")
    try:
        result = play_match(side, make_player("mcts:20", seed=4), 4, size=7, komi=0.5,
                            keep_records=True)
    finally:
        side.close()
    assert result.forfeits == [] and side.restarts == 0
    assert result.games == 4
    for g, game in enumerate(result.records):
        assert game.is_over() and len(game.moves) > 10
        engine_color = BLACK if g % 2 == 0 else 3 - BLACK
        assert any(color == engine_color for color, _ in game.moves)


@pytest.mark.gnugo
def test_gnugo_games_run_through(gnugo_path):
    side = GtpSide([gnugo_path, "--mode", "gtp", "--level", "1"])
    try:
        result = play_match(make_player("random", seed=2), side, 2, size=9, keep_records=True)
    finally:
        side.close()
    assert result.games == 2 and result.forfeits == []
    # with kgs-genmove_cleanup GNU Go captures random's dead stones before passing: it wins
    assert side.genmove_command == "kgs-genmove_cleanup"
    assert result.wins_b == 2
    assert all(game.is_over() for game in result.records)
