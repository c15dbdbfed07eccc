"""`fastgo bench selfplay`: the whole self-play loop (one server, W worker processes) against
its ceiling measured in the same run: the raw batched forward of the same network (same runner,
backend, threads) at the server's mean batch size, in this process, with the workers stopped.

Rounds alternate self-play and raw measurements; figures are pooled over rounds. NN evals/s,
mean batch and the server's waiting share come from the server's counters over the measured
window (after a warm-up); moves/s and games/hour from the workers' own counts. Policy-only
self-play (--algorithm reinforce|value) is measured by bench.selfplay_policy, games through the
recorder (--remote) by bench.selfplay_remote.
"""
from __future__ import annotations

import dataclasses
import os
import sys

from fastgo.variants import Algorithm, Worker, selfplay_worker

ALGORITHMS = tuple(algorithm.value for algorithm in Algorithm)


def parents():
    from fastgo_cli.parser import json_options
    return (json_options(),)


def add_arguments(parser):
    parser.add_argument("--config", default="9x9_cpu",
                        help="a shipped config by name or a TOML file ([model], [server], [selfplay])")
    parser.add_argument("--workers", type=int, default=1, help="worker processes W")
    parser.add_argument("--games-at-once", type=int, metavar="G",
                        help="games each worker plays at the same time (default: selfplay.games)")
    parser.add_argument("--visits", type=int, help="visits per move (default: selfplay.visits)")
    parser.add_argument("--seconds", type=float, default=10.0,
                        help="seconds of each round's measured window")
    parser.add_argument("--warmup", type=float, default=4.0, help="seconds before measuring")
    parser.add_argument("--rounds", type=int, default=2, help="alternating self-play/raw rounds")
    parser.add_argument("--model", metavar="PATH",
                        help="serve this checkpoint's network (its board size and encoding the "
                             "config's) instead of fresh weights: a trained network searches, "
                             "and repeats positions, as a run's does")
    parser.add_argument("--algorithm", choices=ALGORITHMS,
                        help="reinforce / value: policy-only self-play (no search), moves/s "
                             "against the raw forward at the same batch (default: "
                             "trainer.algorithm of the config)")
    parser.add_argument("--remote", action="store_true",
                        help="games/s recorded through the recorder (over a veth pair between "
                             "network namespaces when this user may create them, else loopback; "
                             "CURVE on) against local shard writing, and the recorder's CPU per game")


def run(args) -> int:
    from rundata.config import ConfigError, check_setting_flag, load_config

    try:
        config = load_config(args.config)
        for name, value, low, high in (("--workers", args.workers, 1, 256),
                                       ("--rounds", args.rounds, 1, 100)):
            if not low <= value <= high:
                raise ConfigError(f"{name}: must be in {low}..{high}, got {value}")
        check_setting_flag("--games-at-once", args.games_at_once, "selfplay.games")
        check_setting_flag("--visits", args.visits, "selfplay.visits")
        if not 0 < args.seconds <= 3600 or not 0 <= args.warmup <= 3600:
            raise ConfigError("--seconds must be in (0, 3600] and --warmup in [0, 3600]")
    except ConfigError as err:
        print(f"fastgo bench selfplay: {err}", file=sys.stderr)
        return 2
    if args.remote:
        from fastgo_cli.bench.selfplay_remote import run_remote
        return run_remote(args, config)
    if selfplay_worker(args.algorithm or config.trainer.algorithm) is Worker.POLICY:
        from fastgo_cli.bench.selfplay_policy import run_policy
        return run_policy(args, config)
    return run_search(args, config)


