"""Equal time per move: the visits a network side gets from its measured one-thread speed, the
GTP engines' overrun margin, and each side's time and visits per move as play_match counts them.
A fake clock that the evaluator advances by a fixed cost per position makes the speed known."""
import numpy as np
import pytest

from fastgo.search_settings import SearchSettings
from play.equal_time import MAX_VISITS, one_thread_rate, overrun_margin, visits_for
from play.match import MatchResult, play_match
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


class PacedSide:
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
