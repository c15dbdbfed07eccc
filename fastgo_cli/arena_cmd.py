"""`fastgo arena A B --games N`: a match between two players, its win rate and Elo difference
with 95% intervals, optionally stopped early by a sequential probability ratio test (Leela
Zero's gating), the result appended to the ratings table (rundata.ratings_table).

A player is a player spec (fastgo.player_spec: a checkpoint path, its network behind the
batched PUCT search in this process, torch on CPU with one thread; 'random', 'mcts:N',
'gnugo:LEVEL', 'gtp:COMMAND', 'katago:VISITS' or 'ref:NAME'). This module parses the options
and checks them into a play.arena.plan.ArenaPlan, the per-side flags into each side's
play.player_settings.PlayerSettings; play.arena.loop.run_arena plays it and this module prints
its lines. Called by fastgo_cli.main through `add_arguments(parser)` and `run(args) -> int`; bad
arguments exit 2 with one line. SIGINT or SIGTERM ends the match (play.arena.loop): the games
finished so far are reported and appended to the table, the engines are ended, exit status 130.
"""
from __future__ import annotations

import dataclasses
import math
import os
import secrets
import sys

from fastgo.constants import SIZE_RANGE
from fastgo.coords import is_board_size
from fastgo.move_choice import PASS_RULE_HELP
from fastgo.variants import Backend, Device, Search
from fastgo_cli.player_flags import settings_from_flags
from play.arena.plan import (
    DEFAULT_GAMES_AT_ONCE,
    DEFAULT_OPENING_MOVES,
    PROG,
    SPRT_ALPHA,
    ArenaError,
    ArenaPlan,
)
from play.player_settings import PLAYER_SEARCH, PlayerSettings
from rundata.config import MATCH_VISITS, SelfplayConfig
from rundata.rundir import RATINGS_TABLE

DEFAULT_GAMES = 100
DEFAULT_VISITS = MATCH_VISITS       # the evaluator plays at the same visits (evaluator.visits)
DEFAULT_TABLE = RATINGS_TABLE      # in the current folder
MAX_GAMES = 1_000_000


def _puct_flag(field, what):
    """(field, what it is, low, high): the range is the config's selfplay.FIELD's, the one
    place these constants are bounded."""
    meta = {f.name: f for f in dataclasses.fields(SelfplayConfig)}[field].metadata
    return field, what, meta["min"], meta["max"]


# per-side flags (FLAG-a, FLAG-b) of the players' PUCT constants, by their SearchSettings field
# (fastgo_cli.player_flags.SEARCH_FIELDS takes each flag to its field)
PUCT_FLAGS = {
    "--c-puct": _puct_flag("c_puct", "PUCT's exploration constant"),
    "--fpu": _puct_flag("fpu_reduction", "first-play urgency reduction (an unvisited move's "
                        "value: its parent's minus X x sqrt(the visited moves' prior))"),
    "--value-bias": _puct_flag("value_bias", "subtree value-bias correction (KataGo's lambda; 0 "
                               "off)"),
}


class ArgumentError(ArenaError):
    """A bad argument: one line for stderr, exit status 2."""


def parents():
    from fastgo_cli.parser import (
        game_seconds_options,
        json_options,
        move_seconds_options,
        seed_options,
        size_options,
    )
    return (size_options(help=f"board size, {SIZE_RANGE} (default: the networks' size, else 9)"),
            seed_options(help="random seed for the players (default: a fresh one)"),
            json_options("the result"),
            move_seconds_options(help="equal time: each side gets at most S seconds a move on "
                                      "one thread: a checkpoint plays the visits its own "
                                      "one-game speed, measured first, fits in S (instead of "
                                      "--visits); a GTP engine is given the time control and "
                                      "loses a game when a move overruns S by more than "
                                      "max(1 s, S/4). Without it a GTP engine may take 60 s"),
            game_seconds_options(help="equal time by a game clock, as CGOS plays: each side "
                                      "has T seconds for all of its moves of a game on one "
                                      "thread and loses the game on time past T + 1 s + 2%% of "
                                      "T; a checkpoint spreads its time over the moves likely "
                                      "left and plays the visits its measured one-game speed "
                                      "fits in each share; a GTP engine is told `time_settings "
                                      "T 0 0` and its time left before each move (instead of "
                                      "--visits and --move-seconds)"))


