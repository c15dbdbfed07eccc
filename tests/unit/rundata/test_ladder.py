"""The ladder's calibration (rundata.ladder): the rungs below and above GNU Go level 10 carry
their measured games into every fit that rates one of them, so a checkpoint near a rung gets a
CGOS interval from games near 50%, and a run that played only shipped reference players gets one
without GNU Go; the shipped table is a chain of measured steps through the stand-in, agrees with
direct matches kept out of it, and spans the ladder; the shipped reference players and the
ladder name each other."""
import math
import pathlib

import fastgo
from evaluation.calibration import direct_games, link
from fastgo.player_spec import parse_spec
from rundata import ladder
from rundata.config import Config
from rundata.elo_fit import CGOS_ANCHOR_ELO, CGOS_STAND_IN, cgos_ratings
from rundata.ratings_table import RatingsTable
from rundata.strength import strength_of


def use_calibration(monkeypatch, rows):
    """The calibration games the fits take (rundata.ladder.calibration) made `rows`:
    (a, b, wins_a, wins_b, draws) tuples."""
    table = RatingsTable([{"a": a, "b": b, "wins_a": wa, "wins_b": wb, "draws": d,
                           "games": wa + wb + d} for a, b, wa, wb, d in rows])
    monkeypatch.setattr(ladder, "calibration", lambda: table)
    return table


def shipped_rows():
    """The shipped calibration table as (a, b, wins_a, wins_b, draws) tuples."""
    return tuple((r["a"], r["b"], r["wins_a"], r["wins_b"], r["draws"])
                 for r in ladder.calibration())


def test_the_ladder_is_the_default_and_rises_through_the_stand_in():
    assert Config().evaluator.anchors == ladder.LADDER
    names = [parse_spec(text).name for text in ladder.LADDER]
    assert names == list(ladder.LADDER) and CGOS_STAND_IN in names
    # every calibrated rung is on the ladder, below the stand-in or above it
    assert ladder.rungs() and ladder.rungs() <= set(names)


def test_calibration_games_join_a_fit_only_where_a_rung_was_played(monkeypatch):
    use_calibration(monkeypatch, ((CGOS_STAND_IN, "rung:1", 5, 15, 0),
                                  ("rung:1", "rung:2", 6, 14, 0)))
    # a checkpoint that beats the stand-in every time and splits with rung:1
    base = [{"a": "ckpt-100", "b": "random", "wins_a": 20, "wins_b": 0, "draws": 0},
            {"a": "ckpt-100", "b": CGOS_STAND_IN, "wins_a": 20, "wins_b": 0, "draws": 0}]
    assert ladder.with_calibration(base) is base                     # no rung: nothing added
    rows = base + [{"a": "ckpt-100", "b": "rung:1", "wins_a": 10, "wins_b": 10, "draws": 0}]
    table = RatingsTable(rows, skipped_lines=[7])
    joined = ladder.with_calibration(table)
    assert joined[:3] == rows and joined.skipped_lines == [7]
    assert [r["calibration"] for r in joined[3:]] == [True, True]
    assert [(r["a"], r["b"], r["games"]) for r in joined[3:]] == [
        (CGOS_STAND_IN, "rung:1", 20), ("rung:1", "rung:2", 20)]
    # the checkpoint's CGOS rating with the calibration: above the stand-in, about rung:1's
    # (stand-in + 191 Elo for 15 of 20), its interval under 400 wide; without it, a 20-0
    # record against the stand-in leaves it over 2,000 wide
    with_games = strength_of(RatingsTable(rows)).cgos["ckpt-100"]
    alone = cgos_ratings(RatingsTable(rows))["ckpt-100"]
    rung = CGOS_ANCHOR_ELO + 400 * math.log10(15 / 5)
    assert CGOS_ANCHOR_ELO < with_games[1] and abs(with_games[0] - rung) < 250
    assert with_games[2] - with_games[1] < 400 < 2000 < alone[2] - alone[1]
    assert "rung:2" in strength_of(RatingsTable(rows)).cgos


