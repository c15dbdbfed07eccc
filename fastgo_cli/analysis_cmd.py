"""`fastgo analysis --model CKPT`: KataGo's JSON analysis engine on stdin/stdout (KaTrain's
custom engine command, analysis scripts). Queries in, one JSON object per line; responses out,
one per line, possibly out of order; logs on stderr only. The network runs in this process
with every head (network.heads_evaluator) behind an NN cache; play.analysis.engine
does the rest.
"""
import logging
import sys

from fastgo.variants import Device, Use

DEFAULT_VISITS = 500


def parents():
    from fastgo_cli.parser import config_options, seed_options
    return (config_options(required=False, sections="[selfplay] komi: the komi the network "
                                                    "learnt at"),
            seed_options(help="random seed of the search"))


def add_arguments(parser):
    from fastgo_cli.parser import leaves

    parser.add_argument("--model", required=True, metavar="CKPT", help="the network checkpoint")
    parser.add_argument("--visits", type=int, default=DEFAULT_VISITS, metavar="V",
                        help="maxVisits of a query that names none")
    parser.add_argument("--max-visits", type=int, default=100_000, metavar="V",
                        help="the cap on a query's maxVisits (larger ones are clamped, with a "
                             "warning object)")
    parser.add_argument("--positions", type=int, default=16, metavar="P",
                        help="positions searched at once (their leaves share each network call)")
    parser.add_argument("--leaves", type=leaves, default=4, metavar="L",
                        help="leaves per position per network call (virtual loss keeps them apart)")
    parser.add_argument("--cache-entries", type=int, default=200_000, metavar="N",
                        help="positions kept in the network cache")
    parser.add_argument("--max-line-bytes", type=int, default=1 << 20, metavar="B",
                        help="longest query line read; a longer one is answered with an error")
    parser.add_argument("--device", default=Device.AUTO, choices=Device.choices(),
                        help="where the network runs (auto: CUDA when there is one)")
    parser.add_argument("--threads", type=int, default=0, metavar="T",
                        help="torch CPU threads (0: torch's default)")
    parser.add_argument("--log-level", default="WARNING",
                        choices=["DEBUG", "INFO", "WARNING", "ERROR"], help="stderr log level")


def _check(args):
    for flag, value, low, high in (("--visits", args.visits, 1, 1 << 50),
                                   ("--max-visits", args.max_visits, 1, 10_000_000),
                                   ("--positions", args.positions, 1, 1024),
                                   ("--cache-entries", args.cache_entries, 1, 10_000_000),
                                   ("--max-line-bytes", args.max_line_bytes, 1024, 1 << 30),
                                   ("--threads", args.threads, 0, 1024)):
        if not low <= value <= high:
            raise ValueError(f"{flag} must be in {low}..{high}, got {value}")


def build_engine(args):
    """(AnalysisEngine, HeadsEvaluator) for parsed arguments; ValueError with a message for a
    bad flag, checkpoint or device."""
    _check(args)
    from fastgo_cli.player_flags import settings_from_flags
    from network.loading import NetworkError, set_torch_threads
    from play.analysis.engine import AnalysisEngine, EngineSettings
    from play.analysis.query import Limits
    from play.heads_cache import HeadsCache
    from play.network_player import load_player_network

    settings = settings_from_flags(args)
    try:        # the checkpoint's file is checked before torch is imported; then the device
        network = load_player_network(args.model, Use.ANALYSIS, settings, what="--model")
    except NetworkError as exc:
        raise ValueError(str(exc)) from None
    set_torch_threads(settings.threads or None)
    heads, config = network.evaluator, network.config
    model_komi = network.komi              # what the checkpoint records it learnt at ...
    if network.assumed and args.config:    # ... or, for an older one, what the config says
        from rundata.config import load_config
        model_komi = float(load_config(args.config, overrides=tuple(args.overrides)).selfplay.komi)
    limits = Limits(sizes=(config.board_size,), max_visits=args.max_visits,
                    default_visits=min(settings.visits, args.max_visits),
                    model_komi=model_komi if config.score_head else None)
    engine_settings = EngineSettings(positions=args.positions,
                                     leaves=settings.search.leaves_per_game, limits=limits,
                                     max_line_bytes=args.max_line_bytes, seed=args.seed)
    cache = HeadsCache(heads, max_entries=args.cache_entries)
    engine = AnalysisEngine(cache, board_size=config.board_size, encoding=config.encoding,
                            settings=engine_settings,
                            model_name=f"{config.name}:{heads.model_version}")
    return engine, heads


def run(args):
    logging.basicConfig(stream=sys.stderr, level=args.log_level,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        engine, heads = build_engine(args)
    except ValueError as exc:
        print(f"fastgo analysis: {exc}", file=sys.stderr)
        return 2
    config = heads.config
    print(f"fastgo analysis: {config.name} {config.board_size}x{config.board_size} step "
          f"{heads.model_version}, heads: ownership {'yes' if heads.has_ownership else 'no'}, "
          f"score {'yes' if heads.has_score else 'no'}; ready", file=sys.stderr, flush=True)
    # stdin as a raw file of its own: the reader thread holds no lock of sys.stdin's buffer,
    # so the process can exit on any path (a closed stdout, an error) while it waits there
    stdin = open(sys.stdin.fileno(), "rb", buffering=0, closefd=False)
    try:
        return engine.serve(stdin, sys.stdout)
    except BrokenPipeError:        # the reader closed our stdout: nothing more to say to it
        _drop_stdout()
        return 0
    except KeyboardInterrupt:
        return 0


def _drop_stdout():
    """Points stdout at /dev/null, so the interpreter's final flush of what is still buffered
    raises nothing (Python's documented way to exit after EPIPE)."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
