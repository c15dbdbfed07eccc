"""The recent self-play endings (rundata.ending_stats) and where they are shown: the status line
and the dashboard's status."""
import pytest

from rundata.ending_stats import EndingStats
from supervision.status import endings_text


def test_shares_and_median_margin_of_the_recent_games():
    stats = EndingStats(recent=4)
    assert stats.summary() == {"games": 0, "passes": 0.0, "move_cap": 0.0, "resign": 0.0,
                               "median_margin": None}
    for end, score in [("move_cap", 61.5), ("passes", 3.5), ("passes", -8.5), ("resign", 0.0),
                       ("passes", -2.5)]:
        stats.add(end, score)
    # the first game (the cap, 61.5) has left the last 4: passes 3 of 4, resign 1 of 4;
    # margins on the board |3.5|, |-8.5|, |-2.5| -> median 3.5 (the resignation has none)
    assert stats.summary() == {"games": 4, "passes": 0.75, "move_cap": 0.0, "resign": 0.25,
                               "median_margin": 3.5}


@pytest.mark.parametrize("end, recent", [("draw", 10), ("passes", 0), ("passes", 10**7)])
def test_bad_input_is_refused_by_name(end, recent):
    with pytest.raises(ValueError, match="end must be|recent must be"):
        EndingStats(recent=recent).add(end, 0.0)


def test_status_line_text():
    summary = {"games": 40, "passes": 0.875, "move_cap": 0.025, "resign": 0.1,
               "median_margin": 9.5}
    assert endings_text(summary) == "ends 88/2/10% margin 9.5  "
    assert endings_text({**summary, "median_margin": None}) == "ends 88/2/10% margin -  "
    assert endings_text({**summary, "games": 0}) == ""
    for bad in (None, "x", {"games": "many"}, {"games": 3, "passes": "half"}):
        assert endings_text(bad) == ""


def test_dashboard_status_checks_every_field():
    from dashboard.run_view import _endings
    good = {"games": 12, "passes": 0.5, "move_cap": 0.25, "resign": 0.25, "median_margin": 4.0}
    assert _endings(good) == good
    assert _endings({**good, "passes": 1.5}) is None
    assert _endings({**good, "games": float("nan")}) is None
    assert _endings({**good, "median_margin": "far"})["median_margin"] is None
    assert _endings([good]) is None
