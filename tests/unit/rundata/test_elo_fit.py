"""The BayesElo-style fit (rundata.elo_fit): known strengths recovered within their intervals,
closed forms for two players, the priors, the anchor, groups not connected by games, gain
intervals, and `fastgo ratings`."""
import contextlib
import io
import itertools
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastgo_cli.main import main
from rundata.elo_fit import components, fit_ratings
from rundata.ratings_table import append_result, player_games

TRUE = {"random": 0.0, "p200": 200.0, "p400": 400.0, "p800": 800.0}


def synthetic(seed, games=300, strengths=TRUE):
    """Rows drawn from the logistic model: `games` games per pair, seeded."""
    rng = np.random.default_rng(seed)
    rows = []
    for a, b in itertools.combinations(strengths, 2):
        p = 1.0 / (1.0 + 10.0 ** ((strengths[b] - strengths[a]) / 400.0))
        wins = int(rng.binomial(games, p))
        rows.append({"a": a, "b": b, "wins_a": wins, "wins_b": games - wins, "draws": 0})
    return rows


def test_known_strengths_recovered_within_intervals():
    fit = fit_ratings(synthetic(seed=7))
    assert fit["random"] == (0.0, 0.0, 0.0)
    for name, true in TRUE.items():
        elo, low, high = fit[name]
        assert low <= true <= high, (name, true, fit[name])
        if name != "random":
            assert 40 < high - low < 250            # a few hundred games a pair: tens of Elo
    order = sorted(fit, key=lambda n: fit[n][0])
    assert order == ["random", "p200", "p400", "p800"]


def test_interval_coverage_over_seeds():
    # 95% intervals: over 40 seeded tables x 3 free players, most contain the truth
    inside = total = 0
    for seed in range(40):
        fit = fit_ratings(synthetic(seed=100 + seed, games=200))
        for name in ("p200", "p400", "p800"):
            _, low, high = fit[name]
            inside += low <= TRUE[name] <= high
            total += 1
    assert inside / total >= 0.85, (inside, total)


def test_two_players_closed_form_without_prior():
    # MLE: r = 400 log10(W / L); variance 1 / (S^2 n p (1 - p)), S = ln 10 / 400
    fit = fit_ratings([{"a": "x", "b": "random", "wins_a": 30, "wins_b": 10, "draws": 0}],
                      prior_games=0)
    elo, low, high = fit["x"]
    assert elo == pytest.approx(400 * math.log10(3), abs=1e-4)
    s = math.log(10) / 400
    se = 1 / math.sqrt(s * s * 40 * 0.75 * 0.25)
    assert (high - low) / 2 == pytest.approx(1.959964 * se, rel=1e-4)
    assert (elo - low) == pytest.approx(high - elo)


def test_draws_count_half_and_prior_makes_perfect_records_finite():
    fit = fit_ratings([{"a": "x", "b": "random", "wins_a": 5, "wins_b": 5, "draws": 10}])
    assert fit["x"][0] == pytest.approx(0.0, abs=1e-6)
    # the same score as 10 wins and 10 losses: 10 draws = 5 + 5
    same = fit_ratings([{"a": "x", "b": "random", "wins_a": 10, "wins_b": 10, "draws": 0}])
    assert fit["x"] == pytest.approx(same["x"])
    perfect = fit_ratings([{"a": "random", "b": "mcts:100", "wins_a": 0, "wins_b": 20,
                            "draws": 0}])
    elo, low, high = perfect["mcts:100"]
    # finite, with the wide interval a one-sided score has (its likelihood is flat above ~500)
    assert all(math.isfinite(v) for v in (elo, low, high)) and low < 0 < elo < high
    # 20 wins and 0.1 virtual draws: score 20.05 / 20.1, Elo 400 log10(20.05 / 0.05)
    assert elo == pytest.approx(400 * math.log10(401), abs=1e-3)
    bayeselo = fit_ratings([{"a": "random", "b": "mcts:100", "wins_a": 0, "wins_b": 20,
                             "draws": 0}], prior_games=2)
    assert bayeselo["mcts:100"][0] == pytest.approx(400 * math.log10(21), abs=1e-3)
    stronger_prior = fit_ratings([{"a": "random", "b": "mcts:100", "wins_a": 0, "wins_b": 20,
                                   "draws": 0}], prior_games=10)
    assert stronger_prior["mcts:100"][0] < elo


def chain(one_sided, *, checkpoints=12, gap=150, games=20, seed=None):
    """An evaluator's table from known Elos: checkpoint c_k is k * gap Elo above random and
    plays c_{k-1} and, at Elo -> score, `games` games against random and mcts:100 (300 Elo)
    when the expected score is in 0.15..0.85 or `one_sided` (the old references, won 20-0).
    Wins: round(games * expected score), or binomial draws with `seed`."""
    rng = None if seed is None else np.random.default_rng(seed)
    true = {"random": 0.0, "mcts:100": 300.0}
    rows = []

    def play(a, b):
        p = 1.0 / (1.0 + 10.0 ** ((true[b] - true[a]) / 400.0))
        wins = round(games * p) if rng is None else int(rng.binomial(games, p))
        rows.append({"a": a, "b": b, "wins_a": wins, "wins_b": games - wins, "draws": 0})
        return p

    for k in range(checkpoints):
        true[f"c{k}"] = k * gap
        for ref in ("random", "mcts:100"):
            p = 1.0 / (1.0 + 10.0 ** ((true[ref] - true[f"c{k}"]) / 400.0))
            if one_sided or 0.15 < p < 0.85:
                play(f"c{k}", ref)
        if k:
            play(f"c{k}", f"c{k - 1}")
    return rows, true


