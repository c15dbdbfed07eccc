"""`fastgo bench train`: the trainer's data path on one core (shards read and verified; positions
rebuilt by replay, encoded, under a random symmetry, batched) and training samples/s of the
config's network. The data path must outrun a GPU trainer (>= 20,000 positions/s on one core).

The shards are self-play games made first in this process (uniform evaluator, so the games are
cheap to make but have real lengths); nothing here needs a server.
"""
from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time

from fastgo.variants import Device


def parents():
    from fastgo_cli.parser import json_options
    return (json_options(),)


def add_arguments(parser):
    parser.add_argument("--config", default="quickstart",
                        help="a shipped config by name or a TOML file ([model], [trainer], [selfplay])")
    parser.add_argument("--games", type=int, default=400, help="self-play games in the shards")
    parser.add_argument("--batch", type=int, help="batch size (default: trainer.batch_size)")
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds of each timed run")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per figure (median)")
    parser.add_argument("--threads", type=int,
                        help="torch threads of the training steps (default: trainer.threads, "
                             "else 1); the trainer's thread scaling, one run per count")
    parser.add_argument("--no-compile", action="store_true",
                        help="leave out the torch.compile'd trainer (compiling takes tens of "
                             "seconds)")


def _timed(fn, seconds):
    """(items, elapsed) of repeated fn() -> items for about `seconds`."""
    fn()
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        count += fn()
    return count, time.perf_counter() - start


def training_variants(tc, has_bf16, compiled=True):
    """{label: trainer config} timed side by side: "config" (as given), "other layout" (the other
    memory layout), "fp32", and "bf16" where the CPU (or a GPU) runs bf16 (both eager); with
    `compiled`, also the config's precision and layout "eager" and "compiled" (torch.compile)."""
    import dataclasses

    variants = {"config": tc,
                "other layout": dataclasses.replace(tc, channels_last=not tc.channels_last),
                "fp32": dataclasses.replace(tc, precision="fp32", compile=False)}
    if has_bf16 or tc.device.startswith("cuda"):
        variants["bf16"] = dataclasses.replace(tc, precision="bf16", compile=False)
    if compiled:
        variants["eager"] = dataclasses.replace(tc, compile=False)
        variants["compiled"] = dataclasses.replace(tc, compile=True)
    return variants


