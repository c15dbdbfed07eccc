"""`fastgo <command> ...`: dispatch to one module per command, imported lazily.

Each command module exposes `add_arguments(parser)` and `run(args) -> int`. Heavy imports
(torch, zmq) happen inside those modules, so `fastgo gtp` never pays for torch.
"""
import argparse
import importlib
import sys

# command -> (module, one-line help)
COMMANDS = {
    "gtp": ("fastgo_cli.gtp_cmd", "GTP v2 engine for Sabaki, GoGui and match runners"),
    "serve": ("fastgo_cli.serve_cmd", "run the batching inference server"),
    "selfplay": ("fastgo_cli.selfplay_cmd", "one self-play worker: games through the server into shards"),
    "train": ("fastgo_cli.train_cmd", "the trainer: shards in, checkpoints out, hot reload"),
    "arena": ("fastgo_cli.arena_cmd", "a match between two players: win rate, Elo, SPRT, ratings table"),
    "ratings": ("fastgo_cli.ratings_cmd", "every player's maximum-likelihood Elo from the ratings table"),
    "evaluate": ("cluster.evaluator", "the evaluator: new checkpoints against references, ratings, curve.png"),
    "play": ("fastgo_cli.play_cmd", "play the network in the terminal (ASCII board, GTP vertices)"),
    "cluster": ("cluster.supervisor", "the whole loop: server, workers, trainer, evaluator, supervised"),
    "recorder": ("fastgo_cli.recorder_cmd", "games from workers on other hosts over ZeroMQ into shards"),
    "keys": ("fastgo_cli.keys_cmd", "CURVE key pairs for endpoints on other hosts (`keys new NAME`)"),
    "curve": ("fastgo_cli.curve_cmd", "one plot of the learning curves of several run directories"),
}

# `fastgo bench TARGET` -> (module, one-line help)
BENCH_TARGETS = {
    "board": ("fastgo_cli.bench.board", "random playouts/s and moves/s on one core"),
    "mcts": ("fastgo_cli.bench.mcts", "search simulations/s with a zero-cost evaluator"),
    "server": ("fastgo_cli.bench.server", "inference server evals/s and latency vs raw forward"),
    "selfplay": ("fastgo_cli.bench.selfplay", "whole self-play loop evals/s and moves/s vs raw forward"),
    "train": ("fastgo_cli.bench.train", "trainer data path positions/s and training samples/s"),
}


def _usage():
    lines = ["usage: fastgo <command> [options]", "", "commands:"]
    for name, (_, text) in COMMANDS.items():
        lines.append(f"  {name:<10} {text}")
    lines.append(f"  {'bench':<10} benchmarks: " + ", ".join(BENCH_TARGETS))
    lines.append("")
    lines.append("`fastgo <command> --help` for the options of one command.")
    return "\n".join(lines)


class DefaultsShown(argparse.ArgumentDefaultsHelpFormatter):
    """Help texts end with the default, except where there is none (None, False)."""

    def _get_help_string(self, action):
        if action.default is None or action.default is False:
            return action.help
        return super()._get_help_string(action)


def _bench_usage():
    lines = ["usage: fastgo bench {" + ",".join(BENCH_TARGETS) + "} [options]", "", "benchmarks:"]
    for name, (_, text) in BENCH_TARGETS.items():
        lines.append(f"  {name:<10} {text}")
    lines.append("")
    lines.append("`fastgo bench <target> --help` for its options.")
    return "\n".join(lines)


def _version():
    try:
        from importlib.metadata import version
        return version("fastgo")
    except Exception:            # running from a source tree that was never installed
        return "unknown"


def _run_module(prog, module_name, description, argv):
    module = importlib.import_module(module_name)
    parser = argparse.ArgumentParser(prog=prog, description=description,
                                     formatter_class=DefaultsShown)
    module.add_arguments(parser)
    args = parser.parse_args(argv)
    return module.run(args)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(_usage())
        return 0
    if argv[0] in ("--version", "version"):
        print(f"fastgo {_version()}")
        return 0
    command, rest = argv[0], argv[1:]
    if command == "bench":
        if rest and rest[0] in ("-h", "--help"):
            print(_bench_usage())
            return 0
        if not rest or rest[0] not in BENCH_TARGETS:
            print(_bench_usage(), file=sys.stderr)
            return 2
        module_name, text = BENCH_TARGETS[rest[0]]
        return _run_module(f"fastgo bench {rest[0]}", module_name, text, rest[1:])
    if command not in COMMANDS:
        print(f"fastgo: unknown command {command!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    module_name, text = COMMANDS[command]
    return _run_module(f"fastgo {command}", module_name, text, rest)


if __name__ == "__main__":
    sys.exit(main())
