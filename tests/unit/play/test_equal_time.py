"""Equal time per move: the visits a network side gets from its measured one-thread speed, the
GTP engines' overrun margin, and each side's time and visits per move as play_match counts them.
A fake clock that the evaluator advances by a fixed cost per position makes the speed known."""
import numpy as np
import pytest

from fastgo.search_settings import SearchSettings
from play.equal_time import MAX_VISITS, one_thread_rate, overrun_margin, visits_for
from play.match import MatchResult, play_match
from play.players import MatchSide, Player
from play.specs import make_player


class CostlyEvaluator:
    """Uniform priors and zero values; each position evaluated advances `clock` by `cost` s."""

    def __init__(self, cost):
        self.cost, self.now = cost, 0.0

    def clock(self):
        return self.now

    def __call__(self, planes):
        count, size = planes.shape[0], planes.shape[-1]
        self.now += self.cost * count
        return (np.zeros((count, size * size + 1), np.float32), np.zeros(count, np.float32))


@pytest.mark.parametrize("search", ["puct", "gumbel"])
def test_rate_is_the_evaluators_speed(search):
    # 2 ms a position: 500 positions a second; each root visit is one position evaluated
    # (plus the root's own expansion per search, a few visits in hundreds)
    net = CostlyEvaluator(0.002)
    rate = one_thread_rate(net, SearchSettings.for_play(search=search), 9, 7.5, budget_s=1.0,
                           clock=net.clock)
    assert 450 <= rate <= 505, rate
    assert visits_for(1.0, rate) == int(rate)


def test_slower_network_gets_fewer_visits_in_the_same_seconds():
    fast, slow = CostlyEvaluator(0.001), CostlyEvaluator(0.004)
    settings = SearchSettings.for_play()
    rates = [one_thread_rate(n, settings, 9, 7.5, budget_s=0.5, clock=n.clock)
             for n in (fast, slow)]
    visits = [visits_for(2.0, r) for r in rates]
    assert visits[0] == pytest.approx(4 * visits[1], rel=0.1)


def test_visits_for_bounds_and_margin():
    assert visits_for(0.001, 10.0) == 1                 # never below one visit
    assert visits_for(1e6, 1e6) == MAX_VISITS           # never above the tree's capacity
    assert visits_for(1.5, 100.0) == 150
    assert overrun_margin(0.2) == 1.0 and overrun_margin(10.0) == 2.5


class PacedSide(MatchSide):
    """A side that moves all its games in one call, which takes `seconds` on `clock`."""

    def __init__(self, clock, seconds, visits=None):
        self.clock, self.seconds, self.name = clock, seconds, "paced"
        if visits is not None:
            self.visits = visits
        self.random = make_player("random", seed=3)
        self.calls = 0

    def moves(self, indices, games):
        self.calls += 1
        self.clock.now += self.seconds
        return [self.random.genmove(games[g]) for g in indices]


class Clock:
    now = 0.0

    def __call__(self):
        return self.now


def test_play_match_counts_each_sides_time_and_visits_per_move():
    clock = Clock()
    a = PacedSide(clock, 0.6, visits=40)        # 4 games at once: 0.15 s a move
    b = PacedSide(clock, 0.2)                   # 0.05 s a move, no visit budget
    result = play_match(a, b, 4, size=5, clock=clock)
    assert result.moves_a > 0 and result.moves_b > 0
    seconds_a, visits_a = result.per_move("a")
    seconds_b, visits_b = result.per_move("b")
    # every call moves the games whose turn it is: 0.6 s over at most 4 of them
    assert seconds_a >= 0.6 / 4 - 1e-9 and visits_a == 40
    assert seconds_b >= 0.2 / 4 - 1e-9 and visits_b is None
    assert result.seconds_a == pytest.approx(0.6 * a.calls)
    assert result.seconds_b == pytest.approx(0.2 * b.calls)
    total = MatchResult("a", "b").add(result).add(result)
    assert total.moves_a == 2 * result.moves_a and total.visits_a == 2 * result.visits_a
    assert total.per_move("a") == pytest.approx(result.per_move("a"))
    assert MatchResult("a", "b").per_move("a") == (None, None)


# --- the game clock ---------------------------------------------------------------------------

def test_visits_grid_rounds_down_by_less_than_an_eighth():
    from play.equal_time import visits_grid
    assert [visits_grid(v) for v in (0, 1, 8, 15, 16, 17, 31, 33, 100, 2339)] == \
        [1, 1, 8, 15, 16, 16, 30, 32, 96, 2304]
    for v in range(1, 5000):
        g = visits_grid(v)
        assert g <= v and v - g < v / 8 and visits_grid(g) == g