def test_fastgo_ratings_says_it_added_the_calibration(tmp_path, capsys):
    from fastgo_cli.main import main
    from rundata.ratings_table import append_result

    table = tmp_path / "ratings.jsonl"
    append_result(table, "ckpt-100", CGOS_STAND_IN, 20, 0)
    assert main(["ratings", str(table)]) == 0
    assert "calibration" not in capsys.readouterr().out
    append_result(table, "ckpt-100", "katago:1,t=4", 10, 10)
    assert main(["ratings", str(table)]) == 0
    said = capsys.readouterr().out
    assert f"with the ladder's {len(ladder.calibration())} calibration results" in said
    assert "katago:1 " in said            # a rung rated through the calibration alone


def calibration_problems(rungs, calibration, shipped, min_games=16):
    """What is wrong with a ladder `rungs` and its `calibration` rows for the reference players
    `shipped` (names ref:NAME), as lines; [] when nothing is. The calibrated rungs, in ladder
    order, are a chain through the stand-in: each neighbouring pair (but two GNU Go levels,
    which the rungs around them join, and KataGo's against the others, joined through the
    stand-in) was played `min_games` games or more (either colour
    and order, summed), both sides won games (so the pair's Elo distance has a finite
    interval, not only a bound) and the lower one scored 20-80% (a step the evaluator's games
    near 50% can measure). Each player of a row is a rung; each shipped player is a rung; a
    ref rung is shipped."""
    out = []
    played = direct_games([{"a": a, "b": b, "wins_a": wa, "wins_b": wb, "draws": d}
                           for a, b, wa, wb, d in calibration])
    calibrated = {name for pair in played for name in pair}
    chain = [name for name in rungs if name in calibrated]
    if CGOS_STAND_IN not in chain or len(chain) < 2:
        out.append(f"no chain of calibrated rungs through {CGOS_STAND_IN}")
    for low, high in zip(chain, chain[1:]):
        step = link(low, high, played)
        if low.startswith("gnugo:") and high.startswith("gnugo:") and not step.games:
            continue             # two GNU Go levels: joined through the rungs around them
        if low.startswith("katago:") != high.startswith("katago:") and not step.games:
            continue             # KataGo and a rung of another kind: joined through gnugo:10
        if step.games < min_games:
            out.append(f"{low} and {high}: neighbours, {step.games} games")
            continue
        if not (step.wins_low > 0 and step.wins_high > 0 and 0.2 <= step.score <= 0.8):
            out.append(f"{low} and {high}: {step.wins_low}-{step.wins_high}-{step.draws} is no "
                       f"measured step")
    out.extend(f"{name} is played but not on the ladder" for name in sorted(calibrated)
               if name not in rungs)
    out.extend(f"{name} is shipped but not on the ladder" for name in shipped
               if name not in rungs)
    out.extend(f"{name} is on the ladder but not shipped" for name in rungs
               if name.startswith("ref:") and name not in shipped)
    return out


def test_each_calibrated_distance_is_measured_and_each_reference_player_calibrated(monkeypatch):
    from fastgo.reference_players import REFERENCES_ENV, read_index

    monkeypatch.delenv(REFERENCES_ENV, raising=False)
    shipped = [ref.spec for ref in read_index().values()]
    assert calibration_problems(ladder.LADDER, shipped_rows(), shipped) == []
    for a, b, *_ in shipped_rows():
        for name in (a, b):
            assert not name.startswith("ref:") or name in shipped, name


def test_the_calibration_check_finds_each_gap():
    rungs = ("random", "ref:low", "gnugo:1", "gnugo:5", "ref:mid", "gnugo:10", "ref:gone")
    rows = (("ref:low", "gnugo:1", 5, 11, 0), ("ref:low", "gnugo:1", 4, 4, 0),
            ("gnugo:5", "ref:mid", 1, 15, 0), ("ref:mid", "gnugo:10", 6, 10, 0),
            ("gnugo:10", "ref:mid", 2, 0, 0), ("ref:low", "ref:odd", 1, 1, 0))
    # gnugo:1 and gnugo:5 never met: two GNU Go levels, joined through the rungs around them
    assert calibration_problems(rungs, rows, ["ref:low", "ref:mid", "ref:extra"]) == [
        "gnugo:5 and ref:mid: 1-15-0 is no measured step",
        "ref:odd is played but not on the ladder",
        "ref:extra is shipped but not on the ladder",
        "ref:gone is on the ladder but not shipped"]
    # the games of a pair add up whatever the order: 6-10 and 0-2 the other way are 6-12
    assert calibration_problems(rungs[:1] + rungs[4:6], rows[3:5], ["ref:mid"], min_games=18) == []
    assert calibration_problems(rungs[:1] + rungs[4:6], rows[3:5], ["ref:mid"], min_games=19) == [
        "ref:mid and gnugo:10: neighbours, 18 games"]