def add_arguments(parser):
    from fastgo_cli.parser import PASS_RULE_METAVAR, komi, leaves, pass_rule

    parser.add_argument("a", metavar="A",
                        help="first player: a checkpoint path, 'random', 'mcts:N' (pure MCTS, "
                             "N playouts per move), 'gnugo:LEVEL' (GNU Go 0..10, run as CGOS "
                             "runs it), gtp:\"COMMAND\" (an external GTP engine) or "
                             "'katago:VISITS' (KataGo, at most VISITS a move; `fastgo katago "
                             "fetch` downloads it) or 'ref:NAME' (a reference player shipped "
                             "with fastgo, at its own fixed visits)")
    parser.add_argument("b", metavar="B", help="second player, same forms as A")
    parser.add_argument("--games", type=int, default=DEFAULT_GAMES,
                        help="games to play (with --sprt: at most)")
    parser.add_argument("--visits", type=int, default=None,
                        help=f"search visits per move of checkpoint players (default "
                             f"{DEFAULT_VISITS}; not with --move-seconds)")
    parser.add_argument("--visits-b", type=int, default=None, metavar="V",
                        help="B's visits when B is a checkpoint (default: --visits)")
    parser.add_argument("--leaves-a", type=leaves, default=PLAYER_SEARCH.leaves_per_game, metavar="L",
                        help="A's leaves per search step (virtual loss between them)")
    parser.add_argument("--leaves-b", type=leaves, default=PLAYER_SEARCH.leaves_per_game, metavar="L",
                        help="B's leaves per search step")
    parser.add_argument("--backend-a", default=PlayerSettings.backend, choices=Backend.choices(),
                        help="CPU inference backend of a checkpoint A (auto: the fastest that "
                             "agrees with fp32, fastgo bench backends)")
    parser.add_argument("--backend-b", default=PlayerSettings.backend, choices=Backend.choices(),
                        help="CPU inference backend of a checkpoint B")
    parser.add_argument("--search-a", default=PLAYER_SEARCH.search, choices=Search.choices(),
                        help="root search of a checkpoint A: puct (most visited move) or gumbel "
                             "(Gumbel sequential halving, noise in the opening moves only)")
    parser.add_argument("--search-b", default=None, choices=Search.choices(),
                        help="root search of a checkpoint B (default: --search-a)")
    for flag, (field, what, low, high) in PUCT_FLAGS.items():
        parser.add_argument(flag + "-a", type=float, default=None, metavar="X",
                            help=f"{what} of a checkpoint A, {low:g}..{high:g} (default: "
                                 f"{getattr(PLAYER_SEARCH, field):g}, as every player)")
        parser.add_argument(flag + "-b", type=float, default=None, metavar="X",
                            help=f"the same of a checkpoint B (default: {flag}-a)")
    parser.add_argument("--pass-rule", default=PlayerSettings.pass_rule, type=pass_rule,
                        metavar=PASS_RULE_METAVAR,
                        help="checkpoint players: " + PASS_RULE_HELP)
    parser.add_argument("--komi", type=komi, default=7.5, help="komi")
    parser.add_argument("--sgf-dir", default=None, metavar="D",
                        help="write every game as an SGF file into D (created if missing)")
    parser.add_argument("--sprt", default=None, metavar="ELO0,ELO1",
                        help="stop once the sequential probability ratio test of H0: A-B = ELO0 "
                             f"against H1: A-B = ELO1 decides (alpha = beta = {SPRT_ALPHA}), "
                             "testing after each --games-at-once games; e.g. 0,35")
    parser.add_argument("--games-at-once", type=int, default=DEFAULT_GAMES_AT_ONCE, metavar="G",
                        help="games played at the same time (networks batch across them); "
                             "with --sprt the test runs after each such group")
    parser.add_argument("--table", default=DEFAULT_TABLE, metavar="PATH",
                        help="ratings table the result is appended to")
    parser.add_argument("--no-table", action="store_true",
                        help="do not append the result to the ratings table")
    parser.add_argument("--name-a", default=None, help="A's name in the table and the output")
    parser.add_argument("--name-b", default=None, help="B's name in the table and the output")
    parser.add_argument("--opening-moves", type=int, default=DEFAULT_OPENING_MOVES, metavar="K",
                        help="checkpoint players sample their first K moves of a game by visit "
                             "count, for varied games")


# --- arguments -------------------------------------------------------------------------------

def parse_sprt(text):
    """'ELO0,ELO1' -> (elo0, elo1) with elo0 < elo1, both finite; ArgumentError otherwise."""
    parts = str(text).split(",")
    try:
        if len(parts) != 2:
            raise ValueError
        elo0, elo1 = (float(p) for p in parts)
    except ValueError:
        raise ArgumentError(f"--sprt {text!r}: expected ELO0,ELO1 (two numbers, e.g. 0,35)") from None
    if not (math.isfinite(elo0) and math.isfinite(elo1)) or abs(elo0) > 2000 or abs(elo1) > 2000:
        raise ArgumentError(f"--sprt {text!r}: Elo values must be within -2000..2000")
    if not elo0 < elo1:
        raise ArgumentError(f"--sprt {text!r}: ELO0 must be below ELO1")
    return elo0, elo1


