"""`fastgo <command> ...`: dispatch to one module per command, imported lazily.

Each command module exposes `add_arguments(parser)` and `run(args) -> int`, and may expose
`parents()` (shared option groups from fastgo_cli.parser). Every usage error is one line on
stderr and exit status 2. Heavy imports (torch, zmq) happen inside the command modules, so
`fastgo gtp` never pays for torch.
"""
import difflib
import importlib
import sys

from fastgo_cli.parser import Parser, prepare

# command -> (module, one-line help)
COMMANDS = {
    "gtp": ("fastgo_cli.gtp_cmd", "GTP v2 engine for Sabaki, GoGui and match runners"),
    "analysis": ("fastgo_cli.analysis_cmd", "KataGo's JSON analysis engine on stdin/stdout (KaTrain)"),
    "serve": ("fastgo_cli.serve_cmd", "run the batching inference server"),
    "selfplay": ("fastgo_cli.selfplay_cmd", "one self-play worker: games through the server into shards"),
    "train": ("fastgo_cli.train_cmd", "the trainer: shards in, checkpoints out, hot reload"),
    "arena": ("fastgo_cli.arena_cmd", "a match between two players: win rate, Elo, SPRT, ratings table"),
    "ratings": ("fastgo_cli.ratings_cmd", "every player's maximum-likelihood Elo from the ratings table"),
    "ladder": ("fastgo_cli.ladder_cmd",
               "the ladder's rungs on CGOS's scale; `ladder calibrate` plays their links"),
    "evaluate": ("fastgo_cli.evaluate_cmd",
                 "the evaluator: new checkpoints against earlier ones and anchors, ratings, curve.png"),
    "play": ("fastgo_cli.play_cmd", "play the network in the terminal (ASCII board, GTP vertices)"),
    "cluster": ("fastgo_cli.cluster_cmd", "the whole loop: server, workers, trainer, evaluator, supervised"),
    "recorder": ("fastgo_cli.recorder_cmd", "games from workers on other hosts over ZeroMQ into shards"),
    "keys": ("fastgo_cli.keys_cmd", "CURVE key pairs for endpoints on other hosts (`keys new NAME`)"),
    "curve": ("fastgo_cli.curve_cmd", "one plot of the learning curves of several run directories"),
    "compare": ("fastgo_cli.compare_cmd",
                "two configs learn for the same time on this machine, then play the same opponents"),
    "dashboard": ("fastgo_cli.dashboard_cmd",
                  "a live web page of a run directory: status, strength, games, play"),
    "katago": ("fastgo_cli.katago_cmd",
               "KataGo as an opponent: `katago fetch` downloads it into the cache, `katago where`"),
}

# `fastgo bench TARGET` -> (module, one-line help)
BENCH_TARGETS = {
    "board": ("fastgo_cli.bench.board", "random playouts/s and moves/s on one core"),
    "mcts": ("fastgo_cli.bench.mcts", "search simulations/s with a zero-cost evaluator"),
    "server": ("fastgo_cli.bench.server", "inference server evals/s and latency vs raw forward"),
    "backends": ("fastgo_cli.bench.backends",
                 "every CPU backend's evals/s and agreement with fp32, and what auto picks"),
    "selfplay": ("fastgo_cli.bench.selfplay", "whole self-play loop evals/s and moves/s vs raw forward"),
    "train": ("fastgo_cli.bench.train", "trainer data path positions/s and training samples/s"),
    "analysis": ("fastgo_cli.bench.analysis", "fastgo analysis positions/s for a whole game vs raw forward"),
    "gtp": ("fastgo_cli.bench.gtp",
            "GTP engine genmove visits/s against Leela Zero on the same network shape"),
    "dashboard": ("fastgo_cli.bench.dashboard",
                  "the dashboard's first snapshot of a synthetic 8-hour run directory"),
    "run-length": ("fastgo_cli.bench.run_length",
                   "what reads a whole run (fit, evaluator point, dashboard, trainer resume) "
                   "over a day's, a week's and a month's synthetic run"),
}


def _usage():
    lines = ["usage: fastgo <command> [options]", "", "commands:"]
    for name, (_, text) in COMMANDS.items():
        lines.append(f"  {name:<10} {text}")
    lines.append(f"  {'bench':<10} benchmarks: " + ", ".join(BENCH_TARGETS))
    lines.append("")
    lines.append("`fastgo <command> --help` for the options of one command.")
    return "\n".join(lines)


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


def _usage_error(prog, message):
    """One line on stderr, exit status 2."""
    print(f"{prog}: error: {message}", file=sys.stderr)
    return 2


def _unknown(prog, what, word, known):
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    hint = f"did you mean {close[0]}? " if close else ""
    return _usage_error(prog, f"unknown {what} {word[:60]!r} ({hint}choose from "
                              f"{', '.join(known)})")


def command_parser(command, target=None):
    """(parser, module) of `fastgo COMMAND` or `fastgo bench TARGET`; KeyError when unknown."""
    if command == "bench":
        (module_name, text), prog = BENCH_TARGETS[target], f"fastgo bench {target}"
    else:
        (module_name, text), prog = COMMANDS[command], f"fastgo {command}"
    module = importlib.import_module(module_name)
    parents = module.parents() if hasattr(module, "parents") else ()
    parser = Parser(prog=prog, description=text, parents=parents)
    module.add_arguments(parser)
    return parser, module


def _run_module(command, target, argv):
    parser, module = command_parser(command, target)
    args = parser.parse_args(argv)
    if prepare(parser, args):
        return 0
    try:
        return module.run(args)
    except Exception as err:
        # A command that is not a role (arena, ratings, bench, compare, curve ...) meeting a
        # full disk: one line naming the condition and the file, not a traceback. Roles wait or
        # stop by cluster.on_disk_full (fastgo.diskfull) before it comes to this.
        from fastgo.diskfull import EXIT_STATUS, describe, disk_full
        from fastgo.files import escaped

        full = disk_full(err)
        if full is None:
            raise
        name = " ".join(p for p in ("fastgo", command, target) if p)
        where = f" writing {escaped(full.filename, 200)}" if full.filename else ""
        print(f"{name}: disk full ({describe(full)}){where}; free some space and run it again",
              file=sys.stderr)
        return EXIT_STATUS


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
        if not rest:
            return _usage_error("fastgo bench", "a target is required (choose from "
                                                f"{', '.join(BENCH_TARGETS)})")
        if rest[0] not in BENCH_TARGETS:
            return _unknown("fastgo bench", "target", rest[0], BENCH_TARGETS)
        return _run_module("bench", rest[0], rest[1:])
    if command not in COMMANDS:
        return _unknown("fastgo", "command", command, [*COMMANDS, "bench"])
    return _run_module(command, None, rest)


if __name__ == "__main__":
    sys.exit(main())
