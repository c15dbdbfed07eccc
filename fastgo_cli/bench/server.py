"""`fastgo bench server`: NN evals/s and p50/p99 latency through the inference server with C
client processes, against its ceiling measured in the same run: the raw batched forward of the
same network (same runner, device, threads, layout) at the same batch size in one process.

Rounds alternate raw and server measurements so both see the same machine load; each figure is
pooled over all rounds (total positions / total time), never the best round, so noise does not
bias the ratio upward. The server's own work per batch (parse, gather, scatter; waiting excluded)
and its forward time come from its stats counters.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

from fastgo import bounded_json
from fastgo.variants import BACKEND_ALIASES, Backend, Device
from rundata.config import ENCODING_PLANES


def parents():
    from fastgo_cli.parser import json_options
    return (json_options(),)


def add_arguments(parser):
    parser.add_argument("--config", help="TOML config; its [model] and [server] sections are used")
    from fastgo_cli.parser import alias
    parser.add_argument("--net", default="b6c64",
                        help="network bBLOCKScCHANNELS (without --config)")
    parser.add_argument("--size", type=int, default=9, help="board size (without --config)")
    alias(parser, "--board", "--board-size", dest="size", type=int)
    parser.add_argument("--encoding", default="alphazero", choices=sorted(ENCODING_PLANES))
    parser.add_argument("--batch", type=int, nargs="+", default=[64], help="max_batch B (several allowed)")
    parser.add_argument("--clients", type=int, default=2, help="client processes C")
    parser.add_argument("--request-size", type=int, default=0,
                        help="positions per request (default B // C: the server gathers C requests "
                             "per batch)")
    parser.add_argument("--inflight", type=int, default=2, help="requests in flight per client")
    parser.add_argument("--device", default=None, choices=Device.choices())
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: config, else 1)")
    parser.add_argument("--layout", default=None, choices=["channels_last", "contiguous"])
    parser.add_argument("--backend", default=None, choices=Backend.choices(),
                        help="server.backend (fastgo bench backends compares them all)")
    parser.add_argument("--max-wait-us", type=int, default=None)
    parser.add_argument("--overlap", choices=["on", "off"], default=None,
                        help="server.overlap: forward passes on their own thread (default: config, else off)")
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds of each measured window")
    parser.add_argument("--rounds", type=int, default=3, help="alternating raw/server rounds, pooled")


def _server_config(args):
    from rundata.config import Config, ModelConfig, ServerConfig, load_config
    config = load_config(args.config) if args.config else Config(
        model=ModelConfig.from_name(args.net, board_size=args.size, encoding=args.encoding),
        server=ServerConfig(threads=1, device=Device.CPU))
    return config


def _check_arguments(args, config):
    """Refuses, as ConfigError, what would otherwise fail later with a traceback."""
    from rundata.config import ConfigError
    for batch in args.batch:
        if not 1 <= batch <= 65536:
            raise ConfigError(f"--batch: must be in 1..65536, got {batch}")
    if not 1 <= args.clients <= 256:
        raise ConfigError(f"--clients: must be in 1..256, got {args.clients}")
    if not 1 <= args.inflight <= 64 or not 0 <= args.request_size <= 65536:
        raise ConfigError("--inflight must be in 1..64 and --request-size in 0..65536")
    if not 0 < args.seconds <= 3600 or not 1 <= args.rounds <= 100:
        raise ConfigError("--seconds must be in (0, 3600] and --rounds in 1..100")
    if args.threads is not None and not 0 <= args.threads <= 1024:
        raise ConfigError(f"--threads: must be in 0..1024, got {args.threads}")
    device = args.device or config.server.device
    if device == Device.CUDA:
        import torch
        if not torch.cuda.is_available():
            raise ConfigError("--device cuda: torch sees no CUDA device on this machine")
    backend = args.backend or config.server.backend
    if backend not in (Backend.AUTO, *BACKEND_ALIASES):
        from network.backend_support import available_backends
        if backend not in available_backends():
            raise ConfigError(f"--backend {backend}: not available on this machine "
                              f"(available: {', '.join(available_backends())})")


def _percentile(values, q):
    import numpy as np
    return float(np.percentile(np.asarray(values), q)) if values else float("nan")


def _measure_server(endpoint, model, args, request_size, seconds):
    from wire.client import InferenceClient
    with InferenceClient(endpoint, timeout_s=30, retries=1) as admin:
        before = admin.stats()
        start_at = time.time() + 2.0          # client processes import numpy/zmq and connect first
        end_at = start_at + seconds
        procs = [subprocess.Popen(
            [sys.executable, "-m", "fastgo_cli.bench.loadgen", "--server", endpoint,
             "--size", str(model.board_size), "--planes", str(model.planes),
             "--request-size", str(request_size), "--inflight", str(args.inflight),
             "--start-at", repr(start_at), "--end-at", repr(end_at), "--seed", str(i)],
            stdout=subprocess.PIPE, text=True) for i in range(args.clients)]
        results = []
        try:
            for proc in procs:
                out, _ = proc.communicate(timeout=seconds + 120)
                if proc.returncode != 0:
                    raise RuntimeError(f"load client exited with {proc.returncode}")
                try:
                    results.append(bounded_json.loads(out))
                except ValueError as err:
                    raise RuntimeError(f"load client printed no JSON result: {err}") from None
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait(10)
        after = admin.stats()
    delta = {key: after[key] - before[key] for key in
             ("batches", "positions", "forward_s_total", "overhead_s_total", "overhead_cpu_s_total",
              "errors_total")}
    return {
        "positions": sum(r["positions"] for r in results),
        "seconds": seconds,
        "latencies_ms": [x for r in results for x in r["latencies_ms"]],
        "late_clients": sum(1 for r in results if r["ready_at"] > start_at),
        "delta": delta,
        "max_batch": after["max_batch"],
        "runner": after["runner"],
    }


def _bench_batch(batch, args, config, workdir, checkpoint, model_net):
    import dataclasses

    import numpy as np

    from fastgo_cli.bench.harness import measure_raw, random_planes, start_serve_process
    from inference_server.slots import make_runner
    from rundata.config import to_dict
    from supervision.role_process import write_toml

    server = dataclasses.replace(config.server, endpoint="tcp://127.0.0.1:*", max_batch=batch,
                                 max_request_positions=max(batch, config.server.max_request_positions),
                                 checkpoints={"current": checkpoint}, slots=("current",), log_file="")
    if args.device:
        server = dataclasses.replace(server, device=args.device)
    if args.threads is not None:
        server = dataclasses.replace(server, threads=args.threads)
    if args.layout:
        server = dataclasses.replace(server, channels_last=args.layout == "channels_last")
    if args.max_wait_us is not None:
        server = dataclasses.replace(server, max_wait_us=args.max_wait_us)
    if args.backend is not None:
        server = dataclasses.replace(server, backend=args.backend)
    if args.overlap is not None:
        server = dataclasses.replace(server, overlap=args.overlap == "on")
    config_path = os.path.join(workdir, f"server_b{batch}.toml")
    write_toml(config_path, {"model": to_dict(config.model), "server": to_dict(server)})
    request_size = args.request_size or max(1, batch // args.clients)

    import torch
    if server.threads:
        torch.set_num_threads(server.threads)
    runner = make_runner(model_net, server)
    planes = random_planes(np.random.default_rng(1), batch, config.model)
    process = start_serve_process(config_path, os.path.join(workdir, f"server_b{batch}.log"))
    raws, servers = [], []
    try:
        for round_index in range(args.rounds):
            raws.append(measure_raw(runner, planes, args.seconds))
            servers.append(_measure_server(process.endpoint, config.model, args, request_size,
                                           args.seconds))
            print(f"  round {round_index + 1}: raw {raws[-1][0] / raws[-1][1]:.0f} evals/s, server "
                  f"{servers[-1]['positions'] / servers[-1]['seconds']:.0f} evals/s", file=sys.stderr)
    finally:
        process.stop()
    raw = sum(p for p, _ in raws) / sum(t for _, t in raws)
    served = sum(s["positions"] for s in servers) / sum(s["seconds"] for s in servers)
    latencies = [x for s in servers for x in s["latencies_ms"]]
    total = {key: sum(s["delta"][key] for s in servers) for key in servers[0]["delta"]}
    batches = max(1, total["batches"])
    runner_info = servers[-1]["runner"]
    return {
        "batch": batch,
        "server_evals_per_s": round(served, 1),
        "raw_evals_per_s": round(raw, 1),
        "ratio": round(served / raw, 4),
        "p50_ms": round(_percentile(latencies, 50), 3),
        "p99_ms": round(_percentile(latencies, 99), 3),
        "server_overhead_us_per_batch": round(1e6 * total["overhead_s_total"] / batches, 1),
        "server_overhead_cpu_us_per_batch": round(1e6 * total["overhead_cpu_s_total"] / batches, 1),
        "server_forward_ms": round(1e3 * total["forward_s_total"] / batches, 3),
        "raw_forward_ms": round(1e3 * batch / raw, 3),
        "mean_batch_size": round(total["positions"] / batches, 2),
        "mean_batch_fill": round(total["positions"] / batches / servers[-1]["max_batch"], 4),
        "clients": args.clients,
        "request_size": request_size,
        "inflight": args.inflight,
        "max_wait_us": server.max_wait_us,
        "threads": server.threads,
        "overlap": server.overlap,
        "backend": runner_info["backend"],
        "device": runner_info["device"],
        "layout": runner_info["layout"],
        "precision": runner_info["precision"],
        "model": config.model.name,
        "board_size": config.model.board_size,
        "encoding": config.model.encoding,
        "rounds": [{"raw_evals_per_s": round(r[0] / r[1], 1),
                    "server_evals_per_s": round(s["positions"] / s["seconds"], 1),
                    "late_clients": s["late_clients"], "server_errors": s["delta"]["errors_total"]}
                   for r, s in zip(raws, servers)],
    }


def run(args) -> int:
    from fastgo_cli.bench.figures import write_json
    from rundata.config import ConfigError

    try:
        config = _server_config(args)
        _check_arguments(args, config)
    except ConfigError as err:
        print(f"fastgo bench server: {err}", file=sys.stderr)
        return 2
    # torch only once the arguments are good: a refusal costs no torch import (3 CPU-s)
    from network.checkpoint import save_checkpoint
    from network.model import build_model
    results = []
    estimate = len(args.batch) * args.rounds * (2 * args.seconds + 3) + 5
    print(f"fastgo bench server: about {estimate:.0f} s ({len(args.batch)} batch size(s) x "
          f"{args.rounds} rounds of {args.seconds:g} s raw + {args.seconds:g} s served)",
          file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(prefix="fastgo-bench-") as workdir:
        net = build_model(config.model, seed=0).eval()
        checkpoint = os.path.join(workdir, "model.ckpt")
        save_checkpoint(checkpoint, net, step=1)
        for batch in args.batch:
            print(f"batch {batch}: {config.model.name} {config.model.board_size}x{config.model.board_size}, "
                  f"{args.clients} clients, {args.rounds} rounds of {args.seconds:g}s", file=sys.stderr)
            result = _bench_batch(batch, args, config, workdir, checkpoint, net)
            results.append(result)
            print(f"batch {batch:>4}  server {result['server_evals_per_s']:>9.0f} evals/s  raw "
                  f"{result['raw_evals_per_s']:>9.0f} evals/s  ratio {result['ratio']:.3f}  "
                  f"p50 {result['p50_ms']:.2f} ms  p99 {result['p99_ms']:.2f} ms  server overhead "
                  f"{result['server_overhead_us_per_batch']:.0f} us/batch (cpu "
                  f"{result['server_overhead_cpu_us_per_batch']:.0f} us)  "
                  f"fill {result['mean_batch_fill']:.2f}  "
                  f"[{result['backend']} {result['device']} {result['layout']} {result['precision']}, "
                  f"{result['threads']} threads, overlap {'on' if result['overlap'] else 'off'}]")
    write_json(args.json, results[0] if len(results) == 1 else results)
    return 0
