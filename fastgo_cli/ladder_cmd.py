"""`fastgo ladder`: each rung of the ladder with its CGOS estimate and interval from the
calibration games alone, and the games behind each link; `fastgo ladder calibrate --minutes M`:
plays the least certain links for M minutes and adds each finished game to the calibration
table (evaluation.calibration). Ctrl-C (or SIGTERM) keeps every finished game; so does a kill,
since each game is in the table once it is over."""
from __future__ import annotations

import os
import sys

PROG = "fastgo ladder"
MAX_MINUTES = 7 * 24 * 60


def add_arguments(parser):
    import argparse

    from fastgo_cli.parser import seed_options

    parser.add_argument("--table", default=None, metavar="FILE",
                        help="the calibration table (default: the one beside the reference "
                             "players' index, FASTGO_REFERENCES or the shipped one)")
    sub = parser.add_subparsers(dest="action", metavar="calibrate")
    calibrate = sub.add_parser("calibrate", parents=[seed_options(
        help="the players' base seed (default: a fresh one, so that no two pieces repeat "
             "their games)")],
        help="play the least certain links and add the games to the table")
    calibrate.add_argument("--table", default=argparse.SUPPRESS, metavar="FILE",
                           help="the calibration table to add to (default: the one beside the "
                                "reference players' index)")
    calibrate.add_argument("--minutes", type=float, required=True, metavar="M",
                           help="play for this long, then stop (games unfinished then are dropped)")
    calibrate.add_argument("--rung", default=None, metavar="SPEC",
                           help="calibrate only this rung's links (a player spec: ref:NAME of "
                                "your own folder, gtp:\"COMMAND\", mcts:N, ...)")
    calibrate.add_argument("--near", default=None, metavar="SPEC",
                           help="with --rung: the rated rung it is thought to be close to, its "
                                "first opponent while it has no rating (default: the middle of "
                                "the ladder)")
    calibrate.add_argument("--exclude", action="append", default=[], metavar="SPEC",
                           help="leave this rung out (repeatable): e.g. gnugo:10, whose games "
                                "cost seconds a move, for a piece of the cheap links")
    calibrate.add_argument("--target", type=int, default=None, metavar="GAMES",
                           help="games a link needs (default: 100)")
    calibrate.add_argument("--games-at-once", type=int, default=None, metavar="GAMES",
                           help="games of a link played at the same time (default: 8)")


def _error(text):
    print(f"{PROG}: {text}", file=sys.stderr)
    return 2


def _players(table):
    """(the rungs that can run here, {rung: why not})."""
    from evaluation.calibration import available, ladder_players
    from fastgo.reference_players import read_index
    from play.specs import missing
    from rundata.ladder import LADDER

    names = ladder_players(table, LADDER, read_index())
    return available(names, missing)


def run(args):
    from evaluation.calibration import format_view, ladder_view
    from fastgo.files import printable
    from fastgo.reference_players import ReferenceIndexError
    from rundata.calibration_table import (
        CalibrationError,
        calibration_path,
        calibration_rows,
        read_calibration,
    )

    path = args.table if args.table is not None else calibration_path()

    def read():
        # the table named, or the games that apply here: the shipped table's, and those of
        # a folder of one's own (FASTGO_REFERENCES), which calibrate adds to
        return read_calibration(path) if args.table is not None else calibration_rows()
    try:
        table = read()
        players, skipped = _players(table)
    except (CalibrationError, ReferenceIndexError) as err:
        return _error(printable(str(err)))
    if args.action == "calibrate":
        return _calibrate(args, path, read, players, skipped)
    # the links among the rungs this machine plays; the others rated below them
    everyone = ladder_view(table)
    rated = dict(everyone.order)
    view = ladder_view(table, [name for name, _ in everyone.order if name not in skipped])
    if not everyone.order:
        print(f"{printable(path)}: no calibration games yet")
        return 0
    games = sum(row["games"] for row in table)
    print(f"{printable(path)}: {games} games, {len(everyone.order)} rungs; CGOS's 9x9 scale "
          f"with gnugo:10 = 1800, 95% intervals")
    for line in format_view(view, {k: v for k, v in skipped.items() if k in rated},
                            table.skipped, rated):
        print(line)
    return 0