def _check_args(args):
    if args.game_seconds is not None and args.move_seconds is not None:
        raise ArgumentError("--game-seconds and --move-seconds: give one time control, not both")
    if args.game_seconds is not None or args.move_seconds is not None:
        flag = "--move-seconds" if args.move_seconds is not None else "--game-seconds"
        given = [f for f, value in (("--visits", args.visits), ("--visits-b", args.visits_b))
                 if value is not None]
        if given:
            what = "seconds a move" if args.move_seconds is not None else "a game clock"
            raise ArgumentError(f"{given[0]} and {flag}: give visits or {what}, not both")
    if args.visits is None and args.move_seconds is None and args.game_seconds is None:
        args.visits = DEFAULT_VISITS
    if not 1 <= args.games <= MAX_GAMES:
        raise ArgumentError(f"--games must be in 1..{MAX_GAMES}, got {args.games}")
    if args.visits is not None and not 1 <= args.visits <= 1_000_000:
        raise ArgumentError(f"--visits must be in 1..1000000, got {args.visits}")
    if args.visits_b is not None and not 1 <= args.visits_b <= 1_000_000:
        raise ArgumentError(f"--visits-b must be in 1..1000000, got {args.visits_b}")
    for flag, (*_, low, high) in PUCT_FLAGS.items():
        for side in "ab":
            value = puct_flag(args, flag, side)
            if value is not None and not low <= value <= high:      # also refuses nan
                raise ArgumentError(f"{flag}-{side} must be in {low:g}..{high:g}, got {value}")
    if args.size is not None and not is_board_size(args.size):
        raise ArgumentError(f"--size {args.size} is outside {SIZE_RANGE}")
    if not 1 <= args.games_at_once <= 10_000:
        raise ArgumentError(f"--games-at-once must be in 1..10000, got {args.games_at_once}")
    if not 0 <= args.opening_moves <= 10_000:
        raise ArgumentError(f"--opening-moves must be in 0..10000, got {args.opening_moves}")
    for flag, path in (("--json", args.json), ("--table", None if args.no_table else args.table)):
        if path is None:
            continue
        if os.path.isdir(path):
            raise ArgumentError(f"{flag} {path}: is a directory")
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            raise ArgumentError(f"{flag} {path}: directory {parent} does not exist")
    if args.sgf_dir is not None and os.path.exists(args.sgf_dir) and not os.path.isdir(args.sgf_dir):
        raise ArgumentError(f"--sgf-dir {args.sgf_dir}: exists and is not a directory")
    return parse_sprt(args.sprt) if args.sprt is not None else None


# --- the plan ----------------------------------------------------------------------------------

def puct_flag(args, flag, side):
    """The value of FLAG-a or FLAG-b (side 'a' or 'b') of a PUCT_FLAGS flag; None: not given."""
    return getattr(args, f"{flag[2:].replace('-', '_')}_{side}")


def arena_settings(args, which):
    """How a checkpoint side `which` ('A' or 'B') plays: its PlayerSettings from its flags
    (fastgo_cli.player_flags.settings_from_flags: B's visits, search and PUCT constants default to
    A's) on the CPU; visits 1 at equal time, where its measured speed sets them."""
    return settings_from_flags(args, which.lower(), visits=1, device=Device.CPU)


def make_arena_plan(args) -> ArenaPlan:
    """The ArenaPlan of the parsed options, checked; ArgumentError for a bad one."""
    sprt = _check_args(args)
    return ArenaPlan(
        a=args.a, b=args.b, games=args.games, settings_a=arena_settings(args, "A"),
        settings_b=arena_settings(args, "B"),
        seed=secrets.randbits(62) if args.seed is None else args.seed,
        games_at_once=args.games_at_once, size=args.size, komi=args.komi, visits=args.visits,
        move_seconds=args.move_seconds, game_seconds=args.game_seconds, sprt=sprt,
        names=(args.name_a, args.name_b), sgf_dir=args.sgf_dir, json_path=args.json,
        table=None if args.no_table else args.table)


# --- run -------------------------------------------------------------------------------------

def _out(line):
    print(line, flush=True)


def _err(line):
    print(line, file=sys.stderr, flush=True)


def run(args):
    import signal

    from play.arena.loop import run_arena

    # SIGTERM as Ctrl-C until the match takes both over (play.arena.loop)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        return run_arena(make_arena_plan(args), out=_out, err=_err)
    except ArenaError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:                 # while the options are checked
        print(f"{PROG}: interrupted before the match started", file=sys.stderr)
        return 130
