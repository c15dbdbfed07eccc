"""GTP time control: time_settings / time_left / kgs-time_settings and --move-seconds bound a
search that could otherwise run far longer; kgs-genmove_cleanup does not pass while points are
open. Time is a fake clock the player reads (STEP_S per reading), never the wall clock."""
import pytest

from play.gtp.engine import GtpEngine
from play.players import Player
from play.search_player import SearchPlayer

STEP_S = 0.05              # fake seconds that pass between two readings of the clock


class FakeClock:
    """A monotonic clock that moves STEP_S each time it is read."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        self.now += STEP_S
        return self.now


def answer(engine, line):
    text = engine.handle_line(line)
    assert text is not None
    return text.strip()


def timed_genmove(engine, color="b"):
    """(reply, fake seconds the genmove spent)."""
    clock = engine.player.clock
    start = clock.now
    reply = answer(engine, f"genmove {color}")
    return reply, clock.now - start


def slow_player():
    # the built-in uniform evaluator and a visit budget that would take minutes
    return SearchPlayer("uniform", 50_000_000, seed=1, clock=FakeClock())


def test_byo_yomi_clock_bounds_the_search():
    engine = GtpEngine(slow_player(), size=9)
    assert answer(engine, "time_settings 0 1 1") == "="
    assert answer(engine, "time_left b 1 1") == "="
    reply, took = timed_genmove(engine)
    assert reply.startswith("= ") and reply != "= pass"
    # one byo-yomi stone of 1 s: 0.8 * 1 - 0.2 = 0.6 s, overrun by a reading or two
    assert 0.6 <= took <= 0.6 + 3 * STEP_S
    assert engine.player.search.root_visits(0).sum() < 50_000_000


def test_main_time_is_spread_over_the_game():
    engine = GtpEngine(slow_player(), size=9)
    answer(engine, "time_settings 30 0 0")
    answer(engine, "time_left b 30 0")
    reply, took = timed_genmove(engine)
    # 30 s over max(10, 81 // 3 = 27) moves, 0.8 of it less 0.2 s: 0.69 s
    assert reply.startswith("= ") and took <= 0.8 * 30 / 27 - 0.2 + 3 * STEP_S


@pytest.mark.parametrize("line, expected", [
    ("kgs-time_settings none", None),
    ("kgs-time_settings absolute 300", (300, 0, 0)),
    ("kgs-time_settings byoyomi 600 30 5", (600, 30, 1)),
    ("kgs-time_settings canadian 600 300 25", (600, 300, 25)),
])
def test_kgs_time_settings(line, expected):
    engine = GtpEngine(slow_player(), size=9)
    assert answer(engine, line) == "="
    assert engine.clock.settings == expected


@pytest.mark.parametrize("line", ["kgs-time_settings", "kgs-time_settings fischer 1 2",
                                  "kgs-time_settings byoyomi 1 2", "kgs-time_settings absolute -5"])
def test_bad_kgs_time_settings(line):
    engine = GtpEngine(slow_player(), size=9)
    assert answer(engine, line).startswith("?")


def test_fixed_seconds_per_move():
    engine = GtpEngine(slow_player(), size=9, move_seconds=0.3)
    reply, took = timed_genmove(engine)
    assert reply.startswith("= ") and 0.3 <= took <= 0.3 + 3 * STEP_S


class Passer(Player):
    name = "passer"

    def genmove(self, game):
        return game.board.pass_move


def test_cleanup_genmove_does_not_pass_while_points_are_open():
    engine = GtpEngine(Passer(), size=5)
    assert answer(engine, "genmove b") == "= pass"
    assert answer(engine, "kgs-genmove_cleanup w") not in ("= pass", "= resign")
    assert "kgs-genmove_cleanup" in answer(engine, "list_commands")


@pytest.mark.parametrize("settings, left, move_seconds, expected", [
    # main time 30 s over max(10, 81 // 3 = 27) moves: 30 / 27, 0.8 of it less 0.2 s
    ((30, 0, 0), None, None, 0.8 * 30 / 27 - 0.2),
    # in byo-yomi: 10 s left for 5 stones = 2 s a stone -> 0.8 * 2 - 0.2
    ((0, 10, 5), (10, 5), None, 1.4),
    # main time nearly gone (1 s over 27 moves): the floor of 0.05 s
    ((1, 0, 0), (1, 0), None, 0.05),
    # main time 60 s plus byo-yomi 30 s / 10 stones: 60 / 27 + 0.8 * 3, then 0.8 * that - 0.2
    ((60, 30, 10), None, None, 0.8 * (60 / 27 + 0.8 * 3) - 0.2),
    # no clock: the fixed limit alone; a clock: the smaller of the two
    (None, None, 0.3, 0.3),
    ((0, 10, 5), (10, 5), 0.3, 0.3),
    (None, None, None, None),
])
def test_move_budget_arithmetic(settings, left, move_seconds, expected):
    from fastgo.gtp import BLACK
    from play.gtp.clock import GtpClock

    clock = GtpClock(move_seconds)
    clock.settings = settings
    if left is not None:
        clock.left[BLACK] = left
    budget = clock.move_budget(BLACK, empties=81)
    assert budget == (None if expected is None else pytest.approx(expected))
