"""`fastgo arena A B --games N`: a match between two players, its win rate and Elo difference
with 95% intervals, optionally stopped early by a sequential probability ratio test (Leela
Zero's gating), the result appended to the ratings table (fastgo.run.ratings_table).

A player is a checkpoint path (its network behind the batched PUCT search, in this process,
torch on CPU with one thread), 'random', 'mcts:N', 'gnugo:LEVEL', 'gtp:COMMAND',
'katago:VISITS' or 'ref:NAME' (a reference player at its own visits, never retimed) (play.specs). Called by fastgo_cli.main
through `add_arguments(parser)` and `run(args) -> int`; bad arguments exit 2 with one line.
SIGINT or SIGTERM (also while a GTP engine does not answer) ends the match: the games finished
so far are reported and appended to the table, the engines are ended, exit status 130.
"""
from __future__ import annotations

import math
import os
import secrets
import sys
import time

from fastgo import bounded_json
from fastgo.run.config import BACKEND_CHOICES, MATCH_VISITS, SEARCH_CHOICES
from fastgo.constants import SIZE_RANGE
from fastgo.coords import is_board_size
from fastgo.move_choice import PASS_RULE_HELP
from play.gtp.side import GtpSide
from play.match import SearchSide
from fastgo_cli.arena_timing import time_network_sides
from fastgo_cli.deferred_signals import deferred_interrupts, quiet
from fastgo_cli.arena_players import (PUCT_FLAGS, PLAYER_SEARCH, ArgumentError, make_side,
                                      one_line, puct_flag)
from fastgo.run.rundir import RATINGS_TABLE

DEFAULT_GAMES = 100
DEFAULT_VISITS = MATCH_VISITS       # the evaluator plays at the same visits (evaluator.visits)
DEFAULT_GAMES_AT_ONCE = 20
DEFAULT_TABLE = RATINGS_TABLE      # in the current folder
MAX_GAMES = 1_000_000
SPRT_ALPHA = SPRT_BETA = 0.05
PROG = "fastgo arena"


