"""CGOS's 9x9 scale (rundata.elo_fit.cgos_ratings): the stand-in of CGOS's anchor at 1800, each
player's interval that of its difference to the stand-in; the status line, `fastgo ratings` and
curve.png say it the same way."""
from __future__ import annotations

import json
import math

from fastgo_cli.main import main
from rundata.elo_fit import CGOS_ANCHOR_ELO, CGOS_STAND_IN, Z95, cgos_ratings, cgos_text, fit_ratings
from rundata.ratings_table import append_result, read_table


def row(a, b, wins_a, wins_b):
    return {"a": a, "b": b, "wins_a": wins_a, "wins_b": wins_b, "draws": 0}


def test_two_players_closed_form():
    # 30-10 against the stand-in without a prior: the score 0.75 gives 400 log10(3) = 190.85 Elo
    # over it; the standard error is 1 / sqrt(S^2 n p (1 - p)) with S = ln 10 / 400, n = 40.
    fit = cgos_ratings([row("ckpt-1", CGOS_STAND_IN, 30, 10)], prior_games=0.0)
    assert fit[CGOS_STAND_IN] == (CGOS_ANCHOR_ELO,) * 3
    elo, low, high = fit["ckpt-1"]
    assert math.isclose(elo, 1800 + 400 * math.log10(3), abs_tol=1e-4)
    slope = math.log(10) / 400
    se = 1 / math.sqrt(slope * slope * 40 * 0.75 * 0.25)
    assert math.isclose(high - elo, Z95 * se, rel_tol=1e-4)
    assert math.isclose(elo - low, Z95 * se, rel_tol=1e-4)


def test_chain_and_groups():
    rows = [row("random", "ckpt-1", 0, 20), row("ckpt-1", CGOS_STAND_IN, 10, 10),
            row("ckpt-2", "ckpt-1", 15, 5), row("x", "y", 3, 1)]
    fit = cgos_ratings(rows)
    assert set(fit) == {"random", "ckpt-1", "ckpt-2", CGOS_STAND_IN}   # x, y not connected
    over_random = fit_ratings(rows)
    shift = fit["ckpt-2"][0] - over_random["ckpt-2"][0]
    for name in ("ckpt-1", "random"):        # one fit, another anchor: the same differences
        assert math.isclose(fit[name][0] - over_random[name][0], shift, abs_tol=1e-3)
    # the interval is that against the stand-in: ckpt-1 (an even score, 20 games) far
    # narrower on CGOS's scale than over random (20-0)
    assert fit["ckpt-1"][2] - fit["ckpt-1"][1] < over_random["ckpt-1"][2] - over_random["ckpt-1"][1]
    assert cgos_ratings([row("random", "ckpt-1", 1, 2)]) == {}


def test_text():
    assert cgos_text((1650.4, 1580.2, 1719.6)) == "CGOS 1650 (1580..1720)"
    assert cgos_text((1650, -math.inf, 12_000)) == "CGOS 1650 (?..?)"
    assert cgos_text(None) == "CGOS -"


