"""`fastgo ratings [TABLE]`: every player's maximum-likelihood Elo and CGOS estimate
(rundata.strength) with its 95% interval and game count, strongest first. Called by
fastgo_cli.main through `add_arguments(parser)` and `run(args) -> int`."""
from __future__ import annotations

import math
import os
import sys

from fastgo import bounded_json
from fastgo.files import check_regular, printable
from rundata.rundir import RATINGS_TABLE

PROG = "fastgo ratings"


def parents():
    from fastgo_cli.parser import json_options
    return (json_options("{name: {elo, low, high, games, cgos?: [elo, low, high]}}"),)


def add_arguments(parser):
    parser.add_argument("table", nargs="?", default=RATINGS_TABLE, metavar="TABLE",
                        help="the ratings table, JSON lines")
    parser.add_argument("--anchor", default="random",
                        help="player fixed at 0 Elo (absent: the table's first player)")
    from rundata.elo_fit import PRIOR_GAMES, SEQUENCE_GAMES
    parser.add_argument("--prior", type=float, default=PRIOR_GAMES, metavar="GAMES",
                        help="virtual draws between each pair of players that met (BayesElo "
                             "uses 2; ours is weak because a strong prior pins a chain of "
                             "one-sided results)")
    parser.add_argument("--sequence-prior", type=float, default=SEQUENCE_GAMES, metavar="GAMES",
                        help="virtual draws between a run's consecutive checkpoints (players "
                             "named ckpt-STEP), as KataGo's elo.py has them; 0: none")


def _fmt(value):
    return f"{value:+.0f}" if math.isfinite(value) else ("+inf" if value > 0 else "-inf")


def run(args):
    from fastgo.files import atomic_write_text
    from rundata.elo_fit import CGOS_STAND_IN, FIT_CHECKPOINTS, cgos_text
    from rundata.ratings_table import player_games, read_table
    from rundata.strength import strength_of

    if os.path.isdir(args.table):
        print(f"{PROG}: {args.table}: is a directory", file=sys.stderr)
        return 2
    if not os.path.exists(args.table):
        print(f"{PROG}: {args.table}: no such ratings table", file=sys.stderr)
        return 2
    if not os.path.isfile(args.table):       # a FIFO or device: refused, never waited on
        print(f"{PROG}: {args.table}: not a regular file", file=sys.stderr)
        return 2
    if args.json is not None:
        problem = _json_target_problem(args.json, args.table)
        if problem:
            print(f"{PROG}: --json {printable(args.json)}: {problem}", file=sys.stderr)
            return 2
    for flag, value in (("--prior", args.prior), ("--sequence-prior", args.sequence_prior)):
        if not 0 <= value <= 1e6:
            print(f"{PROG}: {flag} must be in 0..1000000, got {value}", file=sys.stderr)
            return 2
    try:
        table = read_table(args.table)
    except OSError as exc:
        print(f"{PROG}: cannot read {args.table}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    if table.skipped:
        lines = ", ".join(str(n) for n in table.skipped_lines[:10])
        more = " ..." if table.skipped > 10 else ""
        print(f"{PROG}: skipped {table.skipped} damaged line(s) of {args.table}: {lines}{more}",
              file=sys.stderr)
    if not table:
        print(f"{args.table}: no results yet")
        return 0
    if table.note:
        print(f"{PROG}: {args.table}: {table.note}", file=sys.stderr)
    strength = strength_of(table, anchor=args.anchor, prior_games=args.prior,
                           sequence_games=args.sequence_prior)
    if strength.error:
        print(f"{PROG}: {args.table}: {strength.error}", file=sys.stderr)
        return 2
    ratings, cgos, groups = strength.elo, strength.cgos, strength.groups
    games = player_games(table)
    total = sum(row["wins_a"] + row["wins_b"] + row["draws"] for row in table)
    print(f"{args.table}: {len(table)} results, {total} games, {len(ratings)} players; "
          f"{groups[0][0]} = 0, prior of {args.prior:g} virtual draws per pair and "
          f"{args.sequence_prior:g} between consecutive checkpoints")
    width = max(len(name) for name in ratings)
    if cgos:
        print(f"CGOS 9x9 scale: {CGOS_STAND_IN} (GNU Go at its default level, CGOS's options) "
              f"stands in for CGOS's anchor at 1800")
    if strength.left_out:
        print(f"{strength.left_out} older checkpoints left out of the fit (the newest "
              f"{FIT_CHECKPOINTS} are rated, and before them one every 25% of steps)")
    added = sum(1 for row in strength.rows if row.get("calibration"))
    if added:
        print(f"with the ladder's {added} calibration results (`fastgo ladder` shows them; "
              f"their games are not counted below)")
    print(f"{'player':<{width}}  {'Elo':>6}  {'95% interval':>15}  {'games':>6}"
          + ("  CGOS (95% interval)" if cgos else ""))
    for k, group in enumerate(groups):
        if k:
            print(f"(not connected to {groups[0][0]} by games: relative to {group[0]} = 0)")
        for name in sorted(group, key=lambda n: -ratings[n][0]):
            elo, low, high = ratings[name]
            print(f"{name:<{width}}  {_fmt(elo):>6}  {_fmt(low):>7}..{_fmt(high):<7}  "
                  f"{games.get(name, 0):>6}"
                  + (f"  {cgos_text(cgos[name])[5:]}" if name in cgos else ""))
    if args.json is not None:
        data = {name: {"elo": round(r[0], 2), "low": round(r[1], 2), "high": round(r[2], 2),
                       "games": games.get(name, 0)} for name, r in ratings.items()}
        for name, r in cgos.items():
            data[name]["cgos"] = [round(v, 2) for v in r]
        try:
            check_regular(args.json)
            atomic_write_text(args.json, bounded_json.dumps(data, indent=2) + "\n")
        except OSError as err:
            print(f"{PROG}: cannot write {printable(args.json)}: {err.strerror or err}",
                  file=sys.stderr)
            return 2
    return 0


def _json_target_problem(target, table) -> str:
    """Why --json cannot name `target` ('' when it can): it must not be the table itself, and
    what is there already must be a regular file (written over by rename, never opened)."""
    try:
        check_regular(target)
        if os.path.exists(target) and os.path.samefile(target, table):
            return "is the ratings table itself"
    except OSError as err:
        return err.strerror or str(err)
    except ValueError:
        return "not a usable path"
    if not os.path.isdir(os.path.dirname(os.path.abspath(target))):
        return "no such directory"
    return ""