def test_chained_results_resolve_beside_one_sided_ones():
    # The evaluator's old table: every checkpoint wins the references 20-0 from c4 on (600 Elo
    # above random), and gains of 150 Elo a checkpoint show only in the chain (20 games at
    # 70%). With results at their expected scores, the fit recovers each checkpoint's Elo; the
    # top one (1650) within 60 Elo.
    rows, true = chain(one_sided=True)
    fit = fit_ratings(rows)
    for name, elo in true.items():
        assert fit[name][0] == pytest.approx(elo, abs=60), (name, fit[name], elo)
    # BayesElo's two virtual draws per pair pin the top near half its Elo: the flat curve
    pinned = fit_ratings(rows, prior_games=2)
    assert pinned["c11"][0] < 1000
    # Drawn at random (seeded), within the 95% intervals, and the top one well above c6
    for seed in (1, 2, 3):
        rows, true = chain(one_sided=True, seed=seed)
        fit = fit_ratings(rows)
        assert sum(fit[n][1] <= elo <= fit[n][2] for n, elo in true.items()) >= len(true) - 1
        assert fit["c11"][0] - fit["c6"][0] > 400


def test_a_runs_consecutive_checkpoints_get_the_sequential_prior():
    # ckpt-200 won its first rating 4-0 against ckpt-100: with 0.1 virtual draws per pair
    # alone that is 400 log10(4.05 / 0.05) = +763 Elo; the two virtual draws between
    # consecutive checkpoints add one half-point to each side: 400 log10(5.05 / 1.05)
    link = [{"a": "ckpt-200", "b": "ckpt-100", "wins_a": 4, "wins_b": 0, "draws": 0},
            {"a": "ckpt-100", "b": "random", "wins_a": 10, "wins_b": 10, "draws": 0}]
    fit = fit_ratings(link)
    gain = fit["ckpt-200"][0] - fit["ckpt-100"][0]
    assert gain == pytest.approx(400 * math.log10(5.05 / 1.05), abs=1e-3)
    assert fit_ratings(link, sequence_games=0)["ckpt-200"][0] - \
        fit_ratings(link, sequence_games=0)["ckpt-100"][0] == \
        pytest.approx(400 * math.log10(4.05 / 0.05), abs=1e-3)
    # players not named ckpt-STEP (the arena's labels, anchors) get none
    other = [dict(r, a=r["a"].replace("ckpt-", "c"), b=r["b"].replace("ckpt-", "c"))
             for r in link]
    plain = fit_ratings(other)
    assert plain["c200"][0] - plain["c100"][0] == pytest.approx(400 * math.log10(81), abs=1e-3)
    # "consecutive" is by step, not by table order, and a pair that never met gets it too:
    # ckpt-50, added last and played only by ckpt-200, comes first in the chain
    # 50 - 100 - 200, so the prior alone ties it to ckpt-100 and pulls it towards it
    rows = link + [{"a": "ckpt-200", "b": "ckpt-50", "wins_a": 3, "wins_b": 1, "draws": 0}]
    fit = fit_ratings(rows)
    unpulled = fit_ratings(rows, sequence_games=0)
    assert abs(fit["ckpt-50"][0] - fit["ckpt-100"][0]) < \
        abs(unpulled["ckpt-50"][0] - unpulled["ckpt-100"][0])
    with pytest.raises(ValueError, match="sequence_games"):
        fit_ratings(link, sequence_games=float("nan"))


def short_links(seed, links=20, gain=12.0):
    """An evaluator's table late in a run: checkpoint k is k * `gain` Elo above ckpt-0, each
    rated first by 4 games against the one before and then by 5 against an anchor (gnugo:5,
    1,000 Elo above random, itself rated by 200 games against random), drawn at random."""
    rng = np.random.default_rng(seed)
    rows = []

    def play(a, b, diff, games):
        wins = int(rng.binomial(games, 1.0 / (1.0 + 10.0 ** (-diff / 400.0))))
        rows.append({"a": a, "b": b, "wins_a": wins, "wins_b": games - wins, "draws": 0})

    play("gnugo:5", "random", 1000.0, 200)
    for k in range(links + 1):
        if k:
            play(f"ckpt-{k * 500}", f"ckpt-{(k - 1) * 500}", gain, 4)
        play(f"ckpt-{k * 500}", "gnugo:5", k * gain, 5)
    return rows


