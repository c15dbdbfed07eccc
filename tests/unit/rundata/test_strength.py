"""One strength view (rundata.strength): the evaluator, the status line, curve.png, `fastgo
ratings` and the dashboard print the same Elo and CGOS estimate for the same ratings table."""
import json
import logging
import math

from dashboard.run_view import RunView
from evaluation import plots
from evaluation.evaluations import append_evaluation
from evaluation.evaluator import Evaluator
from fastgo_cli.main import main
from rundata.config import Config
from rundata.elo_fit import CGOS_STAND_IN, cgos_text, fit_ratings
from rundata.ratings_table import append_result, read_table
from rundata.rundir import checkpoint_player, open_run_dir
from rundata.statefiles import read_ratings
from rundata.strength import read_strength, strength_of
from supervision.status import current_ratings, read_cgos, status_line, summary_text


def rated_run(tmp_path):
    """A run directory with a chain of three checkpoints rated against random, the CGOS
    stand-in and each other, their evaluations, and a ratings.json written before the last
    results (as the evaluator leaves it while it refines)."""
    run = open_run_dir(tmp_path / "run")
    for a, b, wins_a, wins_b in (("ckpt-100", "random", 18, 2), ("ckpt-100", CGOS_STAND_IN, 3, 17),
                                 ("ckpt-200", "ckpt-100", 14, 6), ("ckpt-200", CGOS_STAND_IN, 5, 15),
                                 ("ckpt-300", "ckpt-200", 12, 8)):
        append_result(run.ratings_table, a, b, wins_a, wins_b)
    stale = fit_ratings(read_table(run.ratings_table))
    with open(run.ratings, "w") as handle:
        json.dump({"latest": {"player": "ckpt-300", "elo": stale["ckpt-300"][0],
                              "elo_low": stale["ckpt-300"][1], "elo_high": stale["ckpt-300"][2],
                              "results": ["ckpt-200 12-8"]},
                   "ratings": {k: list(v) for k, v in stale.items()}}, handle)
    append_result(run.ratings_table, "ckpt-300", CGOS_STAND_IN, 8, 12)   # refining went on
    for k, step in enumerate((100, 200, 300)):
        append_evaluation(run.evaluations, {"player": checkpoint_player(step), "step": step,
                                            "wall_s": 60.0 * (k + 1), "games": 10 * (k + 1)})
    return run


def test_every_consumer_shows_the_same_strength(tmp_path, capsys, monkeypatch):
    run = rated_run(tmp_path)
    view = read_strength(run.ratings_table)
    assert view.error == "" and set(view.cgos) == {"ckpt-100", "ckpt-200", "ckpt-300",
                                                   CGOS_STAND_IN, "random"}
    elo, cgos = view.elo["ckpt-300"], view.cgos["ckpt-300"]

    # the evaluator: its fit is the view's
    evaluator = Evaluator(Config(), run, logging.getLogger("test"))
    ratings, rows, predict = evaluator._fit()
    assert ratings == view.elo and len(rows) == 6 and predict("ckpt-300", "random") is not None

    # the status line and the summary: the table's numbers, not ratings.json's older ones
    stale = read_ratings(run.ratings)
    assert f"{stale['latest']['elo']:.0f}" != f"{elo[0]:.0f}"
    shown = current_ratings(stale, run)
    line = status_line(5, {}, 0, 0, 0, shown, {}, None, read_cgos(run))
    assert f"Elo {elo[0]:.0f} (ckpt-300)  {cgos_text(cgos)}" in line
    summary = summary_text(5, "", {}, {}, shown, run, cgos=read_cgos(run))
    assert f"ckpt-300: Elo {elo[0]:.0f} ({elo[1]:.0f}..{elo[2]:.0f}), {cgos_text(cgos)}" in summary

    # curve.png: the points of `fastgo curve` and the CGOS estimate in the title
    assert plots.read_run(run.root)["ratings"]["ckpt-300"] == elo
    titles = []
    monkeypatch.setattr(plots, "_save", lambda fig, path: titles.append(fig._suptitle.get_text()))
    plots.draw_curve(run.curve, plots.read_run(run.root)["evaluations"], view.elo,
                     ["random", CGOS_STAND_IN], strength=view)
    assert titles and titles[0].endswith(f"ckpt-300 {cgos_text(cgos)}")

    # `fastgo ratings`
    out = tmp_path / "fit.json"
    assert main(["ratings", run.ratings_table, "--json", str(out)]) == 0
    assert any(line.startswith("ckpt-300") and line.endswith(cgos_text(cgos)[5:])
               for line in capsys.readouterr().out.splitlines())
    data = json.loads(out.read_text())["ckpt-300"]
    assert [data["elo"], data["low"], data["high"]] == [round(v, 2) for v in elo]
    assert data["cgos"] == [round(v, 2) for v in cgos]

    # the dashboard
    point = RunView(run.root).strength()["points"][-1]
    assert point["player"] == "ckpt-300"
    assert point["elo"] == [round(v, 1) for v in elo] and point["cgos"] == [round(v, 1) for v in cgos]
    assert point["gain"] == [round(v, 1) for v in view.gain("ckpt-300", "ckpt-200")]


def test_the_view_agrees_with_the_fits_it_is_made_of(tmp_path):
    rows = [{"a": "ckpt-1", "b": "random", "wins_a": 9, "wins_b": 1, "draws": 0},
            {"a": "ckpt-2", "b": "ckpt-1", "wins_a": 7, "wins_b": 3, "draws": 0},
            {"a": "x", "b": "y", "wins_a": 3, "wins_b": 1, "draws": 0}]     # a group apart
    view = strength_of(rows)
    assert view.elo == fit_ratings(rows)              # the anchor's group: the same numbers
    assert view.cgos == {} and view.groups[0][0] == "random"
    assert view.connected("x", "y") and not view.connected("x", "ckpt-1")
    assert view.gain("x", "ckpt-1") is None and view.gain("ckpt-1", "ckpt-1") is None
    low, high = view.gain("x", "y")                   # outside the anchor's group: its own fit
    assert low < fit_ratings(rows, anchor="y")["x"][0] < high
    assert math.isclose(sum(view.gain("ckpt-2", "ckpt-1")) / 2,
                        view.elo["ckpt-2"][0] - view.elo["ckpt-1"][0], abs_tol=1e-6)


def test_a_table_too_large_to_fit_is_an_error_not_a_crash(monkeypatch, tmp_path):
    from rundata import elo_fit
    monkeypatch.setattr(elo_fit, "MAX_FIT_PLAYERS", 2)
    rows = [{"a": "a", "b": "b", "wins_a": 1, "wins_b": 1, "draws": 0},
            {"a": "b", "b": "c", "wins_a": 1, "wins_b": 1, "draws": 0}]
    view = strength_of(rows)
    assert view.elo == {} and view.cgos == {} and "over the 2" in view.error
    assert view.rows == rows
    assert read_strength(tmp_path / "missing.jsonl").elo == {}
