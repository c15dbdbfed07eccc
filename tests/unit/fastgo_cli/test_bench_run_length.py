"""What reads a whole run, over synthetic runs of a day, a week and a month
(fastgo_cli.bench.run_length.build_run without its shards and trainer): past the fit's window what
the fit, an evaluator point and the dashboard take stops growing with the run's length. Counted
in players, rows and bytes (the bench times them)."""
import json
import os
import random

import pytest

from fastgo_cli.bench import run_length
from rundata.elo_fit import FIT_CHECKPOINTS
from rundata.rundir import open_run_dir


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = {}
    for hours in (24, 168, 720):
        run = open_run_dir(tmp_path_factory.mktemp(f"run{hours}"))
        os.makedirs(run.evaluated, exist_ok=True)
        run_length.build_ratings(run, hours, random.Random(hours))
        run_length.build_metrics(run, hours)
        out[hours] = run
    return out


@pytest.fixture(scope="module")
def measured(runs):
    return {hours: {op: run_length.time_operation(op, run.root)
                    for op in ("ratings", "evaluator", "dashboard")}
            for hours, run in runs.items()}


def test_a_day_is_fitted_whole_and_a_week_and_a_month_over_the_same_window(measured):
    day, week, month = (measured[h]["ratings"] for h in (24, 168, 720))
    assert day["error"] == week["error"] == month["error"] == ""
    assert day["left_out"] == 0 and day["players"] > 24 * run_length.POINTS_PER_HOUR
    assert week["left_out"] > 0 and month["left_out"] > week["left_out"]
    # the players fitted: the window and the kept history (a few more a decade of steps)
    assert week["players"] <= day["players"] + FIT_CHECKPOINTS
    assert month["players"] <= week["players"] + 10
    assert month["rows"] <= week["rows"] * 1.05


def test_an_evaluator_point_and_the_dashboard_stop_growing_past_the_window(measured):
    week, month = measured[168], measured[720]
    assert week["evaluator"]["predicted"] > 2 and month["evaluator"]["predicted"] > 2
    assert month["evaluator"]["ratings_json_bytes"] <= week["evaluator"]["ratings_json_bytes"] * 1.05
    assert month["dashboard"]["points"] <= week["dashboard"]["points"] + 10
    assert month["dashboard"]["json_bytes"] <= week["dashboard"]["json_bytes"] * 1.1
    # every evaluation is read (a line each: 1.6 MB a month); the loss rows sent are thinned
    assert month["evaluator"]["evaluations"] == 720 * run_length.POINTS_PER_HOUR
    assert month["dashboard"]["loss_rows"] <= 2000 < 720 * run_length.STEPS_PER_HOUR / 100


def test_the_newest_points_are_rated_on_the_ladder_in_every_run(runs):
    from rundata.strength import read_strength

    for hours, run in runs.items():
        strength = read_strength(run.ratings_table)
        with open(run.evaluations) as handle:
            newest = json.loads(handle.readlines()[-1])["player"]
        assert newest in strength.cgos, hours
        points = hours * run_length.POINTS_PER_HOUR
        # the newest point's CGOS estimate within its interval of the rating it was drawn at
        _, low, high = strength.cgos[newest]
        assert low <= run_length.truth(points - 1) <= high, hours