def run(args) -> int:
    import dataclasses

    import numpy as np

    from rundata.config import ConfigError, load_config

    try:
        config = load_config(args.config)
        if not 1 <= args.games <= 1_000_000 or not 1 <= args.repeats <= 100 or not 0 < args.seconds <= 600:
            raise ConfigError("--games 1..1e6, --repeats 1..100 and --seconds (0, 600] please")
        if args.batch is not None and not 1 <= args.batch <= 65536:
            raise ConfigError(f"--batch: must be in 1..65536, got {args.batch}")
        if args.threads is not None and not 1 <= args.threads <= 1024:
            raise ConfigError(f"--threads: must be in 1..1024, got {args.threads}")
    except ConfigError as err:
        print(f"fastgo bench train: {err}", file=sys.stderr)
        return 2
    # torch only once the arguments are good: a refusal costs no torch import (3 CPU-s)
    import torch

    from network.batch_evaluator import UniformEvaluator
    from network.cpu_isa import cpu_has_bf16
    from rundata.rundir import open_run_dir
    from rundata.shards import list_shards, read_shard
    from selfplay_workers.worker import SelfplayWorker
    from trainer.factory import make_trainer
    from trainer.window import ReplayWindow, block_from_shard
    print(f"fastgo bench train: about {6 * args.repeats * args.seconds + args.games / 20 + 5:.0f} s "
          f"({args.games} games of self-play to read, then up to 6 x {args.repeats} runs of "
          f"{args.seconds:g} s)", file=sys.stderr, flush=True)
    threads = args.threads or config.trainer.threads or 1
    torch.set_num_threads(threads)
    batch = args.batch or config.trainer.batch_size
    mc = config.model
    with tempfile.TemporaryDirectory(prefix="fastgo-bench-train-") as workdir:
        run_dir = open_run_dir(workdir)
        sp = dataclasses.replace(config.selfplay, visits=8, cheap_visits=0, shard_games=50,
                                 resign_threshold=-1.0, seed=1)
        worker = SelfplayWorker(dataclasses.replace(config, selfplay=sp), UniformEvaluator(mc.board_size),
                                shard_dir=run_dir.shards, games=min(64, args.games))
        worker.run(max_games=args.games)
        names = list_shards(run_dir.shards)
        paths = [os.path.join(run_dir.shards, n) for n in names]
        total_bytes = sum(os.path.getsize(p) for p in paths)

        # 1. read + verify + flatten every shard
        read_rates, blocks = [], []
        for _ in range(args.repeats):
            start = time.perf_counter()
            blocks = [block_from_shard(read_shard(p), n) for p, n in zip(paths, names)]
            read_rates.append(sum(b.positions for b in blocks) / (time.perf_counter() - start))
        positions = sum(b.positions for b in blocks)

        # 2. sample: replay, encode, symmetry, batch
        window = ReplayWindow(mc.board_size, config.selfplay.komi, mc.encoding, window="fixed",
                              window_size=positions + 1)
        for block in blocks:
            window.add(block)
        rng = np.random.default_rng(0)
        buffers = window.batch_buffers(batch, mc.planes)
        sample_rates = []
        for _ in range(args.repeats):
            count, elapsed = _timed(lambda: window.sample(rng, buffers)["planes"].shape[0], args.seconds)
            sample_rates.append(count / elapsed)

        # 3. training steps (sampling included)
        tc = dataclasses.replace(config.trainer, batch_size=batch, publish=False, device=Device.CPU
                                 if not torch.cuda.is_available() else config.trainer.device,
                                 min_positions=1, samples_per_position=1e9,
                                 algorithm="alphazero", threads=threads)
        # the config's trainer beside its other memory layout and each precision this CPU runs
        # (bf16 autocast only where the CPU has bf16 instructions), rounds alternated, same data
        variants = training_variants(tc, cpu_has_bf16(), compiled=not args.no_compile)
        # a variant equal to one before it (the config's own trainer is already compiled or
        # eager) shares that one's trainer and timings rather than being built and timed again
        source = {label: next(first for first in variants if variants[first] == variant)
                  for label, variant in variants.items()}
        trainers, build_s = {}, {}
        for label, variant in variants.items():
            if source[label] != label:
                continue
            start = time.perf_counter()
            trainers[label] = make_trainer(dataclasses.replace(config, trainer=variant),
                                           open_run_dir(os.path.join(workdir, f"t-{label}")))
            build_s[label] = time.perf_counter() - start
            trainers[label].window = window
            trainers[label].buffers = buffers
        timed: dict[str, list[float]] = {label: [] for label in trainers}
        for _ in range(args.repeats):
            for label, one in trainers.items():
                count, elapsed = _timed(lambda one=one: (one.train_step(), batch)[1], args.seconds)
                timed[label].append(count / elapsed)
        variant_rates = {label: timed[source[label]] for label in variants}
        compile_s = compiled = None
        if "compiled" in variants:
            compile_s = build_s[source["compiled"]]
            compiled = trainers[source["compiled"]].core.train_view.compiled
        trainer = trainers["config"]
        train_rates = variant_rates["config"]
        medians = {label: statistics.median(rates) for label, rates in variant_rates.items()}
        other_rate = medians["other layout"]
    read_rate = statistics.median(read_rates)
    sample_rate = statistics.median(sample_rates)
    # positions/s of the whole data path when each position is read once and sampled R times
    r = config.trainer.samples_per_position
    combined = 1.0 / (1.0 / (read_rate * r) + 1.0 / sample_rate)
    result = {
        "data_positions_per_s": round(sample_rate, 1),
        "read_positions_per_s": round(read_rate, 1),
        "data_path_positions_per_s_at_cap": round(combined, 1),
        "train_samples_per_s": round(statistics.median(train_rates), 1),
        "train_vs_data_ratio": round(statistics.median(train_rates) / sample_rate, 4),
        "channels_last": tc.channels_last,
        "train_samples_per_s_other_layout": round(other_rate, 1),
        "train_samples_per_s_by_variant": {k: round(v, 1) for k, v in medians.items()},
        "precision": tc.precision, "cpu_has_bf16": cpu_has_bf16(),
        "compile": tc.compile, "compiled_ok": compiled,
        "compile_s": None if compile_s is None else round(compile_s, 1),
        "shard_bytes_per_position": round(total_bytes / max(1, positions), 1),
        "positions": positions, "games": args.games, "batch": batch, "model": mc.name,
        "board_size": mc.board_size, "encoding": mc.encoding, "device": str(trainer.device),
        "threads": torch.get_num_threads(), "samples_per_position": r,
        "repeats": args.repeats, "seconds": args.seconds,
    }
    print(f"data path {mc.board_size}x{mc.board_size} {mc.encoding}: {sample_rate:,.0f} positions/s "
          f"(replay + encode + symmetry + batch, one core); shards read and verified at "
          f"{read_rate:,.0f} positions/s ({result['shard_bytes_per_position']} bytes/position); "
          f"both at {r:g} samples/position: {combined:,.0f} positions/s")
    print(f"training {mc.name} batch {batch} on {result['device']} ({result['threads']} thread(s)): "
          f"{result['train_samples_per_s']:,.0f} samples/s "
          f"(data path {1 / result['train_vs_data_ratio']:.1f}x faster); "
          f"{'channels_last' if tc.channels_last else 'default layout'} is "
          f"{result['train_samples_per_s'] / max(other_rate, 1e-9):.2f}x the "
          f"{'default layout' if tc.channels_last else 'channels_last'} "
          f"({other_rate:,.0f} samples/s, rounds alternated)")
    precisions = [label for label in ("fp32", "bf16") if label in medians]
    print("precision (config's layout, rounds alternated): " + ", ".join(
        f"{label} {medians[label]:,.0f} samples/s" for label in precisions)
        + (f"; bf16 / fp32 = {medians['bf16'] / max(medians['fp32'], 1e-9):.2f}" if "bf16" in medians
           else "; no bf16 on this CPU (autocast there is emulated and slower), not timed")
        + f"; the config's precision: {tc.precision}")
    if "compiled" in medians:
        ratio = medians["compiled"] / max(medians["eager"], 1e-9)
        print(f"torch.compile (the config's precision and layout, rounds alternated): eager "
              f"{medians['eager']:,.0f} samples/s, compiled {medians['compiled']:,.0f} samples/s; "
              f"compiled / eager = {ratio:.2f}; "
              + (f"compiled in {compile_s:.0f} s" if compiled else
                 "torch.compile failed here, so both ran eagerly (see the warning)")
              + f"; the config's trainer.compile: {str(tc.compile).lower()}")
    if args.json:
        from fastgo import bounded_json

        with open(args.json, "w") as handle:
            handle.write(bounded_json.dumps(result, indent=2))
    return 0
