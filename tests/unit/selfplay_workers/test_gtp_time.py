"""GTP time control: time_settings / time_left / kgs-time_settings and --seconds bound a search
that could otherwise run far longer; kgs-genmove_cleanup does not pass while points are open."""
import time

import pytest

from selfplay_workers.gtp_engine import GtpEngine
from selfplay_workers.search_player import SearchPlayer


def answer(engine, line):
    text = engine.handle_line(line)
    assert text is not None
    return text.strip()


def timed_genmove(engine, color="b"):
    start = time.monotonic()
    reply = answer(engine, f"genmove {color}")
    return reply, time.monotonic() - start


def slow_player():
    # the built-in uniform evaluator and a visit budget that would take minutes
    return SearchPlayer("uniform", 50_000_000, seed=1)


def test_byo_yomi_clock_bounds_the_search():
    engine = GtpEngine(slow_player(), size=9)
    assert answer(engine, "time_settings 0 1 1") == "="
    assert answer(engine, "time_left b 1 1") == "="
    reply, took = timed_genmove(engine)
    assert reply.startswith("= ") and reply != "= pass"
    assert took < 1.5


def test_main_time_is_spread_over_the_game():
    engine = GtpEngine(slow_player(), size=9)
    answer(engine, "time_settings 30 0 0")
    answer(engine, "time_left b 30 0")
    reply, took = timed_genmove(engine)
    # 30 s over at least 10 moves, a fifth kept back: under 3 s
    assert reply.startswith("= ") and took < 3.0


@pytest.mark.parametrize("line, expected", [
    ("kgs-time_settings none", None),
    ("kgs-time_settings absolute 300", (300, 0, 0)),
    ("kgs-time_settings byoyomi 600 30 5", (600, 30, 1)),
    ("kgs-time_settings canadian 600 300 25", (600, 300, 25)),
])
def test_kgs_time_settings(line, expected):
    engine = GtpEngine(slow_player(), size=9)
    assert answer(engine, line) == "="
    assert engine.time_settings == expected


@pytest.mark.parametrize("line", ["kgs-time_settings", "kgs-time_settings fischer 1 2",
                                  "kgs-time_settings byoyomi 1 2", "kgs-time_settings absolute -5"])
def test_bad_kgs_time_settings(line):
    engine = GtpEngine(slow_player(), size=9)
    assert answer(engine, line).startswith("?")


def test_fixed_seconds_per_move():
    engine = GtpEngine(slow_player(), size=9, move_seconds=0.3)
    reply, took = timed_genmove(engine)
    assert reply.startswith("= ") and took < 1.0


class Passer:
    name = "passer"

    def genmove(self, game):
        return game.board.pass_move


def test_cleanup_genmove_does_not_pass_while_points_are_open():
    engine = GtpEngine(Passer(), size=5)
    assert answer(engine, "genmove b") == "= pass"
    assert answer(engine, "kgs-genmove_cleanup w") not in ("= pass", "= resign")
    assert "kgs-genmove_cleanup" in answer(engine, "list_commands")