def _calibrate(args, path, read, players, skipped):
    from evaluation.calibration import BATCH_GAMES, SIZE, TARGET_GAMES, Calibration
    from fastgo.files import printable
    from fastgo.player_spec import parse_spec
    from play.deferred_signals import Interrupts
    from play.match import play_match
    from play.specs import make_spec_side, missing
    from rundata.calibration_table import CalibrationError
    from rundata.ratings_table import table_name

    if not 0 < args.minutes <= MAX_MINUTES:
        return _error(f"--minutes must be in (0, {MAX_MINUTES}], got {args.minutes:g}")
    target = TARGET_GAMES if args.target is None else args.target
    batch = BATCH_GAMES if args.games_at_once is None else args.games_at_once
    if not 1 <= target <= 1_000_000:
        return _error(f"--target must be in 1..1000000, got {target}")
    if not 1 <= batch <= 256:
        return _error(f"--games-at-once must be in 1..256, got {batch}")
    only = None
    if args.rung is not None:
        try:
            spec = parse_spec(args.rung)
        except ValueError as err:
            return _error(f"--rung: {err}")
        if spec.kind == "checkpoint":
            return _error("--rung: a checkpoint file is no rung (ship it as a reference player: "
                          "ref:NAME, docs/guide.md#reference-players)")
        gone = missing(spec)
        if gone is not None:
            return _error(f"--rung {printable(args.rung)}: {gone.why}")
        only = table_name(spec.name)
        if only not in players:
            players.append(only)
    left_out = set()
    for text in args.exclude:
        try:
            left_out.add(table_name(parse_spec(text).name))
        except ValueError as err:
            return _error(f"--exclude: {err}")
    if only in left_out:
        return _error(f"--rung {printable(args.rung)} is also excluded")
    players = [name for name in players if name not in left_out]
    groups: dict = {}
    for name, why in skipped.items():
        groups.setdefault(why, []).append(name)
    for why, names in groups.items():
        print(f"{PROG}: not played here: {', '.join(names)}: no {why}", file=sys.stderr)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.access(directory, os.W_OK):
        return _error(f"{printable(path)}: its folder is not writable (--table FILE: another "
                      "table)")

    def side(name, seed):
        made = make_spec_side(name, seed=seed)
        made.name = name
        return made

    def play(a, b, games, offset, on_over, stop):
        def kept(number, a_black, score_a):
            signals.hold()               # a game over is in the table before a signal acts
            try:
                on_over(number, a_black, score_a)
            finally:
                signals.release()
        return play_match(a, b, games, size=SIZE, game_offset=offset, on_over=kept, stop=stop,
                          signals=signals)

    near = None
    if args.near is not None:
        try:
            near = table_name(parse_spec(args.near).name)
        except ValueError as err:
            return _error(f"--near: {err}")
    calibration = Calibration(path, players, side, play, print, target=target, batch=batch,
                              only=only, near=near, seed=args.seed, read=read)
    status = 0
    with Interrupts(quiet_after=True) as signals:
        try:
            why = calibration.run(args.minutes)
            print(f"{PROG}: {why}; {calibration.added} games added to {printable(path)}")
        except KeyboardInterrupt:
            print(f"{PROG}: interrupted; {calibration.added} finished games added to "
                  f"{printable(path)}", file=sys.stderr)
            status = 130
        except (CalibrationError, ValueError, OSError) as err:
            print(f"{PROG}: {printable(str(err))}; {calibration.added} games added before",
                  file=sys.stderr)
            status = 1
        finally:
            signals.hold()
            calibration.close()
    return status