def parents():
    from fastgo_cli.parser import (game_seconds_options, json_options, move_seconds_options,
                                   seed_options, size_options)
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
    from fastgo_cli.parser import pass_rule

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
    parser.add_argument("--leaves-a", type=int, default=1, metavar="L",
                        help="A's leaves per search step (virtual loss between them)")
    parser.add_argument("--leaves-b", type=int, default=1, metavar="L",
                        help="B's leaves per search step")
    parser.add_argument("--backend-a", default="auto", choices=BACKEND_CHOICES,
                        help="CPU inference backend of a checkpoint A (auto: the fastest that "
                             "agrees with fp32, fastgo bench backends)")
    parser.add_argument("--backend-b", default="auto", choices=BACKEND_CHOICES,
                        help="CPU inference backend of a checkpoint B")
    parser.add_argument("--search-a", default="puct", choices=SEARCH_CHOICES,
                        help="root search of a checkpoint A: puct (most visited move) or gumbel "
                             "(Gumbel sequential halving, noise in the opening moves only)")
    parser.add_argument("--search-b", default=None, choices=SEARCH_CHOICES,
                        help="root search of a checkpoint B (default: --search-a)")
    for flag, (field, _, what, low, high) in PUCT_FLAGS.items():
        parser.add_argument(flag + "-a", type=float, default=None, metavar="X",
                            help=f"{what} of a checkpoint A, {low:g}..{high:g} (default: "
                                 f"{getattr(PLAYER_SEARCH, field):g}, as every player)")
        parser.add_argument(flag + "-b", type=float, default=None, metavar="X",
                            help=f"the same of a checkpoint B (default: {flag}-a)")
    parser.add_argument("--pass-rule", default="fill", type=pass_rule, metavar="fill|settled|decided|free",
                        help="checkpoint players: " + PASS_RULE_HELP)
    parser.add_argument("--komi", type=float, default=7.5, help="komi")
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
    parser.add_argument("--opening-moves", type=int, default=2, metavar="K",
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
    for flag, value in (("--leaves-a", args.leaves_a), ("--leaves-b", args.leaves_b)):
        if not 1 <= value <= 256:
            raise ArgumentError(f"{flag} must be in 1..256, got {value}")
    for flag, (*_, low, high) in PUCT_FLAGS.items():
        for side in "ab":
            value = puct_flag(args, flag, side)
            if value is not None and not low <= value <= high:      # also refuses nan
                raise ArgumentError(f"{flag}-{side} must be in {low:g}..{high:g}, got {value}")
    if args.size is not None and not is_board_size(args.size):
        raise ArgumentError(f"--size {args.size} is outside {SIZE_RANGE}")
    if not -10_000 <= args.komi <= 10_000:           # also refuses nan
        raise ArgumentError(f"--komi {args.komi} is outside -10000..10000")
    if not 1 <= args.games_at_once <= 10_000:
        raise ArgumentError(f"--games-at-once must be in 1..10000, got {args.games_at_once}")
    if not 0 <= args.opening_moves <= 10_000:
        raise ArgumentError(f"--opening-moves must be in 0..10000, got {args.opening_moves}")
    if args.seed is not None and not 0 <= args.seed < 1 << 62:
        raise ArgumentError(f"--seed must be in 0..2**62-1, got {args.seed}")
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


# --- output ----------------------------------------------------------------------------------

def summary(result, sprt=None):
    """The JSON summary of a MatchResult (and the SPRT state when one ran)."""
    low, high = result.wilson()
    elo, elo_low, elo_high = result.elo()
    out = {
        "a": result.name_a, "b": result.name_b,
        "games": result.games, "wins_a": result.wins_a, "wins_b": result.wins_b,
        "draws": result.draws,
        "win_rate_a": round(result.score_a, 6), "win_rate_ci": [round(low, 6), round(high, 6)],
        "elo_diff": round(elo, 2), "elo_ci": [round(elo_low, 2), round(elo_high, 2)],
        "games_a_black": result.games_a_black,
        "wins_a_black": result.wins_a_black, "wins_a_white": result.wins_a_white,
        "wins_b_black": result.wins_b_black, "wins_b_white": result.wins_b_white,
        "forfeits": list(result.forfeits),
    }
    for which in ("a", "b"):
        seconds, visits = result.per_move(which)
        out[f"seconds_per_move_{which}"] = None if seconds is None else round(seconds, 4)
        out[f"visits_per_move_{which}"] = None if visits is None else round(visits, 1)
        charged = result.clock_per_move(which)
        out[f"clock_per_move_{which}"] = None if charged is None else round(charged, 4)
    if sprt is not None:
        out["sprt"] = sprt
    return out


def print_report(result, sprt, out=None):
    out = sys.stdout if out is None else out
    s = summary(result, sprt)
    a_white = result.games - result.games_a_black
    print(f"games: {result.games}", file=out)
    print(f"A {result.name_a}: {result.wins_a} wins ({result.wins_a_black} of "
          f"{result.games_a_black} as Black, {result.wins_a_white} of {a_white} as White)", file=out)
    print(f"B {result.name_b}: {result.wins_b} wins ({result.wins_b_black} of {a_white} as "
          f"Black, {result.wins_b_white} of {result.games_a_black} as White)", file=out)
    if result.draws:
        print(f"draws: {result.draws}", file=out)
    low, high = s["win_rate_ci"]
    print(f"win rate of A: {s['win_rate_a']:.3f} (95% interval {low:.3f} .. {high:.3f})", file=out)
    elo_low, elo_high = s["elo_ci"]
    elo, elo_low, elo_high = (round(v) + 0 for v in (s["elo_diff"], elo_low, elo_high))
    print(f"Elo of A - B: {elo:+d} (95% interval {elo_low:+d} .. {elo_high:+d})", file=out)
    for which, name in (("a", result.name_a), ("b", result.name_b)):
        seconds, visits = result.per_move(which)
        if seconds is not None:
            charged = result.clock_per_move(which)
            print(f"time per move {which.upper()}: {seconds:.3f} s"
                  + (f", {visits:,.0f} visits" if visits is not None else "")
                  + (f", {charged:.3f} s on its game clock" if charged is not None else ""),
                  file=out)
    if result.forfeits:
        by_player = {}
        for f in result.forfeits:
            by_player.setdefault(f["player"], []).append(f)
        for player, items in by_player.items():
            print(f"forfeits: {player} lost {len(items)} game(s) by fault; the match went on:",
                  file=out)
            for f in items:
                print(f"  game {f['game']} ({f['color']}, move {f['move']}): {f['reason']}",
                      file=out)
    if sprt is not None:
        verdict = {"H1": f"H1 accepted: A - B = {sprt['elo1']:g} Elo rather than {sprt['elo0']:g}",
                   "H0": f"H0 accepted: A - B = {sprt['elo0']:g} Elo rather than {sprt['elo1']:g}",
                   None: "no decision"}[sprt["accepted"]]
        print(f"SPRT {sprt['elo0']:g},{sprt['elo1']:g}: LLR {sprt['llr']:+.3f} (bounds "
              f"{sprt['lower']:+.3f} .. {sprt['upper']:+.3f}) after {result.games} games: "
              f"{verdict}", file=out)


def _write_atomic(path, text):
    from fastgo.files import atomic_write
    atomic_write(path, lambda handle: handle.write(text), binary=False)


def write_sgfs(result, directory, stamp):
    """The games of `result` (records kept) as DIR/arena-STAMP-NNNN.sgf, NNNN each game's
    number in the match; a game lost by forfeit has RE[B+F] / RE[W+F] and the reason in its
    root comment."""
    from fastgo.sgf import record_from_game, write_sgf

    forfeits = {f["game"]: f for f in result.forfeits}
    for k, game in enumerate(result.records):
        number = result.numbers[k]
        a_black = result.a_black[k]
        black, white = (result.name_a, result.name_b) if a_black else (result.name_b, result.name_a)
        comment = f"fastgo arena game {number}: A {result.name_a} vs B {result.name_b}"
        record = record_from_game(game, black_player=black, white_player=white,
                                  rules="Tromp-Taylor (positional superko)")
        fault = forfeits.get(number)
        if fault is not None:
            record.result = ("W" if fault["color"] == "B" else "B") + "+F"
            comment += f"; {fault['player']} forfeits: {fault['reason']}"
        record.comments[0] = comment
        _write_atomic(os.path.join(directory, f"arena-{stamp}-{number:04d}.sgf"), write_sgf(record))


# --- run -------------------------------------------------------------------------------------

def run(args):
    import signal

    # SIGTERM as Ctrl-C: the interrupted path below reports, appends and ends the engines.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        return _run(args)
    except ArgumentError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:                 # before the first game (e.g. an engine starting)
        print(f"{PROG}: interrupted before the match started", file=sys.stderr)
        return 130


def _run(args):
    sprt_elos = _check_args(args)
    base = secrets.randbits(62) if args.seed is None else args.seed
    sides = []
    try:
        for which, spec, offset in (("A", args.a, 1), ("B", args.b, 2)):
            sides.append(make_side(spec, args, (base + offset) % (1 << 64), which))
        a, b = sides
        if args.name_a:
            a.name = args.name_a
        if args.name_b:
            b.name = args.name_b
        from fastgo.run.ratings_table import TableError, check_name, table_name
        for which, side, given in (("A", a, args.name_a), ("B", b, args.name_b)):
            if not given:                # e.g. a long GTP command line: shortened, escaped
                side.name = table_name(side.name)
            try:                         # refused now, not once the match has been played
                check_name(side.name, f"--name-{which.lower()}")
            except TableError as exc:
                raise ArgumentError(str(exc)) from None
        sizes = {s.board_size for s in sides} - {None}
        if len(sizes) > 1:
            raise ArgumentError(f"the networks play different board sizes: {sorted(sizes)}")
        size = args.size if args.size is not None else (sizes.pop() if sizes else 9)
        for which, side in (("A", a), ("B", b)):
            net_size = side.board_size
            if net_size is not None and net_size != size:
                raise ArgumentError(f"--size {size}: {which} plays {net_size}x{net_size} only")
            if isinstance(side, GtpSide):    # a GTP engine: start it now, refuse it if it cannot
                from play.gtp.side import GtpEngineError
                try:
                    side.prepare(min(args.games_at_once, args.games), size, args.komi)
                except GtpEngineError as exc:
                    raise ArgumentError(f"{which}: {one_line(exc)}") from None
        if args.move_seconds is not None or args.game_seconds is not None:
            timed = [(which, side) for which, side in (("A", a), ("B", b))   # not ref:NAME
                     if isinstance(side, SearchSide) and not side.fixed_visits]
            time_network_sides(timed, args.move_seconds, size, args.komi)
        return _play(args, a, b, size, sprt_elos)
    finally:
        for side in sides:
            side.close()


def _play(args, a, b, size, sprt_elos):
    from fastgo.run.match_stats import sprt_bounds, sprt_decision, sprt_llr
    from play.match import MatchResult, play_match

    stamp = time.strftime("%Y%m%d-%H%M%S")
    if args.sgf_dir is not None:
        os.makedirs(args.sgf_dir, exist_ok=True)
    sprt = None
    if sprt_elos is not None:
        lower, upper = sprt_bounds(SPRT_ALPHA, SPRT_BETA)
        sprt = {"elo0": sprt_elos[0], "elo1": sprt_elos[1], "alpha": SPRT_ALPHA,
                "beta": SPRT_BETA, "lower": lower, "upper": upper, "llr": 0.0,
                "accepted": None}
    pace = (f", {args.move_seconds:g} s a move" if args.move_seconds is not None else
            f", {args.game_seconds:g} s a game each" if args.game_seconds is not None else "")
    print(f"{PROG}: A {a.name} vs B {b.name}, {size}x{size} komi {args.komi:g}{pace}, "
          f"{'at most ' if sprt else ''}{args.games} games, {min(args.games_at_once, args.games)} at once",
          flush=True)
    total = MatchResult(a.name, b.name)
    interrupted = False
    started = time.monotonic()
    pending = None          # a batch over but not yet counted (an interrupt may fall there)
    try:
        while total.games < args.games:
            n = min(args.games_at_once, args.games - total.games)
            pending = play_match(a, b, n, size=size, komi=args.komi,
                                 keep_records=args.sgf_dir is not None, game_offset=total.games,
                                 game_seconds=args.game_seconds)
            with deferred_interrupts():          # counted and written whole, then the signal
                _settle(total, pending, args.sgf_dir, stamp)
                pending = None
            line = (f"  {total.games} games, {time.monotonic() - started:.0f} s: "
                    f"A {total.wins_a}, B {total.wins_b}")
            if total.draws:
                line += f", draws {total.draws}"
            if sprt is not None:
                sprt["llr"] = sprt_llr(total.wins_a, total.wins_b, total.draws, *sprt_elos)
                sprt["accepted"] = sprt_decision(sprt["llr"], SPRT_ALPHA, SPRT_BETA)
                line += f", LLR {sprt['llr']:+.3f}"
            if total.games < args.games or sprt is not None:
                print(line, flush=True)
            if sprt is not None and sprt["accepted"] is not None:
                break
    except KeyboardInterrupt as interrupt:
        quiet()                                  # a second signal while it ends is ignored
        interrupted = True
        # the games over in the batch play_match was playing, or a batch it had returned
        chunk = getattr(interrupt, "match_result", None) or pending
        if chunk is not None and chunk.games:
            _settle(total, chunk, args.sgf_dir, stamp)
        print(f"{PROG}: interrupted after {total.games} games", file=sys.stderr)
    with deferred_interrupts(raise_after=False) as held:     # the report is never cut short
        status = _report(args, a, b, size, total, sprt, interrupted)
    if held.signum is not None:
        print(f"{PROG}: interrupted after {total.games} games (all reported)", file=sys.stderr)
        status = status or 130
    return status


def _settle(total, chunk, sgf_dir, stamp):
    """Counts a finished batch into `total` and writes its SGFs (records then dropped)."""
    total.add(chunk)
    if sgf_dir is not None:
        write_sgfs(chunk, sgf_dir, stamp)
    total.records = []
    chunk.records = []


def _report(args, a, b, size, total, sprt, interrupted):
    """Prints the report, writes --json and appends to the ratings table; the exit status."""
    if sprt is not None:
        sprt["llr"] = round(sprt["llr"], 6)
    print_report(total, sprt)
    for side in (a, b):
        if isinstance(side, GtpSide) and side.restarts:
            print(f"engine restarts: {side.name}: {side.restarts}")
    status = 130 if interrupted else 0
    if args.json is not None:
        data = summary(total, sprt)
        data.update(size=size, komi=args.komi, visits=args.visits,
                    move_seconds=args.move_seconds, game_seconds=args.game_seconds,
                    interrupted=interrupted)
        _write_atomic(args.json, bounded_json.dumps(data, indent=2) + "\n")
    if not args.no_table and total.games > 0:
        from fastgo.run.ratings_table import append_result

        meta = {"size": size, "komi": args.komi, "source": "arena"}
        if args.move_seconds is not None:
            meta["move_seconds"] = args.move_seconds
        elif args.game_seconds is not None:
            meta["game_seconds"] = args.game_seconds
        elif any(isinstance(side, SearchSide) and not side.fixed_visits
                 for side in (a, b)):                   # a reference player's are its own
            meta["visits"] = args.visits
        if total.forfeits:
            meta["forfeits"] = len(total.forfeits)
        if sprt is not None:
            meta["sprt"] = [sprt["elo0"], sprt["elo1"], sprt["accepted"]]
        if interrupted:
            meta["interrupted"] = True
        try:
            append_result(args.table, total.name_a, total.name_b, total.wins_a, total.wins_b,
                          total.draws, **meta)
            print(f"appended to the ratings table {args.table}")
        except (OSError, ValueError) as exc:       # ValueError: ratings.TableError
            print(f"{PROG}: cannot append to the ratings table {args.table}: {one_line(exc)}",
                  file=sys.stderr)
            status = status or 1
    return status
