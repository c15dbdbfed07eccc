"""The evaluator over a synthetic run (evaluation.evaluator with its real choices of opponents,
pairing rule and fit): checkpoints that gain a known 40 Elo a point, rungs of known strength
calibrated by 100 games a link, games drawn from the logistic model instead of played. The curve
it draws must rise as the truth does, each point within its interval, on a machine that has the
shipped rungs only (no GNU Go); and with one rung only, at the run's middle, it is blind above
it (what the ladder of rungs fixes)."""
import logging
import random
import types

from evaluation import evaluator as evaluator_module
from evaluation import pairing_games
from evaluation.budget import CpuBudget
from evaluation.evaluator import Evaluator
from evaluation.opponents import Opponents
from evaluation.pairings import expected_score
from play.match import MatchResult
from rundata import ladder
from rundata.config import loads_config
from rundata.elo_fit import CGOS_STAND_IN
from rundata.ratings_table import RatingsTable
from rundata.rundir import open_run_dir
from rundata.strength import read_strength

GAIN = 40.0                      # true Elo a checkpoint over the one before (a point's)
CHECKPOINT_S = 26.0              # wall seconds between checkpoints (100 steps) of the hour
FIRST = 1100.0                   # the first checkpoint's true CGOS rating
POINTS = 30
# rungs that stand for the shipped ladder (mcts:N names: every machine has them, and their
# sides are made up here): true CGOS ratings about 150 apart, from below the run to above it
RUNGS = {f"mcts:{1000 + k}": 800.0 + 150.0 * k for k in range(14)}    # 800 .. 2750


def true_rating(name, rungs, budgeted=False):
    if name.startswith("ckpt-"):
        k = int(name[5:]) // 100 - 1
        # budgeted: 40 Elo for each 200 s (a point's interval) of the run
        return FIRST + GAIN * (k * CHECKPOINT_S / 200.0 if budgeted else k)
    return {**rungs, CGOS_STAND_IN: 1800.0, "random": -500.0}[name]


def calibration(rungs, rng, games=100):
    """A calibration table of `rungs`: each neighbouring pair `games` games, and the two rungs
    nearest the stand-in against it, drawn from the model."""
    names = sorted(rungs, key=rungs.get)
    pairs = list(zip(names, names[1:]))
    pairs += [(name, CGOS_STAND_IN) for name in sorted(names, key=lambda n: abs(rungs[n] - 1800))[:2]]
    rows = []
    for a, b in pairs:
        p = expected_score(true_rating(a, rungs), true_rating(b, rungs))
        wins = sum(rng.random() < p for _ in range(games))
        rows.append({"a": a, "b": b, "wins_a": wins, "wins_b": games - wins, "draws": 0,
                     "games": games})
    return RatingsTable(rows)


class Side:
    def __init__(self, name):
        self.name, self.board_size, self.visits = name, 9, 64

    def close(self):
        pass


class Clocks:
    """The run's wall clock and the evaluator's CPU clock, both made up: a game costs CPU (and
    the same wall time), waiting for the budget costs wall time only."""

    def __init__(self):
        self.wall, self.cpu = 0.0, 0.0

    def sleep(self, seconds):
        self.wall += seconds


def game_cpu_s(name, rungs):
    """CPU seconds of one game against `name`: two 64-visit networks 1.3 s (what the evaluator's
    554 games of a 2-core Zen 4 hour cost at 0.2 of a core), a rung more as it is higher (more
    visits), up to three times that at the top."""
    if name in rungs:
        return 1.3 * (1.0 + 2.0 * sorted(rungs.values()).index(rungs[name]) / len(rungs))
    return 1.3


def simulate(tmp_path, monkeypatch, rungs, seed, budgeted=False, minutes=60.0, settings="",
             interval=200.0):
    """The evaluator over a synthetic run: {player: CGOS rating}, the games played [(a, b,
    games)] and the points as published [(wall s, player, (elo, low, high))]. Without
    `budgeted`: POINTS checkpoints each rated in full; with it: a checkpoint every 26 s of a
    `minutes` run (a 2-core Zen 4 hour's pace), rated under the quickstart's evaluator settings
    (a point every 200 s, 0.2 of a core), the truth rising 40 Elo a point."""
    rng = random.Random(seed)
    clocks = Clocks()
    table = calibration(rungs, rng)
    monkeypatch.setattr(ladder, "calibration", lambda: table)
    monkeypatch.setattr(evaluator_module.Curves, "redraw", lambda self, ratings: None)
    monkeypatch.setattr(evaluator_module.Curves, "draw_pending", lambda self: None)

    def checkpoint_side(self, path, name, seed, data=None):
        return types.SimpleNamespace(extra={}), Side(name)
    monkeypatch.setattr(Opponents, "checkpoint_side", checkpoint_side)
    monkeypatch.setattr("evaluation.opponents.make_spec_side",
                        lambda spec, **kwargs: Side(spec.name))
    played = []

    def play_match(a, b, games, **kwargs):
        p = expected_score(true_rating(a.name, rungs, budgeted), true_rating(b.name, rungs, budgeted))
        result = MatchResult(a.name, b.name)
        result.games = games
        result.wins_a = sum(rng.random() < p for _ in range(games))
        result.wins_b = games - result.wins_a
        played.append((a.name, b.name, games))
        cost = games * game_cpu_s(b.name, rungs)
        clocks.cpu += cost
        clocks.wall += cost
        return result
    monkeypatch.setattr(pairing_games, "play_match", play_match)

    anchors = ", ".join(f'"{name}"' for name in ["random", *sorted(rungs, key=rungs.get)])
    interval = interval if budgeted else 0
    config = loads_config(f"[evaluator]\ninterval_s = {interval}\nanchors = [{anchors}]\n"
                          + settings)
    run_dir = open_run_dir(tmp_path / "run")
    budget = CpuBudget(config.evaluator.cpu_share, cpu_clock=lambda: clocks.cpu,
                       wall_clock=lambda: clocks.wall)
    evaluator = Evaluator(config, run_dir, logging.getLogger("test"), enforce_budget=budgeted,
                          redraw_s=None, budget=budget, clock=lambda: clocks.wall,
                          sleep=clocks.sleep)
    points = []
    if not budgeted:
        for k in range(1, POINTS + 1):
            with open(run_dir.checkpoint(100 * k), "wb") as handle:
                handle.write(b"x")
            assert evaluator.work(once=True)
        return read_strength(run_dir.ratings_table).cgos, played, points
    written = 0
    while clocks.wall < 60.0 * minutes:
        while (written + 1) * CHECKPOINT_S <= clocks.wall:
            written += 1
            with open(run_dir.checkpoint(100 * written), "wb") as handle:
                handle.write(b"x")
        if not evaluator.work():
            clocks.sleep(1.0)
        latest = evaluator.figures.get("latest")
        if latest is not None and (not points or points[-1][3] is not latest):
            cgos = read_strength(run_dir.ratings_table).cgos.get(latest["player"])
            if cgos is not None:
                points.append((clocks.wall, latest["player"], cgos, latest))
    return read_strength(run_dir.ratings_table).cgos, played, points