# A calibration made up for the test (not the shipped one): two reference players measured once
# against GNU Go levels 1, 5 and 10 and against each other, 32 games a pair.
REFERENCE_ROWS = (("ref:low", "gnugo:1", 16, 16, 0), ("ref:low", "gnugo:5", 8, 24, 0),
                  ("ref:low", "gnugo:10", 2, 30, 0), ("ref:low", "ref:high", 7, 25, 0),
                  ("gnugo:1", "ref:high", 4, 28, 0), ("gnugo:5", "ref:high", 12, 20, 0),
                  ("ref:high", "gnugo:10", 12, 20, 0))


def test_a_run_that_played_only_shipped_rungs_is_on_cgoss_scale(monkeypatch):
    # a run without GNU Go and KataGo: its checkpoints played random and the reference players
    run = [{"a": "ckpt-100", "b": "random", "wins_a": 16, "wins_b": 0, "draws": 0},
           {"a": "ckpt-100", "b": "ref:low", "wins_a": 24, "wins_b": 8, "draws": 0},
           {"a": "ckpt-200", "b": "ckpt-100", "wins_a": 24, "wins_b": 8, "draws": 0},
           {"a": "ckpt-200", "b": "ref:high", "wins_a": 16, "wins_b": 16, "draws": 0}]
    # without the reference players' calibration: no CGOS estimate at all
    assert strength_of(RatingsTable(run)).cgos == {}
    # the made-up rows beside the shipped calibration less its own reference players' rows
    # (which would move the GNU Go levels the made-up ones are measured against)
    base = tuple(row for row in shipped_rows()
                 if not any(name.startswith("ref:") for name in row[:2]))
    use_calibration(monkeypatch, base + REFERENCE_ROWS)
    view = strength_of(RatingsTable(run))
    # ref:high's distance to the stand-in from the calibration games alone (an independent fit
    # of those rows), and ckpt-200 split 16-16 with it: the same rating, give or take the prior
    alone = cgos_ratings(RatingsTable([{"a": a, "b": b, "wins_a": wa, "wins_b": wb, "draws": d}
                                       for a, b, wa, wb, d in REFERENCE_ROWS]))
    high = alone["ref:high"][0]
    # the direct pair alone says 1800 + 400 log10(12 / 20) = 1711; the chain through gnugo:5
    # says about the same
    assert abs(high - (CGOS_ANCHOR_ELO + 400 * math.log10(12 / 20))) < 60
    rating, low, high95 = view.cgos["ckpt-200"]
    assert abs(rating - high) < 25 and high95 - low < 400
    assert view.cgos["ckpt-100"][0] < rating and "ckpt-100" in view.cgos
    # the stand-in itself was never played in the run: it is in the fit through the
    # calibration rows only
    assert all(CGOS_STAND_IN not in (r["a"], r["b"]) for r in run)
    assert view.cgos[CGOS_STAND_IN][0] == CGOS_ANCHOR_ELO


def test_the_shipped_reference_player_puts_a_run_without_gnu_go_on_cgoss_scale(monkeypatch):
    # a run on a machine without GNU Go and KataGo: its checkpoint played random and the
    # shipped ref:qs60-avx2, 32 games; its CGOS estimate comes from the shipped calibration
    from fastgo.reference_players import REFERENCES_ENV, read_index

    monkeypatch.delenv(REFERENCES_ENV, raising=False)
    assert "qs60-avx2" in read_index()
    run = [{"a": "ckpt-100", "b": "random", "wins_a": 16, "wins_b": 0, "draws": 0},
           {"a": "ckpt-100", "b": "ref:qs60-avx2", "wins_a": 16, "wins_b": 16, "draws": 0}]
    view = strength_of(RatingsTable(run))
    rating, low, high = view.cgos["ckpt-100"]
    ref = view.cgos["ref:qs60-avx2"][0]
    # level with the reference player, whose games put it near gnugo:10 (19-21 against it)
    assert abs(rating - ref) < 25 and abs(ref - CGOS_ANCHOR_ELO) < 120
    assert high - low < 400
    # without the calibration rows: no estimate
    use_calibration(monkeypatch, ())
    assert strength_of(RatingsTable(run)).cgos == {}