def test_status_line_and_ratings_command(tmp_path, capsys):
    from rundata.rundir import RunDir
    from supervision.status import read_cgos, status_line, summary_text

    table = tmp_path / "ratings.jsonl"
    append_result(table, "ckpt-40", CGOS_STAND_IN, 30, 10)
    append_result(table, "ckpt-40", "random", 20, 0)
    cgos = read_cgos(RunDir(str(tmp_path)))
    fit = cgos_ratings(read_table(table))
    # 30-10: 190.85 over the stand-in without a prior; the default prior's 0.1 virtual draws
    # pull it a little towards the stand-in
    assert 1800 + 185 < fit["ckpt-40"][0] < 1800 + 190.85
    expected = cgos_text(fit["ckpt-40"])
    ratings = {"latest": {"player": "ckpt-40", "elo": 212.0, "elo_low": 150, "elo_high": 271,
                          "results": ["gnugo:10 30-10"]}, "ratings": {}}
    assert f"Elo 212 (ckpt-40)  {expected}" in status_line(5, {}, 0, 0, 0, ratings, {}, None, cgos)
    assert "CGOS" not in status_line(5, {}, 0, 0, 0, ratings, {})

    assert f"(150..271), {expected}; last results" in summary_text(5, "", {}, {}, ratings,
                                                                    RunDir(str(tmp_path)),
                                                                    cgos=cgos)
    out_json = tmp_path / "fit.json"
    assert main(["ratings", str(table), "--json", str(out_json)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("ckpt-40") and line.endswith(expected[5:]) for line in lines)
    data = json.loads(out_json.read_text())
    assert data[CGOS_STAND_IN]["cgos"] == [1800.0, 1800.0, 1800.0]
    assert math.isclose(data["ckpt-40"]["cgos"][0], float(expected.split()[1]), abs_tol=0.5)


def test_one_fit_with_covariance_gives_what_refits_give():
    # a chain of checkpoints with one-sided and even results: the CGOS ratings and the gain
    # intervals from one fit anchored at random equal the refits anchored at the stand-in and
    # at each step's predecessor
    from rundata.elo_fit import GroupFit, gain_intervals

    rows = [row("random", "ckpt-1", 1, 19), row("ckpt-1", "gnugo:1", 8, 12),
            row("ckpt-2", "ckpt-1", 14, 6), row("ckpt-2", CGOS_STAND_IN, 3, 17),
            row("ckpt-3", "ckpt-2", 12, 8), row("ckpt-3", CGOS_STAND_IN, 6, 14),
            row("ckpt-3", "random", 20, 0)]
    fit = GroupFit(rows, anchor="random")
    one = cgos_ratings(rows, fit=fit)
    refit = cgos_ratings(rows)
    assert set(one) == set(refit)
    for name in refit:
        assert all(math.isclose(a, b, abs_tol=0.5) for a, b in zip(one[name], refit[name])), name
    gains = gain_intervals(rows, ["ckpt-1", "ckpt-2", "ckpt-3"])
    for before, name in (("ckpt-1", "ckpt-2"), ("ckpt-2", "ckpt-3")):
        _, low, high = fit.difference(name, before)
        assert math.isclose(low, gains[name][0], abs_tol=0.5)
        assert math.isclose(high, gains[name][1], abs_tol=0.5)
    elo = fit_ratings(rows)
    for name in elo:
        assert all(math.isclose(a, b, abs_tol=0.5)
                   for a, b in zip(fit.difference(name, "random"), elo[name])), name


def test_curve_png_gets_the_cgos_axis(tmp_path):
    from evaluation.plots import cgos_shift, draw_curve

    rows = [row("ckpt-1", "random", 9, 1), row("ckpt-1", CGOS_STAND_IN, 2, 8),
            row("ckpt-2", "ckpt-1", 7, 3), row("ckpt-2", CGOS_STAND_IN, 4, 6)]
    ratings = fit_ratings(rows)
    cgos = cgos_ratings(rows)
    shift = cgos_shift(cgos, ratings)
    # one constant: the stand-in's Elo over random maps to 1800
    assert math.isclose(ratings[CGOS_STAND_IN][0] + shift, 1800.0, abs_tol=1e-6)
    assert math.isclose(ratings["ckpt-2"][0] + shift, cgos["ckpt-2"][0], abs_tol=0.5)
    assert cgos_shift({}, ratings) is None
    evaluations = [{"player": "ckpt-1", "wall_s": 60, "games": 10, "opponents": ["random"]},
                   {"player": "ckpt-2", "wall_s": 120, "games": 20, "opponents": [CGOS_STAND_IN]}]
    out = tmp_path / "curve.png"
    assert draw_curve(str(out), evaluations, ratings, ["random", CGOS_STAND_IN], rows=rows)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