def inside(cgos, truth):
    """{checkpoint: whether its true rating is within its CGOS interval}."""
    return {name: cgos[name][1] <= value <= cgos[name][2] for name, value in truth.items()}


def test_a_run_that_gains_40_elo_a_point_draws_a_rising_curve_within_its_intervals(
        tmp_path, monkeypatch):
    # each checkpoint rated in full (evaluator.interval_s = 0), three runs of 30 points
    covered, total = 0, 0
    for seed in (1, 2, 3):
        cgos, played, _ = simulate(tmp_path / str(seed), monkeypatch, RUNGS, seed)
        truth = {f"ckpt-{100 * k}": FIRST + GAIN * (k - 1) for k in range(1, POINTS + 1)}
        ok = inside(cgos, truth)
        covered, total = covered + sum(ok.values()), total + len(ok)
        # the curve rises as the truth does: the second half's mean over the first half's by
        # the truth's 600, give or take 120
        values = [cgos[name][0] for name in truth]
        half = POINTS // 2
        assert abs(sum(values[half:]) / half - sum(values[:half]) / half - GAIN * half) < 120
        # every point measured: an interval at most 300 wide
        assert max(cgos[name][2] - cgos[name][1] for name in truth) <= 300
        # rungs above the checkpoints were played all along, not only the ones below
        last = f"ckpt-{100 * POINTS}"
        assert any(RUNGS[b] > truth[last] for a, b, _ in played if a == last and b in RUNGS)
        # no games against an earlier checkpoint the fit already placed far below (a true
        # expected score under 3%: 600 Elo), once the rungs rate the checkpoints
        assert all(true_rating(a, RUNGS) - true_rating(b, RUNGS) <= 600 for a, b, _ in played
                   if b.startswith("ckpt-") and int(a[5:]) > 500)
    # 95% intervals that share the rungs' calibration: most points inside (90 of them)
    assert covered >= 0.85 * total, (covered, total)


def test_under_the_budget_a_point_every_5_minutes_rises_within_its_intervals(
        tmp_path, monkeypatch):
    # the quickstart's evaluator: 0.2 of a core, a point every 5 minutes, over an hour
    for seed in (1, 2):
        cgos, played, points = simulate(tmp_path / str(seed), monkeypatch, RUNGS, seed,
                                         budgeted=True, interval=300.0)
        names = list(dict.fromkeys(name for _, name, _, _ in points))
        truth = {name: true_rating(name, RUNGS, True) for name in names}
        assert len(names) >= 11                              # a point every 5 minutes or so
        assert sum(inside(cgos, truth).values()) >= len(names) - 1
        # rising: the last four points over the first four by the truth's gain, +-200
        gain = sum(cgos[n][0] for n in names[-4:]) / 4 - sum(cgos[n][0] for n in names[:4]) / 4
        assert abs(gain - (sum(truth[n] for n in names[-4:]) - sum(truth[n] for n in names[:4]))
                   / 4) < 200
        # a point's first rating is a whole batch against a rung near even, refined to about
        # 300 wide: what the status line shows from minute 10 is mostly under 500 wide (the
        # 4 games against the previous checkpoint of old showed 600 to 850)
        widths = sorted(v[2] - v[1] for wall, _, v, _ in points if wall > 600)
        assert widths[len(widths) // 2] < 500 and widths[-1] < 800, widths


def test_with_one_rung_at_the_runs_middle_the_curve_cannot_see_the_second_half(
        tmp_path, monkeypatch):
    # the shipped ladder before: one rung at the hour's level; the checkpoints pass it at
    # their middle and from then on have nothing above them
    one = {"mcts:1000": 1700.0}
    cgos, _, _ = simulate(tmp_path, monkeypatch, one, 3)
    last = cgos[f"ckpt-{100 * POINTS}"]
    truth = FIRST + GAIN * (POINTS - 1)
    # either far off or far wider than the shipped ladder gives
    assert last[2] - last[1] > 300 or not last[1] <= truth <= last[2]
