"""The evaluator's choices (evaluation.pairings): which earlier checkpoints and anchors a checkpoint
plays, and when a pairing has played enough. Names and numbers in, choices out."""
import math

import pytest

from evaluation.pairings import (
    INFORMATIVE,
    PairingRule,
    checkpoint_opponents,
    elo_interval_width,
    expected_score,
    next_anchor,
    one_sided,
    pairing_verdict,
    retired_anchors,
)

ANCHORS = ["random", "mcts:100", "mcts:1000", "gnugo:1", "gnugo:5", "gnugo:10"]


def evaluated(*steps):
    return [{"player": f"ckpt-{s}", "step": s} for s in steps]


# --- earlier checkpoints -----------------------------------------------------------------------

def test_previous_half_and_quarter_of_the_step():
    rows = evaluated(0, 400, 900, 1600, 2500, 3600, 4900)
    # step 6400: previous 4900; nearest to 3200: 3600 (400 away; 2500 is 700 away); nearest
    # to 1600: 1600 itself
    assert checkpoint_opponents(6400, rows) == (["ckpt-4900", "ckpt-3600", "ckpt-1600"], {})
    # step 1000: previous 900; 500 -> 400; 250 -> 400 again (counted once)
    assert checkpoint_opponents(1000, rows) == (["ckpt-900", "ckpt-400"], {})
    # the first checkpoint has nothing earlier; later rows (a restarted run) are ignored
    assert checkpoint_opponents(0, rows) == ([], {})
    assert checkpoint_opponents(401, rows)[0] == ["ckpt-400", "ckpt-0"]


def test_an_earlier_checkpoint_beyond_the_range_is_skipped_not_the_previous_one():
    rows = evaluated(0, 1000, 2000, 3000, 4000)
    elo = {"ckpt-0": 0, "ckpt-1000": 300, "ckpt-2000": 700, "ckpt-3000": 1000, "ckpt-4000": 1100}

    def predict(a, b):
        return expected_score(elo[a], elo[b])

    # step 8000: previous 4000, half 4000 (the same), quarter 2000: 4000 is expected to score
    # 1 / (1 + 10^(-400/400)) = 0.91 against it, beyond 0.85
    picked, skipped = checkpoint_opponents(8000, rows, predict)
    assert picked == ["ckpt-4000"]
    assert skipped == {"ckpt-2000": "ckpt-4000's expected score 0.91 against it"}
    # a band that reaches into the range (an uncertain rating): played
    assert checkpoint_opponents(8000, rows, lambda a, b: (0.6, 0.91, 0.99))[0] == \
        ["ckpt-4000", "ckpt-2000"]
    assert checkpoint_opponents(8000, rows, lambda a, b: (0.88, 0.91, 0.99))[1] == \
        {"ckpt-2000": "ckpt-4000's expected score 0.91, at least 0.88 against it"}
    # unknown ratings (None): played
    assert checkpoint_opponents(8000, rows, lambda a, b: None)[0] == ["ckpt-4000", "ckpt-2000"]
    # even a previous checkpoint far below is played: it chains the fit
    elo["ckpt-3000"] = -2000
    assert checkpoint_opponents(3500, rows[:4], predict)[0][0] == "ckpt-3000"


# --- anchors -----------------------------------------------------------------------------------

def test_first_checkpoint_climbs_from_the_weakest_unrated_anchor():
    choice = dict(retired={}, predicted={}, max_informative=2)
    assert next_anchor(ANCHORS, played={}, **choice) == ("random", {})
    # random won beyond the range (+1): the next unrated one
    assert next_anchor(ANCHORS, played={"random": 1}, **choice)[0] == "mcts:100"
    # mcts:100 lost beyond the range (-1): nothing stronger this time
    anchor, skipped = next_anchor(ANCHORS, played={"random": 0, "mcts:100": -1}, **choice)
    assert anchor is None
    assert skipped == {name: "stronger than mcts:100" for name in ANCHORS[2:]}
    # two informative pairings are enough
    assert next_anchor(ANCHORS, played={"random": 0, "mcts:100": 0}, **choice) == (None, {})


def test_rated_anchors_nearest_to_even_first_and_predictions_rule_out():
    retired = {"random": "ckpt-800 won 8-0", "mcts:100": "ckpt-1600 won 15-1"}
    predicted = {"mcts:1000": 0.9, "gnugo:1": 0.62, "gnugo:5": 0.3, "gnugo:10": 0.05}
    anchor, skipped = next_anchor(ANCHORS, retired=retired, played={}, predicted=predicted)
    assert anchor == "gnugo:1"                 # |0.62 - 0.5| < |0.3 - 0.5|
    assert skipped == {"random": "retired: ckpt-800 won 8-0",
                       "mcts:100": "retired: ckpt-1600 won 15-1",
                       "mcts:1000": "expected score 0.90", "gnugo:10": "expected score 0.05"}
    anchor, _ = next_anchor(ANCHORS, retired=retired, played={"gnugo:1": 0},
                            predicted=predicted)
    assert anchor == "gnugo:5"
    # a band: skipped only when all of it lies beyond the range; ranked by its middle
    banded = {"mcts:1000": (0.7, 0.9, 0.97), "gnugo:1": (0.3, 0.62, 0.8),
              "gnugo:5": (0.01, 0.05, 0.1)}
    anchor, skipped = next_anchor(ANCHORS, retired=retired, played={}, predicted=banded)
    assert anchor == "gnugo:1"
    assert skipped["gnugo:5"] == "expected score 0.05, at most 0.10"
    assert skipped["gnugo:10"] == "stronger than gnugo:5" and "mcts:1000" not in skipped
    anchor, _ = next_anchor(ANCHORS, retired=retired, played={"gnugo:1": 0}, predicted=banded)
    assert anchor == "mcts:1000"
    # predicted below the range rules out the stronger, unrated ones too
    anchor, skipped = next_anchor(["random", "gnugo:1", "gnugo:5"], retired={}, played={},
                                  predicted={"random": 0.99, "gnugo:1": 0.05})
    assert anchor is None and skipped["gnugo:5"] == "stronger than gnugo:1"
    # no anchor at all: nothing to play
    assert next_anchor([], retired={}, played={}, predicted={}) == (None, {})
    assert next_anchor(ANCHORS, retired={}, played={}, predicted={}, max_informative=0) == \
        (None, {})


