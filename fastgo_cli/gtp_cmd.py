"""`fastgo gtp`: a GTP v2 engine on stdin/stdout for Sabaki, GoGui, match runners and bridges.

Responses go to stdout (flushed after each); logs go to stderr only. Called by fastgo_cli.main
through `add_arguments(parser)` and `run(args) -> int`.
"""
import logging
import sys

from fastgo.constants import SIZE_RANGE
from fastgo.coords import is_board_size
from fastgo.files import escaped
from fastgo.move_choice import PASS_RULE_HELP
from fastgo.variants import Backend, Device, Search, Use
from play.player_settings import PLAYER_SEARCH, PlayerSettings

DEFAULT_VISITS = 400
SHOWN_SPEC = 80            # characters of a --player spec its error shows
SHOWN_ERROR = 300          # of the reason after it


def parents():
    from fastgo_cli.parser import move_seconds_options, seed_options, size_options
    return (size_options(help=f"initial board size, {SIZE_RANGE} (default 9; with --model the model's)"),
            seed_options(help="random seed for the player"),
            move_seconds_options(help="with --model: at most S seconds a move on one thread "
                                      "(a GTP clock may cut it shorter); the visits are then "
                                      "uncapped unless --visits is given, as in `fastgo arena "
                                      "--move-seconds`"))


def add_arguments(parser):
    from fastgo_cli.parser import PASS_RULE_METAVAR, komi, leaves, pass_rule

    parser.add_argument("--player", default=None,
                        help="'random' (default) or 'mcts:N' (pure MCTS, N random playouts "
                             "per move)")
    parser.add_argument("--model", default=None, metavar="CKPT",
                        help="play with this network checkpoint: its search (--search), network in process")
    parser.add_argument("--visits", "--playouts", type=int, default=None, metavar="V",
                        help=f"search visits per move with --model (default {DEFAULT_VISITS})")
    parser.add_argument("--leaves", type=leaves, default=8, metavar="L",
                        help="with --model: leaves evaluated together per search step (virtual "
                             "loss keeps them apart); 1 = one position per forward pass")
    parser.add_argument("--search", default=PLAYER_SEARCH.search, choices=Search.choices(),
                        help="with --model: root search, puct (the tree is kept between moves, "
                             "pondering) or gumbel (Gumbel sequential halving, no Gumbel noise)")
    parser.add_argument("--pass-rule", default=PlayerSettings.pass_rule, type=pass_rule,
                        metavar=PASS_RULE_METAVAR,
                        help="with --model: " + PASS_RULE_HELP)
    parser.add_argument("--device", default=Device.AUTO, choices=Device.choices(),
                        help="where the network runs with --model (auto: CUDA when there is one)")
    parser.add_argument("--backend", default=PlayerSettings.backend, choices=Backend.choices(),
                        help="CPU inference backend (auto: the fastest that agrees with fp32, "
                             "measured once per machine and network; fastgo bench backends)")
    parser.add_argument("--resign", type=float, default=None, metavar="V",
                        help="with --model: resign when the root value stays below V (-1..0); "
                             "default never")
    parser.add_argument("--komi", type=komi, default=7.5, help="initial komi")
    parser.add_argument("--log-level", default="WARNING",
                        choices=["DEBUG", "INFO", "WARNING", "ERROR"], help="stderr log level")


def run(args):
    logging.basicConfig(stream=sys.stderr, level=args.log_level,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if args.model is None:
        for flag, value in (("--visits", args.visits), ("--resign", args.resign)):
            if value is not None:
                print(f"fastgo gtp: {flag} goes with --model", file=sys.stderr)
                return 2
    elif args.player is not None:
        print("fastgo gtp: give --model or --player, not both", file=sys.stderr)
        return 2
    if args.size is not None and not is_board_size(args.size):
        print(f"fastgo gtp: --size {args.size} is outside {SIZE_RANGE}", file=sys.stderr)
        return 2
    if args.move_seconds is not None and args.model is None:
        print("fastgo gtp: --move-seconds goes with --model", file=sys.stderr)
        return 2

    from play.equal_time import MAX_VISITS
    from play.gtp.engine import GtpEngine

    if args.move_seconds is not None and args.visits is None:
        args.visits = MAX_VISITS        # the seconds bound the search, not a visit count
    try:
        player = model_player(args) if args.model is not None else _baseline_player(args)
    except ValueError as exc:
        print(f"fastgo gtp: {exc}", file=sys.stderr)
        return 2
    size = args.size or player.board_size or 9
    if args.model is not None and args.move_seconds is not None and args.search == Search.GUMBEL:
        player.measure_speed(size, args.komi)     # a Gumbel search's budget is set up front
    engine = GtpEngine(player, size=size, komi=args.komi, move_seconds=args.move_seconds)
    try:
        stdin = open(sys.stdin.fileno(), encoding="utf-8", errors="replace", closefd=False)
        return engine.serve(stdin, sys.stdout)
    except (BrokenPipeError, KeyboardInterrupt):
        return 0


def _baseline_player(args):
    from play.specs import make_player

    try:
        return make_player(args.player or "random", seed=args.seed)
    except (ValueError, ImportError) as exc:
        raise ValueError(f"cannot make player {escaped(args.player, SHOWN_SPEC, quoted=True)}: "
                         f"{escaped(exc, SHOWN_ERROR, one_line=True)}") from None


def model_player(args):
    """A SearchPlayer over the checkpoint --model, evaluated in this process: its
    PlayerSettings from the flags (fastgo_cli.player_flags.settings_from_flags), its network
    loaded for GTP by play.network_player.load_player_network and played by
    play.network_player.make_search_player, as every command plays a checkpoint. ValueError of
    one line for a bad flag or an unusable checkpoint, on any head the engine serves."""
    visits = DEFAULT_VISITS if args.visits is None else args.visits
    if visits < 1:
        raise ValueError(f"--visits must be >= 1, got {visits}")
    if args.resign is not None and not -1.0 <= args.resign <= 0.0:
        raise ValueError(f"--resign must be in -1..0, got {args.resign}")
    from fastgo_cli.player_flags import settings_from_flags
    from network.loading import set_torch_threads
    from play.network_player import load_player_network, make_search_player

    settings = settings_from_flags(args, visits=DEFAULT_VISITS, capacity=args.leaves)
    # use 'gtp': every head kata-analyze serves is checked here, so a bad file is refused once
    network = load_player_network(args.model, Use.GTP, settings, what="--model")
    set_torch_threads(settings.threads or None)
    config = network.config
    if args.size is not None and args.size != config.board_size:
        raise ValueError(f"--size {args.size}: the model {args.model} plays "
                         f"{config.board_size}x{config.board_size} only")
    return make_search_player(network, settings, seed=args.seed)
