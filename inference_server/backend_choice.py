"""`backend = "auto"`: time every available CPU backend on the served network at the serving
batch, refuse those that disagree with fp32, pick the fastest, and remember the choice per
machine, runtime versions and network shape.

Agreement is measured on `reference_positions` (positions of seeded random games, encoded as the
network sees them): policy top-1 agreement with torch fp32 >= MIN_TOP1 and mean absolute value
error <= MAX_VALUE_MAE. Timing: each backend runs WARMUP batches, then batches for `seconds`;
the figure is the median batch rate, in evaluations per second. The whole choice is bounded by
the number of candidates times (build + warm-up + `seconds`).

The cache is one JSON file (`$XDG_CACHE_HOME/fastgo/backends.json`, else `~/.cache/...`) mapping
a key string to the chosen name and its table; a damaged cache is ignored with a warning and
rewritten atomically.
"""
from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import time

import numpy as np

from fastgo.files import atomic_write_text, read_bounded
from inference_server.backends import (TORCH_FP32, available_backends, build_backend, cpu_flags,
                                       cpu_name, versions)

log = logging.getLogger("fastgo.backends")

MIN_TOP1 = 0.95          # policy top-1 agreement with torch fp32 on the reference positions
MAX_VALUE_MAE = 0.05     # mean |value - fp32 value|
TIE_LOGITS = 0.01        # fp32 logits this close to the best count as the same top-1 move
WARMUP = 3
MAX_CACHE_BYTES = 1 << 20
MAX_CACHE_ENTRIES = 256


def reference_positions(config, count: int, seed: int = 2024) -> np.ndarray:
    """uint8 [count, P, N, N]: positions after a seeded random number of random legal moves
    (0 .. 1.2 * N * N), encoded with the network's encoding; the same for the same arguments.
    The games are played once per process (every reload checks its backend on them); each call
    returns a fresh copy."""
    return _reference_positions(config, count, seed).copy()


@functools.lru_cache(maxsize=8)
def _reference_positions(config, count, seed):
    from fastgo.board import Board, Random
    from fastgo.features import encode_board

    n = config.board_size
    rng = np.random.default_rng(seed)
    moves = Random(seed)
    out = np.empty((count, config.planes, n, n), dtype=np.uint8)
    for i in range(count):
        board = Board(n)
        for _ in range(int(rng.integers(0, int(1.2 * n * n) + 1))):
            if board.is_over():
                break
            board.play(board.random_move(moves))
        out[i] = encode_board(board, config.encoding)
    return out


def agreement(reference, candidate) -> dict:
    """top1: share of positions where the candidate's best move is fp32's best, or within
    TIE_LOGITS of it in fp32's logits (a near-tie is no disagreement: an untrained network's
    policy is nearly flat); value_mae: mean |value error|; max_logit_err: the largest |logit
    error|. Each argument is (logits [B, M], values [B])."""
    ref_logits, ref_values = reference
    logits, values = candidate
    best = ref_logits.max(1)
    chosen = ref_logits[np.arange(len(ref_logits)), logits.argmax(1)]
    return {"top1": float(np.mean(chosen >= best - TIE_LOGITS)),
            "value_mae": float(np.mean(np.abs(ref_values.reshape(-1) - values.reshape(-1)))),
            "max_logit_err": float(np.max(np.abs(ref_logits - logits)))}


def acceptable(agree: dict) -> bool:
    return (np.isfinite(agree["max_logit_err"]) and agree["top1"] >= MIN_TOP1
            and agree["value_mae"] <= MAX_VALUE_MAE)


def evals_per_second(backend, planes: np.ndarray, seconds: float) -> float:
    """Median rate over batches of `planes` run for about `seconds` after WARMUP batches."""
    for _ in range(WARMUP):
        backend.run(planes)
    rates = []
    end = time.perf_counter() + seconds
    while True:
        t0 = time.perf_counter()
        backend.run(planes)
        t1 = time.perf_counter()
        rates.append(len(planes) / max(t1 - t0, 1e-9))
        if t1 >= end and len(rates) >= 3:
            break
    return float(np.median(rates))


