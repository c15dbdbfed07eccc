"""How closely a run's curve followed it: points, the longest gap between them, the newest
point's lag behind the newest checkpoint and the evaluator's share of a core, over a window of
the run (minutes from its first start; a run resumed from its directory counts the minutes it
was stopped too, so a later piece's window starts at the minute it was resumed, while gaps and
lags count running time only):

    python3 tools/eval_cadence.py RUN_DIR [--from-minute M] [--to-minute N] [--json]

Reads RUN/evaluations.jsonl (rows with 'rated') and RUN/metrics.csv (when each checkpoint was
written); evaluation.evaluations.cadence computes the figures.
"""
from __future__ import annotations

import argparse
import json
import sys

from evaluation.evaluations import cadence, read_evaluations, written_times
from rundata.rundir import RunDir


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir")
    parser.add_argument("--from-minute", type=float, default=0.0)
    parser.add_argument("--to-minute", type=float, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    run = RunDir(args.run_dir)
    rows = read_evaluations(run.evaluations)
    written = written_times(run)
    if not written or not rows:
        print(f"{args.run_dir}: no checkpoints in metrics.csv or no rated checkpoint")
        return 2
    first = min(r["time"] - r["wall_s"] for r in rows if "time" in r)   # the run's start
    start = first + 60 * args.from_minute
    end = first + 60 * args.to_minute if args.to_minute is not None else max(
        [r.get("rated", 0) for r in rows] + written)
    figures = cadence(rows, written, start, end)
    figures.update(from_minute=args.from_minute, to_minute=round((end - first) / 60, 1))
    if args.json:
        print(json.dumps(figures))
    else:
        lag = figures["max_lag_s"]
        share = figures["cpu_share"]
        print(f"minutes {args.from_minute:g}..{figures['to_minute']:g}: {figures['points']} "
              f"points, longest gap {figures['max_gap_s'] / 60:.1f} min, newest point at most "
              + (f"{lag / 60:.1f} min" if lag is not None else "-")
              + " behind the newest checkpoint, evaluator "
              + (f"{share:.3f}" if share is not None else "-") + " of a core")
    return 0


if __name__ == "__main__":
    sys.exit(main())
