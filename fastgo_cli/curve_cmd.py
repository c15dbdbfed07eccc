"""`fastgo curve RUN_DIR [RUN_DIR ...] -o compare.png [--labels A,B]`: the learning curves
(Elo against wall time, 95% intervals) of several run directories in one plot, each labelled with
its name (or --labels) and its algorithm, so runs of different algorithms on the same machine
can be compared. Reads each run's ratings.jsonl and evaluations.jsonl (evaluation.plots)."""
from __future__ import annotations

import os
import sys

from fastgo.files import escaped, printable

PROG = "fastgo curve"
MAX_RUNS = 20


def parents():
    from fastgo_cli.parser import out_options
    return (out_options(default="compare.png", metavar="FILE", help="the PNG to write"),)


def add_arguments(parser):
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run directories with ratings")
    parser.add_argument("--labels", help="comma-separated names, one per run "
                                         "(default: each directory's name)")
    parser.add_argument("--references", default="mcts:100",
                        help="comma-separated reference players drawn as dashed lines")


def run(args) -> int:
    from evaluation.plots import RunCurveError, draw_comparison, read_run

    if len(args.runs) > MAX_RUNS:
        print(f"{PROG}: at most {MAX_RUNS} run directories, got {len(args.runs)}", file=sys.stderr)
        return 2
    if args.labels is not None:
        labels = [x.strip() for x in args.labels.split(",")]
        if len(labels) != len(args.runs) or not all(labels) or any(len(x) > 60 for x in labels) \
                or not all(x.isprintable() for x in labels):
            print(f"{PROG}: --labels needs {len(args.runs)} non-empty names of at most 60 "
                  f"printable characters, got {args.labels[:80]!r}", file=sys.stderr)
            return 2
    else:
        # a folder's name may hold bytes that are not UTF-8 or control characters
        labels = [escaped(os.path.basename(os.path.normpath(r)) or r)[:60] for r in args.runs]
    if not args.out.lower().endswith(".png"):
        print(f"{PROG}: --out {args.out!r}: the output is a .png file", file=sys.stderr)
        return 2
    out_dir = os.path.dirname(os.path.abspath(args.out))
    if not os.path.isdir(out_dir):
        print(f"{PROG}: --out {args.out}: no directory {out_dir}", file=sys.stderr)
        return 2
    runs = []
    try:
        for path in args.runs:
            runs.append(read_run(path))
    except RunCurveError as err:
        print(f"{PROG}: {printable(err)}", file=sys.stderr)
        return 2
    shown = [f"{label} ({run['algorithm']})" if run["algorithm"] else label
             for label, run in zip(labels, runs)]
    references = tuple(x.strip() for x in args.references.split(",") if x.strip())
    try:
        draw_comparison(args.out, runs, shown, references)
    except OSError as err:
        print(f"{PROG}: cannot write {args.out}: {err.strerror or err}", file=sys.stderr)
        return 2
    for label, run in zip(shown, runs):
        last = run["evaluations"][-1]
        elo, low, high = run["ratings"][last["player"]]
        print(f"{label}: {len(run['evaluations'])} rated checkpoints over "
              f"{last['wall_s'] / 60:.1f} min; last {last['player']} Elo {elo:+.0f} "
              f"({low:+.0f}..{high:+.0f})")
    print(f"wrote {args.out}")
    return 0
