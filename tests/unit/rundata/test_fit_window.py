"""The fit's window over a long run's table (rundata.elo_fit.fit_window): a week's evaluator
points are fitted over the newest FIT_CHECKPOINTS checkpoints and the geometric history the
evaluator keeps, so the players fitted (and with them the fit's n x n Hessian) do not grow with
the run's length; without it a week's table is over MAX_FIT_PLAYERS and nothing is rated."""
import math
import random

import pytest

from rundata.elo_fit import FIT_CHECKPOINTS, MAX_FIT_PLAYERS, fit_window
from rundata.ratings_table import RatingsTable
from rundata.rundir import checkpoint_player, kept_steps, player_step
from rundata.strength import Strength

POINTS_PER_HOUR = 12          # the evaluator's point every 5 minutes
STEP = 1200                   # training steps between two points (a 2-core Zen 4's pace)
ANCHORS = {f"anchor-{k}": 200.0 * k for k in range(12)}      # made-up rungs, 200 apart


def truth(k):
    """The true Elo of point k: fast at first, then slower (as a run's curve goes)."""
    return 300.0 * math.log1p(k / 12.0)


def _score(a, b, games, rng):
    p = 1.0 / (1.0 + 10.0 ** ((b - a) / 400.0))
    wins = sum(rng.random() < p for _ in range(games))
    return wins, games - wins


def run_table(hours, seed=0):
    """A run's ratings table as the evaluator writes it: each point plays the previous one, the
    one nearest half its step among those kept, and the two anchors nearest its strength;
    every anchor also plays its neighbour (calibration) and `random` the first anchor."""
    rng = random.Random(seed)
    rows = []

    def add(a, b, ra, rb, games):
        wins_a, wins_b = _score(ra, rb, games, rng)
        rows.append({"a": a, "b": b, "wins_a": wins_a, "wins_b": wins_b, "draws": 0,
                     "games": games})
    names = sorted(ANCHORS, key=ANCHORS.get)
    add("random", names[0], -400.0, ANCHORS[names[0]], 100)
    for low, high in zip(names, names[1:]):
        add(low, high, ANCHORS[low], ANCHORS[high], 100)
    steps, kept = [], set()
    for k in range(hours * POINTS_PER_HOUR):
        step, me = STEP * (k + 1), truth(k)
        name = checkpoint_player(step)
        if k % POINTS_PER_HOUR == 1:
            kept = kept_steps(steps)            # the copies kept: looked at once an hour here
        if steps:
            add(name, checkpoint_player(steps[-1]), me, truth(k - 1), 32)
            half = min(kept, key=lambda s: abs(s - step / 2))
            add(name, checkpoint_player(half), me, truth(half // STEP - 1), 16)
        for anchor in sorted(ANCHORS, key=lambda a: abs(ANCHORS[a] - me))[:2]:
            add(name, anchor, me, ANCHORS[anchor], 16)
        steps.append(step)
    return RatingsTable(rows)


def test_a_short_run_is_fitted_whole():
    rows = run_table(hours=30)
    fitted, left_out = fit_window(rows)
    assert left_out == 0 and fitted is rows


@pytest.mark.parametrize("hours", [24, 168, 720])
def test_a_long_run_fits_a_bounded_set_of_players(hours):
    rows = run_table(hours)
    points = hours * POINTS_PER_HOUR
    steps = [STEP * (k + 1) for k in range(points)]
    fitted, left_out = fit_window(rows)
    in_fit = {p for row in fitted for p in (row["a"], row["b"])}
    ckpts = {player_step(p) for p in in_fit} - {None}
    if points <= FIT_CHECKPOINTS:
        assert left_out == 0 and len(fitted) == len(rows)
        return
    # the newest FIT_CHECKPOINTS and the kept history, nothing else; every anchor stays
    expected = set(steps[-FIT_CHECKPOINTS:]) | kept_steps(steps)
    assert ckpts == expected and left_out == points - len(expected)
    assert set(ANCHORS) | {"random"} <= in_fit
    assert len(expected) <= FIT_CHECKPOINTS + 60 < MAX_FIT_PLAYERS
    # a row stays exactly when both its players do
    kept_rows = [r for r in rows if all(player_step(r[k]) in (None, *expected) for k in "ab")]
    assert list(fitted) == kept_rows


def test_a_week_is_rated_and_its_newest_points_as_the_truth_says():
    rows = run_table(hours=168, seed=3)
    whole = Strength(rows)
    assert whole.error == "" and whole.left_out > 0
    points = 168 * POINTS_PER_HOUR
    newest = checkpoint_player(STEP * points)
    assert newest in whole.elo
    # the fit is anchored at random (-400 in truth): the newest point within its interval
    elo, low, high = whole.elo[newest]
    assert low <= truth(points - 1) + 400.0 <= high
    # the gain over the point FIT_CHECKPOINTS - 1 back, inside the window, as the truth says
    back = points - FIT_CHECKPOINTS
    gain = whole.gain(newest, checkpoint_player(STEP * (back + 1)))
    assert gain is not None and gain[0] <= truth(points - 1) - truth(back) <= gain[1]
    # an old checkpoint of the kept history is rated; one left out is not
    old_kept = sorted(kept_steps([STEP * (k + 1) for k in range(points)]))[3]
    assert checkpoint_player(old_kept) in whole.elo
    left = next(STEP * (k + 1) for k in range(points)
                if STEP * (k + 1) not in kept_steps([STEP * (j + 1) for j in range(points)]))
    assert checkpoint_player(left) not in whole.elo
