"""`fastgo bench backends`: every available CPU backend's evaluations per second on one network at
one batch, side by side in one run, each with its share of the core's fp32 peak (a large fp32
matrix product timed in the same run) and its agreement with torch fp32; and what `auto` picks.
With --shards DIR (a run's shard folder) int8 is calibrated on positions of the run's newest
games and every backend is checked on positions of other games as well as on the reference
positions (network.backend_choice.check_positions), as the server does.

JSON: {"batch": B, "threads": T, "model": "b4c32", "board_size": 9, "gflop_per_eval": x,
       "fp32_peak_gflops": x, "evals_per_s": {name: x}, "peak_share": {name: x},
       "agreement": {name: {"top1": x, "value_mae": x, "policy_kl": x, "max_logit_err": x,
                            "positions": {"reference": {...}, "shards": {...}}}},
       "calibration": "where int8's calibration positions come from",
       "positions": {"reference": count, "shards": count}, "auto": name,
       "refused": {name: reason}}
The top-level agreement figures are the worst over the position sets ("shards" only with
--shards); a backend is refused when any set is outside the bounds.
"""
from __future__ import annotations

import sys
import time
from typing import Any

from fastgo_cli.bench.figures import write_json


def parents():
    from fastgo_cli.parser import json_options
    return (json_options(),)


def add_arguments(parser):
    parser.add_argument("--config", help="TOML config (name or path); its [model] section is used")
    parser.add_argument("--model", metavar="CKPT",
                        help="a network checkpoint to measure instead of a fresh network")
    parser.add_argument("--net", help="network bBLOCKScCHANNELS instead of the config's "
                                      "(e.g. b6c64; b6c64nbt: nested bottleneck blocks)")
    parser.add_argument("--size", type=int, help="board size instead of the config's")
    parser.add_argument("--batch", type=int, default=0, help="batch size (default: server.max_batch)")
    parser.add_argument("--threads", type=int, default=0, help="threads (default: server.threads)")
    parser.add_argument("--seconds", type=float, default=2.0,
                        help="seconds of each backend's timed window")
    parser.add_argument("--backends", help="comma-separated subset (default: all available)")
    parser.add_argument("--shards", metavar="DIR",
                        help="a run's shard folder: calibrate int8 on, and check every backend "
                             "on, positions of its newest games (default: random-game positions)")


def gflop_per_eval(net) -> float:
    """Multiply-adds x 2 of one position's forward pass (convolutions and linear layers)."""
    import torch

    total = [0]

    def conv(module, inputs, output):
        k = module.kernel_size[0] * module.kernel_size[1]
        total[0] += 2 * output.numel() * k * module.in_channels // module.groups

    def linear(module, inputs, output):
        total[0] += 2 * output.numel() * module.in_features

    hooks = []
    for module in net.modules():
        if isinstance(module, torch.nn.Conv2d):
            hooks.append(module.register_forward_hook(conv))
        elif isinstance(module, torch.nn.Linear):
            hooks.append(module.register_forward_hook(linear))
    n = net.config.board_size
    with torch.inference_mode():
        net(torch.zeros(1, net.config.planes, n, n))
    for hook in hooks:
        hook.remove()
    return total[0] / 1e9


def fp32_peak_gflops(seconds: float = 1.0) -> float:
    """GFLOP/s of a 512x512 fp32 matrix product on the current torch threads (median)."""
    import numpy as np
    import torch

    a, b = torch.randn(512, 512), torch.randn(512, 512)
    for _ in range(3):
        torch.mm(a, b)
    rates: list[float] = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end or len(rates) < 3:
        t0 = time.perf_counter()
        torch.mm(a, b)
        rates.append(2 * 512 ** 3 / (time.perf_counter() - t0) / 1e9)
    return float(np.median(rates))


