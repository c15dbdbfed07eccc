"""The evaluator's ladder of anchors, from `random` to KataGo, and the games that calibrate it:
rungs below and above GNU Go level 10 (CGOS's stand-in, rundata.elo_fit.CGOS_STAND_IN) whose
distances were measured by games shipped as data (rundata.calibration_table: `fastgo ladder`
prints them, `fastgo ladder calibrate` adds to them) and are added to every fit that rates one
of them (rundata.strength). A checkpoint near a rung gets its CGOS rating from games near
50% rather than from a one-sided record against GNU Go; a run that played only the shipped
reference players (ref:NAME, fastgo.reference_players), on a machine without GNU Go or KataGo,
still gets one: the calibration games join its rungs to gnugo:10 = 1800.

Each rung plays at fixed visits, so its strength does not depend on the machine: the games were
played once, at the arena's settings, and hold wherever the rung is played.
rundata.config reads LADDER (and imports the table and the fit this module needs already).
"""
from __future__ import annotations

import logging

from rundata.calibration_table import CalibrationError, calibration_rows
from rundata.elo_fit import CGOS_STAND_IN
from rundata.ratings_table import RatingsTable

# evaluator.anchors' default: in rising strength by the calibration games
# (fastgo/references/calibration.jsonl; `fastgo ladder` prints the fit), two rungs near 50% in
# either order (katago:1,t=0.5 and katago:1). The gnugo ones are skipped where GNU Go is not
# installed (apt-get install gnugo), the katago ones where KataGo is not found (`fastgo katago
# fetch`); the reference players (fastgo/references/index.json: the quickstart's networks at
# three ages, each at several visits) and mcts:N are what a machine with neither plays, from
# mcts:100 to 300 Elo and more above a 2-core hour's checkpoint (a test holds the index, the
# ladder and the calibration to each other; random alone is uncalibrated: the fit's zero).
LADDER = ("random", "mcts:100", "mcts:200", "mcts:300", "mcts:500", "mcts:700", "mcts:1000",
          "ref:qs17-avx2-v1", "ref:qs17-avx2-v3", "ref:qs17-avx2-v8", "ref:qs17-avx2-v16",
          "ref:qs17-avx2-v32", "ref:qs17-avx2-v64", "ref:qs28-avx2-v8", "ref:qs28-avx2-v16",
          "ref:qs28-avx2-v64", "ref:qs60-avx2-v1", "ref:qs60-avx2-v8", "gnugo:1", "gnugo:5",
          "ref:qs60-zen4-v16", "ref:qs60-avx2", "gnugo:10", "ref:qs60-zen4-v32",
          "katago:1,t=4,r=0.05", "ref:qs60-zen4-v64", "katago:1,t=4", "ref:qs60-zen4-v128",
          "katago:1,t=2", "ref:qs60-zen4-v256", "ref:qs60-zen4-v512", "katago:1,t=1.4",
          "ref:qs60-zen4-v1024", "katago:1,t=1", "katago:1,t=0.5", "katago:1")


def calibration():
    """The calibration games that apply here (rundata.calibration_table.calibration_rows);
    an unreadable table counts as none, logged once per reason."""
    try:
        return calibration_rows()
    except CalibrationError as err:
        if str(err) not in _WARNED:
            _WARNED.add(str(err))
            logging.getLogger(__name__).warning("the ladder's calibration is not used: %s", err)
        return RatingsTable()


_WARNED: set = set()


def rungs(table=None) -> set:
    """The calibrated rungs: every player of the calibration games (`table`, default
    calibration()) but the stand-in, below it or above."""
    table = calibration() if table is None else table
    return {name for row in table for name in (row["a"], row["b"])} - {CGOS_STAND_IN}


def with_calibration(rows, table=None):
    """`rows` (a ratings table's rows) plus the calibration games (`table`, default
    calibration()) when a player of `rows` is a calibrated rung (else `rows` itself); the rows
    added carry "calibration": True. The stand-in is among their players, so a fit of the
    result has it, and so a CGOS estimate, wherever a rung is connected by games to the players
    rated, whether the run played GNU Go or not."""
    table = calibration() if table is None else table
    above = rungs(table)
    if not any(row.get("a") in above or row.get("b") in above for row in rows):
        return rows
    added = [{"a": row["a"], "b": row["b"], "wins_a": row["wins_a"], "wins_b": row["wins_b"],
              "draws": row["draws"], "games": row["wins_a"] + row["wins_b"] + row["draws"],
              "calibration": True} for row in table]
    skipped = rows.skipped_lines if isinstance(rows, RatingsTable) else ()
    return RatingsTable(list(rows) + added, skipped)
