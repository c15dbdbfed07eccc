"""`fastgo bench board`: random playouts per second on one core, 9x9 and 19x19.

Each repeat runs fastgo.playout_bench.bench_playouts (a nogil C loop: copy the empty board, play
random non-eye-filling moves until two passes or the 2 * N * N cap) for --seconds; the median
repeat is reported. In the same run a plain pure-Python board (fastgo_cli.bench.python_board)
plays the same playouts for --python-seconds, and the ratio is printed (--no-python skips it).
With --json FILE: {"9": {"playouts_per_s": X, "moves_per_s": Y, ...}, "19": {...}}.
"""
import statistics

from fastgo_cli.bench.figures import write_json


def parents():
    from fastgo_cli.parser import json_options
    return (json_options(),)


def add_arguments(parser):
    from fastgo_cli.parser import komi, seed

    parser.add_argument("--repeats", type=int, default=5, help="timed repeats per size (median)")
    parser.add_argument("--seconds", type=float, default=1.0, help="seconds of each timed repeat")
    parser.add_argument("--sizes", default="9,19", help="comma-separated board sizes")
    parser.add_argument("--komi", type=komi, default=7.5)
    parser.add_argument("--seed", type=seed, default=1)
    parser.add_argument("--python-seconds", type=float, default=2.0,
                        help="seconds of pure-Python reference playouts per size")
    parser.add_argument("--no-python", action="store_true", help="skip the pure-Python reference")


def measure(size, repeats, seconds, komi=7.5, seed=1):
    """Median playouts/s and moves/s over `repeats` runs of `seconds` each."""
    from fastgo.playout_bench import bench_playouts

    bench_playouts(size, min(0.1, seconds), seed, komi)           # warm caches and clocks
    runs = []
    for i in range(repeats):
        playouts, moves, elapsed = bench_playouts(size, seconds, seed + i, komi)
        runs.append((playouts / elapsed, moves / elapsed, moves / playouts))
    playouts_per_s = statistics.median(r[0] for r in runs)
    moves_per_s = statistics.median(r[1] for r in runs)
    return {
        "playouts_per_s": round(playouts_per_s, 1),
        "moves_per_s": round(moves_per_s, 1),
        "moves_per_playout": round(statistics.median(r[2] for r in runs), 1),
        "repeats": repeats,
        "seconds_per_repeat": seconds,
        "runs_playouts_per_s": [round(r[0], 1) for r in runs],
    }


def run(args):
    if args.repeats < 1 or args.seconds <= 0:
        print("fastgo bench board: --repeats must be >= 1 and --seconds > 0")
        return 2
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        print(f"fastgo bench board: --sizes must be integers, got {args.sizes!r}")
        return 2
    results = {}
    print(f"random playouts, one core, komi {args.komi:g}, median of {args.repeats} x "
          f"{args.seconds:g} s")
    for size in sizes:
        try:
            figures = measure(size, args.repeats, args.seconds, args.komi, args.seed)
        except ValueError as exc:
            print(f"fastgo bench board: {exc}")
            return 2
        results[str(size)] = figures
        print(f"{size:>2}x{size:<2}  {figures['playouts_per_s']:>12,.0f} playouts/s  "
              f"{figures['moves_per_s']:>14,.0f} moves/s  "
              f"({figures['moves_per_playout']:.1f} moves/playout)")
        if not args.no_python:
            from fastgo_cli.bench.python_board import playouts_per_second
            py_playouts, py_moves = playouts_per_second(size, args.python_seconds, args.seed)
            figures["python_playouts_per_s"] = round(py_playouts, 3)   # a few a second: 0.1 is 2%
            figures["python_moves_per_s"] = round(py_moves, 1)
            figures["ratio_vs_python"] = round(figures["playouts_per_s"] / py_playouts, 1)
            print(f"       pure-Python board: {py_playouts:>7,.1f} playouts/s  {py_moves:>10,.0f} moves/s"
                  f"  -> ratio {figures['ratio_vs_python']:,.0f}x")
    write_json(args.json, results)
    return 0