def test_a_young_run_is_on_cgoss_scale_from_its_first_rung(monkeypatch):
    # a run's first minutes on a machine without GNU Go and KataGo: its checkpoint beat random
    # and split with mcts:1000, the lowest calibrated rung; the chain of shipped players above
    # it (fastgo/references/index.json) carries it to gnugo:10 = 1800
    from fastgo.reference_players import REFERENCES_ENV, read_index

    monkeypatch.delenv(REFERENCES_ENV, raising=False)
    shipped = ["ref:" + name for name in read_index()]
    run = [{"a": "ckpt-100", "b": "random", "wins_a": 16, "wins_b": 0, "draws": 0},
           {"a": "ckpt-100", "b": "mcts:1000", "wins_a": 8, "wins_b": 8, "draws": 0}]
    cgos = strength_of(RatingsTable(run)).cgos
    rating, low, high = cgos["ckpt-100"]
    assert low < rating < high < cgos["gnugo:1"][0] < CGOS_ANCHOR_ELO
    # the shipped players rise as the index lists them, the first far below the last
    ratings = [cgos[name][0] for name in shipped]
    assert ratings[-1] - ratings[0] > 600
    assert all(later > earlier - 150 for earlier, later in zip(ratings, ratings[1:]))
    use_calibration(monkeypatch, ())
    assert strength_of(RatingsTable(run)).cgos == {}


HOLDOUT = pathlib.Path(__file__).resolve().parents[2] / "data" / "ladder_holdout.jsonl"


def test_the_shipped_fit_places_each_rung_as_held_out_matches_say(monkeypatch):
    # direct matches kept out of the table (tests/data/ladder_holdout.jsonl: `fastgo arena A B
    # --games 40`, pairs two links apart): the fit of the shipped calibration alone says how far
    # apart A and B are, with its interval; each held-out match must agree within the two
    # intervals together
    from fastgo.reference_players import REFERENCES_ENV
    from rundata.elo_fit import fit_ratings
    from rundata.match_stats import elo_from_score, wilson_interval
    from rundata.ratings_table import read_table

    monkeypatch.delenv(REFERENCES_ENV, raising=False)
    held = read_table(HOLDOUT)
    table = ladder.calibration()
    assert len(held) >= 4 and not held.skipped
    for row in held:
        a, b, games = row["a"], row["b"], row["games"]
        # the fit rests on the chain through the rung between them, not on their own games
        direct = sum(r["games"] for r in table if {r["a"], r["b"]} == {a, b})
        assert games >= 40 and direct < games, (a, b, direct)
        elo, low, high = fit_ratings(table, anchor=a)[b]          # b over a, by the fit
        score = (row["wins_a"] + 0.5 * row["draws"]) / games
        s_low, s_high = wilson_interval(row["wins_a"] + 0.5 * row["draws"], games)
        direct = -elo_from_score(score)
        half = math.hypot((high - low) / 2, (elo_from_score(s_high) - elo_from_score(s_low)) / 2)
        assert abs(elo - direct) <= half, (a, b, elo, direct, half)


def test_the_shipped_rungs_span_from_mcts_1000_to_300_above_the_hour(monkeypatch):
    # the ladder a machine without GNU Go and KataGo plays: its lowest reference player just
    # above mcts:1000, its highest 300 Elo or more above the 60-minute quickstart checkpoint of
    # a 2-core Zen 4 at the evaluator's 64 visits (ref:qs60-zen4-v64), neighbours 20-80%
    from fastgo.reference_players import REFERENCES_ENV, read_index

    monkeypatch.delenv(REFERENCES_ENV, raising=False)
    cgos = strength_of(RatingsTable([{"a": "mcts:1000", "b": "random", "wins_a": 1,
                                      "wins_b": 0, "draws": 0}])).cgos
    refs = sorted(("ref:" + name for name in read_index()), key=lambda n: cgos[n][0])
    assert 0 < cgos[refs[0]][0] - cgos["mcts:1000"][0] < 200
    assert cgos[refs[-1]][0] - cgos["ref:qs60-zen4-v64"][0] >= 300
    # what a repository clone carries for them: under 10 MB
    folder = pathlib.Path(fastgo.__file__).resolve().parent / "references"
    assert sum(f.stat().st_size for f in folder.iterdir()) < 10 << 20
