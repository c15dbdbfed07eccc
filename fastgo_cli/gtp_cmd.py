"""`fastgo gtp`: a GTP v2 engine on stdin/stdout for Sabaki, GoGui, match runners and bridges.

Responses go to stdout (flushed after each); logs go to stderr only. Called by fastgo_cli.main
through `add_arguments(parser)` and `run(args) -> int`.
"""
import logging
import sys


def add_arguments(parser):
    parser.add_argument("--player", default=None,
                        help="'random' (default) or 'mcts:N' (pure MCTS, N random playouts "
                             "per move)")
    parser.add_argument("--model", default=None, metavar="CKPT",
                        help="network checkpoint to play with (not available yet)")
    parser.add_argument("--visits", type=int, default=None, metavar="V",
                        help="search visits per move with --model")
    parser.add_argument("--size", type=int, default=9, help="initial board size, 2..25 (default 9)")
    parser.add_argument("--komi", type=float, default=7.5, help="initial komi (default 7.5)")
    parser.add_argument("--seed", type=int, default=None, help="random seed for the player")
    parser.add_argument("--log-level", default="WARNING",
                        choices=["DEBUG", "INFO", "WARNING", "ERROR"], help="stderr log level")


def run(args):
    logging.basicConfig(stream=sys.stderr, level=args.log_level,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if args.model is not None:
        print("fastgo gtp: --model is not available yet (the network player does not exist); "
              "use --player random or --player mcts:N", file=sys.stderr)
        return 2
    if args.visits is not None:
        print("fastgo gtp: --visits goes with --model, which is not available yet", file=sys.stderr)
        return 2
    if not 2 <= args.size <= 25:
        print(f"fastgo gtp: --size {args.size} is outside 2..25", file=sys.stderr)
        return 2

    from selfplay_workers.gtp_engine import GtpEngine
    from selfplay_workers.players import make_player

    try:
        player = make_player(args.player or "random", seed=args.seed)
    except (ValueError, ImportError) as exc:
        print(f"fastgo gtp: cannot make player {args.player!r}: {exc}", file=sys.stderr)
        return 2
    engine = GtpEngine(player, size=args.size, komi=args.komi)
    try:
        stdin = open(sys.stdin.fileno(), "r", encoding="utf-8", errors="replace", closefd=False)
        return engine.serve(stdin, sys.stdout)
    except (BrokenPipeError, KeyboardInterrupt):
        return 0
