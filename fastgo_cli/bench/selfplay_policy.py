"""`fastgo bench selfplay --algorithm reinforce|value`: policy-only self-play (the AlphaGo
pipeline: no search) through the served loop (one server, W workers), in moves/s against the raw
batched forward of the same network at the server's mean batch and at the full batch (the games
per worker), each measured in the same round; figures are medians over rounds."""
from __future__ import annotations

import dataclasses
import os
import sys

from fastgo.variants import Algorithm
from rundata.rundir import RunDir


def _prepare_pool(run_dir, net):
    """A run directory whose pool.json names one checkpoint of `net`: the workers load it into
    their opponent slots, as in a REINFORCE run."""
    from network.checkpoint import save_checkpoint
    from rundata.pool import OpponentPool

    checkpoint = RunDir(run_dir).checkpoint(0)
    os.makedirs(os.path.dirname(checkpoint), exist_ok=True)
    save_checkpoint(checkpoint, net, step=0)
    OpponentPool(run_dir).load_or_start(checkpoint, 0)


def run_policy(args, config) -> int:
    """The bench of this module for the checked `args` of `fastgo bench selfplay`; returns 0."""
    import statistics

    import numpy as np

    from fastgo_cli.bench.figures import write_json
    from fastgo_cli.bench.harness import measure_raw, random_planes, selfplay_round, served_loop

    algorithm = args.algorithm or config.trainer.algorithm
    games = args.games_at_once or config.selfplay.games
    estimate = args.rounds * (3 * args.seconds + args.warmup + 3) + 5
    print(f"fastgo bench selfplay: about {estimate:.0f} s ({args.rounds} rounds of {args.seconds:g} s "
          f"policy-only self-play ({algorithm}) after {args.warmup:g} s warm-up, then twice "
          f"{args.seconds:g} s raw forward)", file=sys.stderr, flush=True)
    trainer = dataclasses.replace(config.trainer, algorithm=algorithm)
    rounds = []
    with served_loop(config, "fastgo-bench-policy-", trainer) as loop:
        for index in range(args.rounds):
            if algorithm == Algorithm.REINFORCE:
                _prepare_pool(os.path.join(loop.workdir, f"run{index}"), loop.net)
            sp = selfplay_round(args, loop.config_path, loop.endpoint, loop.workdir, index)
            rng = np.random.default_rng(index)
            mean_batch = max(1, round(sp["delta"]["positions"] / max(1, sp["delta"]["batches"])))
            raw = {}
            for name, batch in (("mean", mean_batch), ("full", games)):
                positions, seconds = measure_raw(loop.runner, random_planes(rng, batch, config.model),
                                                 args.seconds)
                raw[name] = {"batch": batch, "evals_per_s": positions / seconds}
            moves_per_s = sp["delta"]["positions"] / sp["seconds"]
            sp.update(raw=raw, moves_per_s=moves_per_s,
                      ratio=moves_per_s / raw["mean"]["evals_per_s"],
                      ratio_full=moves_per_s / raw["full"]["evals_per_s"])
            rounds.append(sp)
            print(f"  round {index + 1}: {moves_per_s:.0f} moves/s at mean batch {mean_batch}, "
                  f"raw {raw['mean']['evals_per_s']:.0f} evals/s there and "
                  f"{raw['full']['evals_per_s']:.0f} at batch {games}", file=sys.stderr)
        server = loop.server
    median = statistics.median
    workers = [w for r in rounds for w in r["workers"]]
    worker_seconds = sum(w["seconds"] for w in workers) / args.workers
    finished = sum(w["games"] for w in workers)
    result = {
        "algorithm": algorithm,
        "moves_per_s": round(median(r["moves_per_s"] for r in rounds), 1),
        "raw_evals_per_s": round(median(r["raw"]["mean"]["evals_per_s"] for r in rounds), 1),
        "ratio": round(median(r["ratio"] for r in rounds), 4),
        "raw_evals_per_s_full_batch": round(median(r["raw"]["full"]["evals_per_s"] for r in rounds), 1),
        "ratio_full_batch": round(median(r["ratio_full"] for r in rounds), 4),
        "mean_batch": round(median(r["delta"]["positions"] / max(1, r["delta"]["batches"])
                                   for r in rounds), 2),
        "games_per_hour": round(3600 * finished / worker_seconds, 1) if finished else None,
        "server_wait_share": round(median(max(0.0, 1.0 - (r["delta"]["forward_s_total"]
                                                          + r["delta"]["overhead_s_total"])
                                              / r["seconds"]) for r in rounds), 4),
        "rounds_ratio": [round(r["ratio"], 4) for r in rounds],
        "workers": args.workers, "games_per_worker": games, "model": config.model.name,
        "board_size": config.model.board_size, "backend": rounds[-1]["runner"]["backend"],
        "device": rounds[-1]["runner"]["device"], "threads": server.threads,
        "max_batch": rounds[-1]["max_batch"], "rounds": len(rounds),
        "seconds_per_round": args.seconds, "cpu_count": os.cpu_count(),
    }
    print(f"policy-only self-play ({algorithm}) {result['model']} {result['board_size']}x"
          f"{result['board_size']}: {result['moves_per_s']:.0f} moves/s, raw forward "
          f"{result['raw_evals_per_s']:.0f} evals/s at the mean batch {result['mean_batch']:.1f} -> "
          f"ratio {result['ratio']:.3f}; raw {result['raw_evals_per_s_full_batch']:.0f} evals/s at "
          f"the full batch {games} -> ratio {result['ratio_full_batch']:.3f} (medians of "
          f"{len(rounds)} rounds); "
          + (f"{result['games_per_hour']:.0f} games/hour; " if finished else "no game finished; ")
          + f"server waiting {100 * result['server_wait_share']:.0f}% [{result['backend']} "
          f"{result['device']}, {args.workers} worker(s) x {games} games]")
    write_json(args.json, result)
    return 0