def run_search(args, config) -> int:
    """The search self-play loop (AlphaZero) against the raw forward at its mean batch."""
    import numpy as np

    from fastgo_cli.bench.figures import write_json
    from fastgo_cli.bench.harness import measure_raw, random_planes, selfplay_round, served_loop

    checkpoint = None
    if args.model:
        from network.checkpoint import load_checkpoint
        try:
            checkpoint = load_checkpoint(args.model, expect=config.model)
        except (OSError, ValueError) as err:
            print(f"fastgo bench selfplay: --model: {err}", file=sys.stderr)
            return 2
        config = dataclasses.replace(config, model=checkpoint.config)
    estimate = args.rounds * (2 * args.seconds + args.warmup + 3) + 5
    print(f"fastgo bench selfplay: about {estimate:.0f} s ({args.rounds} rounds of {args.seconds:g} s "
          f"self-play after {args.warmup:g} s warm-up, then {args.seconds:g} s raw forward)",
          file=sys.stderr, flush=True)
    rounds = []
    with served_loop(config, "fastgo-bench-selfplay-", checkpoint=checkpoint,
                     path=args.model) as loop:
        for index in range(args.rounds):
            sp = selfplay_round(args, loop.config_path, loop.endpoint, loop.workdir, index)
            batch = max(1, round(sp["delta"]["positions"] / max(1, sp["delta"]["batches"])))
            planes = random_planes(np.random.default_rng(index), batch, config.model)
            raw = measure_raw(loop.runner, planes, args.seconds)
            sp["raw"] = {"batch": batch, "positions": raw[0], "seconds": raw[1]}
            rounds.append(sp)
            print(f"  round {index + 1}: self-play {sp['delta']['positions'] / sp['seconds']:.0f} "
                  f"evals/s at mean batch {batch}, raw {raw[0] / raw[1]:.0f} evals/s", file=sys.stderr)
        server = loop.server
    seconds = sum(r["seconds"] for r in rounds)
    positions = sum(r["delta"]["positions"] for r in rounds)
    batches = max(1, sum(r["delta"]["batches"] for r in rounds))
    evals = positions / seconds
    raw = sum(r["raw"]["positions"] for r in rounds) / sum(r["raw"]["seconds"] for r in rounds)
    busy = sum(r["delta"]["forward_s_total"] + r["delta"]["overhead_s_total"] for r in rounds)
    workers = [w for r in rounds for w in r["workers"]]
    moves_per_s = sum(w["moves"] for w in workers) / (sum(w["seconds"] for w in workers) / args.workers)
    finished = sum(w["games"] for w in workers)
    # None when no game finished in the run (raise --seconds to measure it)
    games_per_hour = (3600 * finished / (sum(w["seconds"] for w in workers) / args.workers)
                      if finished else None)
    result = {
        "evals_per_s": round(evals, 1), "raw_evals_per_s": round(raw, 1),
        "ratio": round(evals / raw, 4), "moves_per_s": round(moves_per_s, 1),
        "games_per_hour": None if games_per_hour is None else round(games_per_hour, 1),
        "mean_batch": round(positions / batches, 2),
        "mean_batch_fill": round(positions / batches / rounds[-1]["max_batch"], 4),
        "server_wait_share": round(max(0.0, 1.0 - busy / seconds), 4),
        "evals_per_s_per_core": round(evals / (os.cpu_count() or 1), 1),
        "workers": args.workers, "games_per_worker": args.games_at_once or config.selfplay.games,
        "visits": args.visits or config.selfplay.visits, "model": config.model.name,
        "board_size": config.model.board_size, "backend": rounds[-1]["runner"]["backend"],
        "device": rounds[-1]["runner"]["device"], "threads": server.threads,
        "max_batch": rounds[-1]["max_batch"], "rounds": len(rounds), "seconds_per_round": args.seconds,
        "positions": positions, "batches": batches,
    }
    if all("cache_rows" in w for w in workers):       # selfplay.nn_cache on
        rows = sum(w["cache_rows"] for w in workers)
        result["cache_hit_share"] = round(sum(w["cache_hits"] for w in workers) / max(1, rows), 4)
    if args.model:
        result["checkpoint"] = os.path.basename(args.model)
    print(f"self-play {result['model']} {result['board_size']}x{result['board_size']}: "
          f"{result['evals_per_s']:.0f} NN evals/s, raw forward {result['raw_evals_per_s']:.0f} "
          f"evals/s at batch {round(result['mean_batch'])} -> ratio {result['ratio']:.3f}; "
          f"{result['moves_per_s']:.1f} moves/s, "
          + (f"{games_per_hour:.0f} games/hour; " if games_per_hour else
             "no game finished (longer --seconds for games/hour); ")
          + f"mean batch {result['mean_batch']:.1f} (fill {result['mean_batch_fill']:.2f}), "
          f"server waiting {100 * result['server_wait_share']:.0f}% "
          + (f"(cache answered {100 * result['cache_hit_share']:.1f}% of the workers' positions) "
             if "cache_hit_share" in result else "")
          + f"[{result['backend']} {result['device']}, {args.workers} worker(s) x "
          f"{result['games_per_worker']} games, {result['visits']} visits]")
    write_json(args.json, result)
    return 0