def run(args) -> int:
    import torch

    from network.backend_choice import (
        check_positions,
        format_table,
        measure_backends,
        pick,
        reference_positions,
    )
    from network.backend_support import available_backends
    from network.cpu_isa import isa_note
    from network.model import build_model, fuse_for_inference
    from rundata.config import Config, ConfigError, load_config, resolve_config

    try:
        config = load_config(resolve_config(args.config)) if args.config else Config()
    except ConfigError as err:
        print(f"fastgo bench backends: {err}", file=sys.stderr)
        return 2
    if args.model:
        from fastgo.files import escaped
        from network.checkpoint import CheckpointError, load_checkpoint

        try:        # the same refusal as gtp, analysis and arena give: one line, exit 2
            model = load_checkpoint(args.model).model
        except (CheckpointError, OSError) as err:
            print(f"fastgo bench backends: cannot load --model {args.model}: "
                  f"{escaped(err, 300, one_line=True)}", file=sys.stderr)
            return 2
    else:
        from rundata.config import ModelConfig, parse_section, to_dict

        fields = to_dict(config.model)
        try:
            fields.update(ModelConfig.shape_of(args.net) if args.net else {})
        except ConfigError as err:
            print(f"fastgo bench backends: --net: {err}", file=sys.stderr)
            return 2
        if args.size:
            fields.update(board_size=args.size)
        try:
            model_config = parse_section(ModelConfig, fields, source="--net/--size", prefix="model")
        except ConfigError as err:
            print(f"fastgo bench backends: {err}", file=sys.stderr)
            return 2
        model = build_model(model_config, seed=0)
    batch = args.batch or config.server.max_batch
    threads = args.threads or config.server.threads or 1
    if not 1 <= batch <= 4096 or not 1 <= threads <= 1024 or not 0 < args.seconds <= 600:
        print("fastgo bench backends: --batch must be 1..4096, --threads 1..1024, "
              "--seconds in (0, 600]", file=sys.stderr)
        return 2
    names = [s.strip() for s in (args.backends or "").split(",") if s.strip()] or available_backends()
    torch.set_num_threads(threads)
    net = fuse_for_inference(model)
    flop = gflop_per_eval(net)
    peak = fp32_peak_gflops()
    print(f"fastgo bench backends: {model.config.name} {model.config.board_size}x"
          f"{model.config.board_size}, batch {batch}, {threads} thread(s), {args.seconds:g} s each; "
          f"fp32 peak {peak:.1f} GFLOP/s, {flop * 1e3:.2f} MFLOP per evaluation", file=sys.stderr)
    if isa_note():
        print(f"  {isa_note()}", file=sys.stderr)
    positions = check_positions(model.config, args.shards)
    print(f"  int8 calibrated on {positions.source}", file=sys.stderr)
    table = measure_backends(net, batch=batch, threads=threads, names=names, seconds=args.seconds,
                             positions=reference_positions(model.config, max(batch, 64)),
                             calibration=positions.calibration, checks=positions.checks,
                             static_batches=(batch,))     # as the server compiles its batch
    choice = pick(table)
    print(format_table(table))
    print(f"  auto: {choice}")
    good = {name: row for name, row in table.items() if "error" not in row}
    result: dict[str, Any] = {"batch": batch, "threads": threads, "model": model.config.name,
              "board_size": model.config.board_size, "gflop_per_eval": flop,
              "fp32_peak_gflops": round(peak, 2),
              "evals_per_s": {name: row["evals_per_s"] for name, row in good.items()},
              "peak_share": {name: round(row["evals_per_s"] * flop / peak, 3) for name, row in good.items()},
              "agreement": {name: {**{k: row[k] for k in ("top1", "value_mae", "policy_kl",
                                                          "max_logit_err")},
                                   "positions": row["checks"]}
                            for name, row in good.items()},
              "calibration": positions.source,
              "positions": {label: len(check) for label, check in positions.checks.items()},
              "auto": choice,
              "refused": {name: row.get("error", "outside the agreement bounds")
                          for name, row in table.items() if not row.get("ok")}}
    for name, share in result["peak_share"].items():
        print(f"  {name:<15} {share:6.1%} of the fp32 peak")
    write_json(args.json, result)
    return 0

