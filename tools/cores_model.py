"""What a machine with more cores should run: server threads, self-play workers and trainer
threads for N cores, from figures measured on this one (the bench's), by a throughput model:

    python3 tools/cores_model.py --serve 23618 39000 --search 120000 --train 900 1500 \\
        --moves-per-eval 0.0354 --samples-per-position 8 --cores 2 4 8 16

--serve R1 R2: `fastgo bench server` evals/s at 1 and 2 threads (the quickstart's network and
backend); --search S: `fastgo bench mcts` simulations/s of one core with a zero-cost evaluator
(the worker's own cost of a leaf); --train T1 T2: `fastgo bench train` samples/s at 1 and 2
threads; --moves-per-eval: self-play moves per network evaluation (`fastgo bench selfplay`
moves/s over evals/s); --samples-per-position: trainer.samples_per_position.

The model: a server with t threads serves R1 * t * e^log2(t) evals/s (e = R2 / (2 R1), the
efficiency one doubling of threads kept, assumed to hold for each further doubling); the workers
need evals/S cores (one process per core at most); the trainer with k threads takes T1 * k *
f^log2(k) samples/s (f likewise); the evaluator holds 0.2 of a core. Server and trainer threads
take whole cores (t + k <= N); where all the roles together ask for more than N cores they share
them, and every rate is scaled by N / asked (the 2-core quickstart asks about 2.3). For each
allocation it counts the positions a second that are both played and trained on at the sample
rate (min(played, trained / samples_per_position)) and picks the largest, fewer cores on a tie.
Pure arithmetic: it measures nothing itself.
"""
from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass

EVALUATOR_CORES = 0.2
WORKER_CORE = 0.9            # a worker process is one thread: at most this much of a core


def scaled(one, two, threads):
    """Throughput at `threads` from the measured 1- and 2-thread figures (see the module)."""
    if threads <= 0:
        return 0.0
    efficiency = min(1.0, two / (2.0 * one)) if one > 0 else 0.0
    return one * threads * efficiency ** math.log2(threads)


@dataclass(frozen=True)
class Plan:
    cores: int
    server_threads: int
    workers: int
    trainer_threads: int
    evals_per_s: float
    positions_per_s: float
    trained_per_s: float       # positions a second trained on at the sample rate
    cores_used: float          # asked for: more than `cores` where the roles share them


def allocate(cores, serve, search, train, moves_per_eval, samples_per_position) -> Plan:
    """The best Plan for `cores` (see the module); serve and train are (1-thread, 2-thread)."""
    best, best_key = None, None
    for t in range(1, cores):
        served = scaled(serve[0], serve[1], t)
        worker_cores = served / search
        workers = max(1, math.ceil(worker_cores / WORKER_CORE))
        for k in range(1, cores - t + 1):
            asked = t + k + worker_cores + EVALUATOR_CORES
            share = min(1.0, cores / asked)              # time-shared when over
            evals = served * share
            positions = evals * moves_per_eval
            trained = min(positions, scaled(train[0], train[1], k) * share / samples_per_position)
            key = (round(trained, 6), -asked)
            if best_key is None or key > best_key:
                best_key = key
                best = Plan(cores, t, workers, k, evals, positions, trained, asked)
    if best is None:
        raise ValueError(f"{cores} core(s) do not fit a server thread and a trainer thread")
    return best


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--serve", type=float, nargs=2, required=True, metavar=("R1", "R2"))
    parser.add_argument("--search", type=float, required=True, metavar="S")
    parser.add_argument("--train", type=float, nargs=2, required=True, metavar=("T1", "T2"))
    parser.add_argument("--moves-per-eval", type=float, required=True)
    parser.add_argument("--samples-per-position", type=float, default=8.0)
    parser.add_argument("--cores", type=int, nargs="+", default=[2, 4, 8, 16])
    args = parser.parse_args(argv)
    print("| cores | server.threads | cluster.workers | trainer.threads | evals/s | positions/s "
          "| trained positions/s | cores used |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for n in args.cores:
        try:
            p = allocate(n, args.serve, args.search, args.train, args.moves_per_eval,
                         args.samples_per_position)
        except ValueError as err:
            print(f"| {n} | {err} |")
            continue
        print(f"| {n} | {p.server_threads} | {p.workers} | {p.trainer_threads} | "
              f"{p.evals_per_s:,.0f} | {p.positions_per_s:,.0f} | {p.trained_per_s:,.0f} | "
              f"{p.cores_used:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
