"""`fastgo compare CONFIG_A CONFIG_B --duration 30m [-o/--out DIR] [--games 100] [--visits 64]
[--move-seconds S] [--opponents mcts:1000,gnugo:1] [--set KEY=VALUE ...]`: equal-time learning
comparison of two configs on this machine (comparison.compare). Parses and checks the options,
then hands over; bad input is one line on stderr and exit status 2."""
from __future__ import annotations

import os
import sys

PROG = "fastgo compare"
DEFAULT_OPPONENTS = "mcts:1000,gnugo:1"
DEFAULT_GAMES = 100
DEFAULT_VISITS = 64
DEFAULT_SEED = 1
MAX_GAMES = 100_000


def parents():
    from fastgo_cli.parser import (
        duration_options,
        game_seconds_options,
        move_seconds_options,
        out_options,
        seed_options,
    )
    return (move_seconds_options(help="play the matches at equal time, at most S seconds a move "
                                      "for each side on one thread (fastgo arena "
                                      "--move-seconds), instead of --visits"),
            game_seconds_options(help="play the matches by a game clock, T seconds for all of "
                                      "a side's moves of a game on one thread (fastgo arena "
                                      "--game-seconds), instead of --visits"),
            out_options(metavar="DIR", help="output directory: a/ and b/ (run directories), "
                                            "matches/, compare.json, compare.png (default: "
                                            "runs/compare-A-vs-B)"),
            duration_options(help="each run's wall time: 90s, 30m, 2h (required unless "
                                   "--skip-runs)"),
            seed_options(default=DEFAULT_SEED, low=1,      # selfplay.seed 0: a fresh seed
                         help="the seed of both runs (selfplay.seed, trainer.seed, "
                              "server.init_seed) and of the matches"))


def add_arguments(parser):
    parser.add_argument("config_a", metavar="CONFIG_A",
                        help="first config: a shipped name (quickstart, 9x9_cpu, ...) or a TOML file")
    parser.add_argument("config_b", metavar="CONFIG_B", help="second config, same forms")
    parser.add_argument("--games", type=int, default=DEFAULT_GAMES,
                        help="games of each run's last checkpoint against each opponent")
    parser.add_argument("--visits", type=int, default=None,
                        help=f"the checkpoints' search visits per move in those games (default "
                             f"{DEFAULT_VISITS}; not with --move-seconds)")
    parser.add_argument("--opponents", default=DEFAULT_OPPONENTS,
                        help="comma-separated: mcts:N, gnugo:LEVEL (GNU Go 0..10), random, "
                             "gtp:\"COMMAND\", katago:VISITS or a checkpoint file")
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        metavar="SECTION.KEY=VALUE",
                        help="override one config value of both runs; repeatable")
    parser.add_argument("--set-a", dest="overrides_a", action="append", default=[],
                        metavar="SECTION.KEY=VALUE", help="override one value of run A only")
    parser.add_argument("--set-b", dest="overrides_b", action="append", default=[],
                        metavar="SECTION.KEY=VALUE", help="override one value of run B only")
    parser.add_argument("--config-seeds", action="store_true",
                        help="keep each config's own seeds instead of giving both --seed")
    parser.add_argument("--skip-runs", action="store_true",
                        help="reuse OUT/a and OUT/b as they are: only the matches, the table "
                             "and the figure")
    parser.add_argument("--skip-matches", action="store_true",
                        help="only the runs (and the table and figure, with the results of "
                             "earlier matches of the same checkpoints)")


def default_out(config_a, config_b):
    names = [os.path.splitext(os.path.basename(str(c)))[0] for c in (config_a, config_b)]
    return os.path.join("runs", f"compare-{names[0]}-vs-{names[1]}")


def make_plan(args):
    """The comparison.plan.Plan of the parsed arguments; CompareError for bad input."""
    from comparison.plan import (
        CompareError,
        Plan,
        check_opponent,
        check_out_dirs,
        load_run_plan,
        parse_opponents,
    )
    from fastgo_cli.player_flags import settings_from_flags
    from play.arena.plan import DEFAULT_OPENING_MOVES

    if args.seconds is None and not args.skip_runs:
        raise CompareError("--duration is required (e.g. --duration 30m), unless --skip-runs")
    if not 1 <= args.games <= MAX_GAMES:
        raise CompareError(f"--games must be in 1..{MAX_GAMES}, got {args.games}")
    if args.move_seconds is not None and args.visits is not None:
        raise CompareError("--visits and --move-seconds: give visits or seconds a move, not both")
    if args.game_seconds is not None and args.visits is not None:
        raise CompareError("--visits and --game-seconds: give visits or a game clock, not both")
    if args.game_seconds is not None and args.move_seconds is not None:
        raise CompareError("--game-seconds and --move-seconds: give one time control, not both")
    if args.visits is None:
        args.visits = DEFAULT_VISITS
    if not 1 <= args.visits <= 1_000_000:
        raise CompareError(f"--visits must be in 1..1000000, got {args.visits}")
    seed = None if args.config_seeds else args.seed
    runs = (load_run_plan("a", args.config_a, [*args.overrides, *args.overrides_a], seed),
            load_run_plan("b", args.config_b, [*args.overrides, *args.overrides_b], seed))
    opponents = tuple(parse_opponents(args.opponents))
    plan = Plan(out=os.path.abspath(args.out or default_out(runs[0].config_path,
                                                            runs[1].config_path)),
                runs=runs, seconds=args.seconds, games=args.games, visits=args.visits,
                opponents=opponents, seed=args.seed,
                player=settings_from_flags(args, opening_moves=DEFAULT_OPENING_MOVES),
                skip_runs=args.skip_runs,
                skip_matches=args.skip_matches, seeds_from_configs=args.config_seeds,
                move_seconds=args.move_seconds, game_seconds=args.game_seconds)
    check_out_dirs(plan)
    if not plan.skip_matches:
        for opponent in opponents:
            for size, komi in sorted({(r.size, r.komi) for r in runs}):
                check_opponent(opponent, size, komi)
    return plan


def run(args) -> int:
    from comparison.compare import compare
    from comparison.plan import CompareError

    try:
        plan = make_plan(args)
        return compare(plan, out=lambda line: print(line, flush=True))
    except CompareError as err:
        print(f"{PROG}: {err}", file=sys.stderr)
        return err.code
    except OSError as err:
        where = f"{err.filename}: " if err.filename else ""
        print(f"{PROG}: {where}{err.strerror or err}", file=sys.stderr)
        return 1