def measure_backends(net, *, batch: int, threads: int, names=None, seconds: float = 0.5,
                     channels_last=True, calibration=None, positions=None) -> dict:
    """{name: {"evals_per_s", "top1", "value_mae", "max_logit_err", "ok"} or {"error": text}}
    for `names` (default: every available backend), each timed at `batch` on `threads` threads."""
    import torch

    torch.set_num_threads(max(1, int(threads)))
    names = list(names or available_backends())
    if positions is None:
        positions = reference_positions(net.config, max(batch, 64))
    planes = np.ascontiguousarray(positions[:batch])
    if len(planes) < batch:
        planes = np.ascontiguousarray(np.resize(positions, (batch,) + positions.shape[1:]))
    reference = build_backend(TORCH_FP32, net, threads=threads,
                              channels_last=channels_last).run(positions)
    onnx_cache: dict = {}
    table = {}
    for name in names:
        try:
            backend = build_backend(name, net, threads=threads, channels_last=channels_last,
                                    calibration=positions if calibration is None else calibration,
                                    onnx_cache=onnx_cache)
            agree = agreement(reference, backend.run(positions))
            row = {"evals_per_s": round(evals_per_second(backend, planes, seconds), 1), **agree}
            row["ok"] = bool(acceptable(agree))
        except Exception as err:     # a runtime that fails on this machine is just not a candidate
            row = {"error": f"{type(err).__name__}: {str(err)[:200]}", "ok": False}
        table[name] = row
    return table


def pick(table: dict) -> str:
    """The fastest backend whose agreement is acceptable; torch-fp32 if none is."""
    good = [(row["evals_per_s"], name) for name, row in table.items() if row.get("ok")]
    return max(good)[1] if good else TORCH_FP32


# -- the per-machine cache ------------------------------------------------------------------------

def cache_path() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "fastgo", "backends.json")


def cache_key(config, *, batch: int, threads: int) -> str:
    flags = sorted(f for f in cpu_flags() if f.startswith(("avx", "amx", "fma")))
    machine = hashlib.sha256(" ".join([cpu_name()] + flags).encode()).hexdigest()[:16]
    runtimes = ",".join(f"{k}={v}" for k, v in sorted(versions().items()))
    return (f"{machine}|{runtimes}|{config.name}|{config.board_size}|{config.encoding}|"
            f"b{int(batch)}|t{int(threads)}")


def read_cache(path=None) -> dict:
    path = path or cache_path()
    try:
        doc = json.loads(read_bounded(path, MAX_CACHE_BYTES).decode("utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as err:
        log.warning("backend cache %s ignored: %s", path, err)
        return {}
    if not isinstance(doc, dict):
        log.warning("backend cache %s ignored: not a JSON object", path)
        return {}
    return {k: v for k, v in doc.items()
            if isinstance(k, str) and isinstance(v, dict) and v.get("choice") in available_backends()}


def write_cache(key: str, entry: dict, path=None) -> None:
    path = path or cache_path()
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        doc = read_cache(path)
        doc[key] = entry
        if len(doc) > MAX_CACHE_ENTRIES:
            for old in sorted(doc, key=lambda k: doc[k].get("time", 0))[:len(doc) - MAX_CACHE_ENTRIES]:
                del doc[old]
        atomic_write_text(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")
    except OSError as err:
        log.warning("backend cache %s not written: %s", path, err)


def choose_backend(net, *, batch: int, threads: int, channels_last=True, seconds: float = 0.4,
                   use_cache=True, calibration=None) -> tuple[str, dict]:
    """(name, table): the backend `auto` serves `net` with on this machine. A cached choice is
    reused when its backend is still available; the table is then the cached one."""
    key = cache_key(net.config, batch=batch, threads=threads)
    if use_cache:
        entry = read_cache().get(key)
        if entry is not None:
            return entry["choice"], entry.get("table", {})
    table = measure_backends(net, batch=batch, threads=threads, seconds=seconds,
                             channels_last=channels_last, calibration=calibration)
    choice = pick(table)
    log.info("backend auto: %s (batch %d, %d threads)\n%s", choice, batch, threads, format_table(table))
    if use_cache:
        write_cache(key, {"choice": choice, "table": table, "time": time.time()})
    return choice, table


def format_table(table: dict, peak: float | None = None) -> str:
    fp32 = table.get(TORCH_FP32, {}).get("evals_per_s")
    lines = [f"  {'backend':<15} {'evals/s':>9} {'x fp32':>7} {'top1':>6} {'value MAE':>10}  ok"]
    for name, row in table.items():
        if "error" in row:
            lines.append(f"  {name:<15} {'-':>9} {'':>7} {'':>6} {'':>10}  {row['error'][:60]}")
            continue
        ratio = f"{row['evals_per_s'] / fp32:.2f}" if fp32 else "-"
        lines.append(f"  {name:<15} {row['evals_per_s']:>9,.0f} {ratio:>7} {row['top1']:>6.3f} "
                     f"{row['value_mae']:>10.5f}  {'yes' if row['ok'] else 'no'}")
    return "\n".join(lines)