def test_the_sequential_prior_keeps_a_chain_of_short_links_from_drifting():
    # The span of 20 short links (true gain +240) over 40 seeded tables: without the prior a
    # lucky 4-0 link weighs +763 and the span's error is several hundred Elo; with it the
    # error shrinks (the run's third hour: +823 without, +341 with, +241 by a direct match)
    errors = {0.0: [], 2.0: []}
    for seed in range(40):
        rows = short_links(seed)
        for games in errors:
            fit = fit_ratings(rows, sequence_games=games)
            errors[games].append(fit["ckpt-10000"][0] - fit["ckpt-0"][0] - 240.0)
    rms = {g: math.sqrt(sum(e * e for e in errs) / len(errs)) for g, errs in errors.items()}
    assert rms[2.0] < 0.8 * rms[0.0], rms
    assert max(abs(e) for e in errors[2.0]) < max(abs(e) for e in errors[0.0])


def test_anchor_absent_and_disconnected_groups():
    rows = [{"a": "x", "b": "y", "wins_a": 15, "wins_b": 5, "draws": 0},
            {"a": "q", "b": "z", "wins_a": 3, "wins_b": 1, "draws": 1},
            {"a": "z", "b": "z", "wins_a": 2, "wins_b": 2, "draws": 0}]     # self-play: no info
    fit = fit_ratings(rows)                      # no 'random': the first player is fixed
    assert fit["x"] == (0.0, 0.0, 0.0) and fit["y"][0] < 0
    assert fit["q"] == (0.0, 0.0, 0.0) and fit["z"][0] < 0
    assert components(rows, "y") == [["y", "x"], ["q", "z"]]
    assert fit_ratings(rows, anchor="y")["x"][0] == pytest.approx(-fit["y"][0])
    assert player_games(rows) == {"x": 20, "y": 20, "q": 5, "z": 9}
    assert fit_ratings([]) == {}


def test_ratings_command(tmp_path, capsys):
    path = tmp_path / "ratings.jsonl"
    for row in synthetic(seed=3, games=100):
        append_result(path, row["a"], row["b"], row["wins_a"], row["wins_b"], row["draws"])
    with open(path, "ab") as handle:
        handle.write(b'{"a": "broken')
    out_json = tmp_path / "fit.json"
    assert main(["ratings", str(path), "--json", str(out_json)]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert "skipped 1 damaged line" in captured.err
    names = [line.split()[0] for line in lines[2:]]
    assert names == ["p800", "p400", "p200", "random"]          # strongest first
    assert lines[2].split()[-1] == "300"                        # games of p800
    data = json.loads(out_json.read_text())
    assert data["random"] == {"elo": 0.0, "low": 0.0, "high": 0.0, "games": 300}
    assert main(["ratings", str(tmp_path / "none.jsonl")]) == 2
    assert "no such ratings table" in capsys.readouterr().err


def test_a_gain_interval_is_the_pairs_own_not_the_chain_to_the_anchor():
    from rundata.elo_fit import gain_intervals
    rows = [{"a": "A", "b": "random", "wins_a": 8, "wins_b": 0},
            {"a": "B", "b": "A", "wins_a": 30, "wins_b": 10},
            {"a": "C", "b": "D", "wins_a": 5, "wins_b": 5}]
    gains = gain_intervals(rows, ["A", "B", "C"], prior_games=0)
    # B - A from 30 of 40: 400 log10(3) = 190.8 Elo; standard error 1 / sqrt(n p (1 - p)) logits
    # = 0.3651, x 400 / ln 10 = 63.4 Elo; +-1.96 of it
    low, high = gains["B"]
    assert low == pytest.approx(190.8 - 124.3, abs=1.0)
    assert high == pytest.approx(190.8 + 124.3, abs=1.0)
    assert "C" not in gains and "A" not in gains        # C never met B's group; A is the first
    absolute = fit_ratings(rows, anchor="random", prior_games=0.1)["B"]
    narrow = gain_intervals(rows, ["A", "B"])["B"]
    assert narrow[1] - narrow[0] < (absolute[2] - absolute[1]) / 3


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                 st.floats(min_value=0.0, max_value=1e6)))
def test_fuzz_sequence_prior_is_fitted_or_refused_in_one_line(tmp_path_factory, value):
    """`fastgo ratings --sequence-prior X`: a number in 0..1e6 is fitted (the players listed),
    anything else (negative, huge, inf, nan) exits 2 with one line naming the flag."""
    path = tmp_path_factory.mktemp("seq") / "ratings.jsonl"
    append_result(path, "ckpt-200", "ckpt-100", 4, 0)
    append_result(path, "ckpt-100", "random", 10, 10)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["ratings", str(path), f"--sequence-prior={value!r}"])
    if 0 <= value <= 1e6:
        assert code == 0, err.getvalue()
        assert {line.split()[0] for line in out.getvalue().splitlines()[2:]} >= \
            {"ckpt-200", "ckpt-100", "random"}
    else:
        assert code == 2 and out.getvalue() == ""
        assert err.getvalue().count("\n") == 1 and "--sequence-prior" in err.getvalue()