def test_main_time_budget_spreads_the_time_left_over_the_moves_likely_left():
    from play.equal_time import main_time_budget
    # 30 s with 81 points empty: 27 moves likely left -> 0.8 * 30 / 27 - 0.2
    assert main_time_budget(30, 81) == pytest.approx(0.8 * 30 / 27 - 0.2)
    # few points empty: at least 10 moves are kept in hand
    assert main_time_budget(30, 6) == pytest.approx(0.8 * 3 - 0.2)
    # nothing left, or less than nothing: the floor
    assert main_time_budget(0, 81) == main_time_budget(-5, 81) == 0.05


def test_game_clock_charges_each_game_and_color_apart():
    from fastgo.board import BLACK, WHITE
    from play.equal_time import GameClock
    clock = GameClock(10, games=2)
    assert clock.margin == pytest.approx(1.2)
    clock.charge(0, BLACK, 4.0)
    clock.charge(0, BLACK, -3.0)              # a negative charge is none
    clock.charge(1, WHITE, 11.0)
    assert clock.left(0, BLACK) == 6.0 and clock.left(0, WHITE) == 10.0
    assert clock.left(1, WHITE) == -1.0 and not clock.flagged(1, WHITE)   # within the margin
    clock.charge(1, WHITE, 0.25)
    assert clock.flagged(1, WHITE) and not clock.flagged(1, BLACK)
    for bad in (0, -1, float("nan"), float("inf"), 1e9):
        with pytest.raises(ValueError, match="game seconds"):
            GameClock(bad, games=1)


class Steady(Player):
    """A Player whose every genmove takes `step` seconds on the match's (fake) clock."""
    name = "steady"

    def __init__(self, clock, step, seed):
        self.clock, self.step = clock, step
        self.random = make_player("random", seed=seed)

    def genmove(self, game):
        self.clock.now += self.step
        return self.random.genmove(game)



def test_a_side_past_its_game_clock_loses_that_game_on_time():
    # 1 s a move against a 5 s clock with a margin of 1.1 s: a side's 7th move takes it to
    # 7 s > 6.1 s. Black (A in game 0) gets there first, at the game's 13th move.
    clock = Clock()
    a, b = Steady(clock, 1.0, 1), Steady(clock, 1.0, 2)
    result = play_match(a, b, 1, size=9, clock=clock, game_seconds=5)
    assert result.games == 1 and result.wins_b == 1
    (forfeit,) = result.forfeits
    assert forfeit["player"] == "steady" and forfeit["color"] == "B" and forfeit["move"] == 13
    assert forfeit["reason"] == "lost on time: 7.0 s used of a 5 s game clock (+1.1 s margin)"
    assert result.clock_per_move("a") == pytest.approx(1.0)
    # without a clock the same players play on
    clock.now = 0.0
    untimed = play_match(Steady(clock, 1.0, 1), Steady(clock, 1.0, 2), 1, size=9, clock=clock)
    assert untimed.forfeits == [] and untimed.clock_per_move("a") is None


def test_a_network_side_under_a_game_clock_spends_its_time_by_the_budget():
    """The visits of each move are what main_time_budget of the time left buys at the side's
    rate, on the grid; the clock is charged visits / rate; the game's total stays within T."""
    from play.equal_time import main_time_budget, visits_for, visits_grid
    from play.match import SearchSide

    net = CostlyEvaluator(0.0)
    side = SearchSide(net, visits=1, name="net", rate=1000.0)
    other = make_player("random", seed=5)
    result = play_match(side, other, 2, size=7, game_seconds=30)
    assert result.forfeits == []
    assert 0 < result.clock_a <= 2 * 30
    # the first move of a game: 49 points empty, 30 s left -> 1.3 s -> 1,300 visits -> 1,280
    first = visits_grid(visits_for(main_time_budget(30, 49), 1000.0))
    assert first == 1280
    assert result.visits_a < first * result.moves_a       # later moves get fewer
    assert result.clock_a == pytest.approx(result.visits_a / 1000.0)
    side_without_rate = SearchSide(net, visits=1, name="net")
    with pytest.raises(ValueError, match="game clock needs"):
        play_match(side_without_rate, other, 1, size=7, game_seconds=30)


def test_a_rate_given_at_construction_is_checked_as_set_speed_checks_it():
    from play.match import SearchSide
    net = CostlyEvaluator(0.0)
    for bad in (0, -5.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="visits a second must be > 0"):
            SearchSide(net, visits=1, rate=bad)
    assert SearchSide(net, visits=1, rate=250).rate == 250.0
