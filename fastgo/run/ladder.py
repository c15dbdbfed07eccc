"""The evaluator's ladder of anchors, from `random` to KataGo, and the games that calibrate it:
rungs below and above GNU Go level 10 (CGOS's stand-in, fastgo.run.elo_fit.CGOS_STAND_IN) whose
distance to it was measured once (docs/guide.md#the-ladder) and is added to every fit that
rates one of them (fastgo.run.strength). A checkpoint near a KataGo rung gets its CGOS rating
from games near 50% rather than from a one-sided record against GNU Go; a run that played only
the shipped reference players (ref:NAME, fastgo.reference_players), on a machine without GNU Go
or KataGo, still gets one: the calibration games join its rungs to gnugo:10 = 1800.

Each rung plays at fixed visits, so its strength does not depend on the machine: the games
below were played once, at the arena's settings, and hold wherever the rung is played.
fastgo.run.config reads LADDER (and imports the table and the fit this module needs already).
"""
from __future__ import annotations

from fastgo.run.elo_fit import CGOS_STAND_IN
from fastgo.run.ratings_table import RatingsTable

# evaluator.anchors' default: in rising strength (as far as a dozen games a pair tell: two rungs
# near 50%, katago:1,t=0.5 and katago:1, may come out either way); the gnugo ones are skipped
# where GNU Go is not installed (apt-get install gnugo), the katago ones where KataGo is not
# found (`fastgo katago fetch`). Each shipped reference player (fastgo/references/index.json)
# is a rung here, ref:NAME at its place by strength (a test holds the index and the ladder to
# each other); they are what a machine without GNU Go and KataGo plays.
LADDER = ("random", "mcts:100", "mcts:1000", "gnugo:1", "gnugo:5", "ref:qs60-avx2", "gnugo:10",
          "katago:1,t=4,r=0.05", "katago:1,t=4", "katago:1,t=2", "katago:1,t=1.4",
          "katago:1,t=1", "katago:1,t=0.5", "katago:1")

# The calibration games: (a, b, wins_a, wins_b, draws), the arena's result of a against b
# (`fastgo arena A B --size 9`: Tromp-Taylor area, komi 7.5, colours alternating), as
# docs/guide.md#the-ladder lists them: a chain through the stand-in, each neighbouring pair of
# calibrated rungs on LADDER played (the lower first, scoring 20-80%: games near 50% say the
# most), and pairs that skip a rung where they were played. A reference player's rows: its games
# against gnugo:1, gnugo:5 and gnugo:10 and against its calibrated neighbours, added here (and
# to the guide's table) with its file; a calibrated rung is any player of a row.
CALIBRATION = (
    ("gnugo:1", "ref:qs60-avx2", 10, 14, 0),
    ("gnugo:5", "ref:qs60-avx2", 18, 22, 0),
    ("ref:qs60-avx2", "gnugo:10", 19, 21, 0),
    ("gnugo:10", "katago:1,t=4,r=0.05", 10, 14, 0),
    ("katago:1,t=4,r=0.05", "katago:1,t=4", 6, 10, 0),
    ("gnugo:10", "katago:1,t=4", 3, 21, 0),
    ("katago:1,t=4", "katago:1,t=2", 5, 11, 0),
    ("katago:1,t=2", "katago:1,t=1.4", 4, 12, 0),
    ("katago:1,t=1.4", "katago:1,t=1", 5, 11, 0),
    ("katago:1,t=4", "katago:1,t=1", 1, 15, 0),
    ("katago:1,t=2", "katago:1,t=1", 1, 15, 0),
    ("katago:1,t=1", "katago:1,t=0.5", 4, 12, 0),
    ("katago:1,t=0.5", "katago:1", 10, 6, 0),
    ("katago:1,t=1", "katago:1", 2, 18, 0),
)


def rungs() -> set:
    """The calibrated rungs: every player of CALIBRATION but the stand-in, below it or above."""
    return {name for row in CALIBRATION for name in row[:2]} - {CGOS_STAND_IN}


def with_calibration(rows):
    """`rows` (a ratings table's rows) plus the calibration games when a player of `rows` is a
    calibrated rung (else `rows` itself); the rows added carry "calibration": True. The stand-in
    is among their players, so a fit of the result has it, and so a CGOS estimate, wherever a
    rung is connected by games to the players rated, whether the run played GNU Go or not."""
    above = rungs()
    if not any(row.get("a") in above or row.get("b") in above for row in rows):
        return rows
    added = [{"a": a, "b": b, "wins_a": wa, "wins_b": wb, "draws": d, "games": wa + wb + d,
              "calibration": True} for a, b, wa, wb, d in CALIBRATION]
    skipped = rows.skipped_lines if isinstance(rows, RatingsTable) else ()
    return RatingsTable(list(rows) + added, skipped)