def test_an_anchor_won_beyond_the_range_is_retired_for_later_checkpoints():
    rows = [{"a": "ckpt-0", "b": "random", "wins_a": 3, "wins_b": 5, "draws": 0},
            {"a": "ckpt-800", "b": "random", "wins_a": 8, "wins_b": 0, "draws": 0},
            {"a": "ckpt-800", "b": "mcts:100", "wins_a": 5, "wins_b": 3, "draws": 0},
            # one pairing in two rows (an interrupted evaluation resumed): 8-1 + 6-0 = 14-1
            {"a": "ckpt-1600", "b": "mcts:100", "wins_a": 8, "wins_b": 1, "draws": 0},
            {"a": "ckpt-1600", "b": "mcts:100", "wins_a": 6, "wins_b": 0, "draws": 0},
            # not evaluator checkpoints, or not anchors: no say
            {"a": "other", "b": "mcts:1000", "wins_a": 20, "wins_b": 0, "draws": 0},
            {"a": "ckpt-1600", "b": "ckpt-800", "wins_a": 20, "wins_b": 0, "draws": 0}]
    assert retired_anchors(rows, ANCHORS) == {"random": "ckpt-800 won 8-0",
                                              "mcts:100": "ckpt-1600 won 14-1"}


# --- when a pairing stops ----------------------------------------------------------------------

def test_one_sided_needs_the_score_beyond_the_range_and_the_interval_off_even():
    assert one_sided(8, 0) == 1 and one_sided(0, 8) == -1
    # 7-1: 0.875 > 0.85, Wilson interval 0.53..0.98 excludes 0.5
    assert one_sided(7, 1) == 1
    # 6-2: 0.75, within the range
    assert one_sided(6, 2) == 0
    # 2-0: 1.0 but the interval (0.34..1) includes an even score
    assert one_sided(2, 0) == 0
    assert one_sided(0, 0) == 0
    # draws count half: 7 wins, 2 draws of 9 = 0.89, interval 0.57..0.98
    assert one_sided(7, 0, 2) == 1


def test_pairing_verdicts():
    rule = PairingRule(batch=8, max_games=32, elo_width=300.0)
    assert pairing_verdict(0, 0, 0, rule) is None
    assert pairing_verdict(8, 0, 0, rule) == "one-sided"
    assert pairing_verdict(4, 4, 0, rule) is None          # 8 games at 50%: 450 Elo wide
    # 12-12: Wilson 0.314..0.686, Elo -136..+136 = 271 wide <= 300
    assert elo_interval_width(12, 12) == pytest.approx(271, abs=1)
    assert pairing_verdict(12, 12, 0, rule) == "interval"
    assert pairing_verdict(8, 8, 0, rule) is None          # 16 games: 328 wide
    # 24-8 at the maximum: 0.75, 271 wide: 'interval' comes first
    assert pairing_verdict(24, 8, 0, rule) == "interval"
    narrow = PairingRule(batch=8, max_games=32, elo_width=100.0)
    assert pairing_verdict(16, 16, 0, narrow) == "max games"
    assert [rule.next_batch(n) for n in (0, 8, 24, 30, 32)] == [8, 8, 8, 2, 0]


def test_expected_score_and_the_range():
    assert expected_score(0, 0) == 0.5
    assert expected_score(400, 0) == pytest.approx(10 / 11)
    # the range's ends are about -300 and +300 Elo
    assert 400 * math.log10(INFORMATIVE[1] / INFORMATIVE[0]) == pytest.approx(301, abs=1)


def test_kept_copies_are_spaced_geometrically():
    from rundata.rundir import kept_steps

    # the two newest; then going down, each at most 1/1.25 of the last kept; and the first
    steps = [0, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]
    assert sorted(kept_steps(steps)) == [0, 100, 200, 300, 400, 500, 700, 900, 1000]
    # 900 and 1000 newest; 700 * 1.25 = 875 <= 900; 600 * 1.25 = 750 > 700: dropped; 625 <= 700
    assert kept_steps([]) == set() and kept_steps([7]) == {7} and kept_steps([3, 9]) == {3, 9}
    # any fraction of a later step finds a kept one within a factor 1.25 (above the first)
    kept = sorted(kept_steps(range(0, 100_001, 250)))
    assert len(kept) < 50
    for target in (1000, 3333, 20_000, 49_999):
        nearest = min(kept, key=lambda s: abs(s - target))
        assert target / 1.25 <= nearest <= target * 1.25

