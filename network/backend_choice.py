"""`backend = "auto"`: time every available CPU backend on the served network at the serving
batch, refuse those that disagree with fp32, pick the fastest, and remember the choice per
machine, runtime versions and network shape. Also the positions a backend is calibrated (int8)
and checked on.

Positions (`check_positions`): "reference" positions (seeded random games, the same in every
process) always; and, when the run has shards, "shards" positions rebuilt from its newest games.
int8 is then calibrated on shard positions from one half of those games and checked on positions
from the other half (disjoint games), as well as on the reference positions; without shards it
is calibrated and checked on the reference positions.

Agreement with torch fp32, on each set of positions (a backend must pass on every set; top-1
on the positions served only, see acceptable_everywhere):
  top1       share of positions where the candidate's best move is fp32's best or within
             TIE_LOGITS of it in fp32's logits, i.e. a move fp32 itself rates at >= exp(-0.1)
             = 90% of its best move's probability. Such near-ties are interchangeable for the
             search (Gumbel noise on logits has a standard deviation of 1.28; PUCT mixes 25%
             Dirichlet noise into the root prior), while int8's small logit noise flips them
             wherever the policy is nearly flat (young networks, quiet positions): exact top-1
             there measures ties, not quantization error; >= MIN_TOP1.
  policy_kl  mean KL(fp32 policy || candidate policy) in nats over all moves, <= MAX_POLICY_KL
             on the positions served, <= MAX_REFERENCE_KL on the reference positions when the
             run's own positions are there to be served (see acceptable_everywhere).
             Top-1 looks at one move; KL weighs every move's error by fp32's probability, so
             it catches a policy that is wrong away from its best move (activations clipped by
             calibration ranges that real positions exceed). For small errors KL ~ Var_p(logit
             error) / 2: the bound is about 0.14 nats RMS logit error where the policy has mass.
  value_mae  mean |value - fp32 value| <= MAX_VALUE_MAE.

Timing: each backend runs WARMUP batches, then batches for `seconds`; the figure is the median
batch rate, in evaluations per second. The whole choice is bounded by the number of candidates
times (build + warm-up + `seconds`).

Shard positions are bounded: at most MAX_SHARDS of the newest shards are opened (unreadable ones,
skipped with a warning, count too), each at most MAX_SHARD_BYTES, none after SHARD_READ_SECONDS;
memory is O(bytes read), the result at most CALIBRATION_POSITIONS + HELD_OUT_POSITIONS planes.

The choice is cached per machine (network.backend_cache: one bounded, schema-checked
reader; a damaged cache is ignored with one warning and rewritten atomically).

What a serving process knows beyond its server config (its run's shards, where its steps are
said) reaches each runner it builds as one BackendSetup argument.
"""
from __future__ import annotations

import functools
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from fastgo.board import Board, Random
from fastgo.features import encode_board
from fastgo.replay import encode_samples
from network.backend_cache import cache_key, read_cache, write_cache
from network.backend_support import TORCH_FP32, available_backends
from network.backends import build_backend
from rundata.shards import ShardError, list_shards, read_shard

log = logging.getLogger("fastgo.backends")

MIN_TOP1 = 0.95          # policy top-1 agreement with torch fp32, on every set of positions
MAX_VALUE_MAE = 0.05     # mean |value - fp32 value|
MAX_POLICY_KL = 0.01     # mean KL(fp32 policy || candidate policy), nats
# The policy-KL bound on positions checked but not served: the reference positions (random
# games) where the run has shards. int8 calibrated on the run's positions errs more on random
# games than on the run's own: over 326 checks in 2-core quickstart runs on an AMD EPYC (Zen 4)
# the held-out run positions' KL was at most 0.0043 nats while the reference positions' reached
# 0.018, and each of the 7 refusals above 0.01 served openvino-bf16 for the 600 s a refusal
# then waited (network.runner.Refusals), at about three quarters of int8's rate. Five times
# the served bound still refuses a calibration that clips what the run's positions never showed
# (about 0.3 nats RMS logit error).
MAX_REFERENCE_KL = 0.05
TIE_LOGITS = 0.1         # fp32 logits this close to the best count as the same top-1 move
WARMUP = 3

REFERENCE = "reference"          # labels of the position sets a backend is checked on
SHARDS = "shards"
REFERENCE_POSITIONS = 64         # reference positions checked (and calibrated on without shards)
CALIBRATION_POSITIONS = 256      # shard positions int8 is calibrated on
HELD_OUT_POSITIONS = 256         # shard positions, from other games, a backend is checked on
MAX_SHARDS = 8                   # newest shards opened at most, unreadable ones included
MAX_SHARD_BYTES = 32 << 20       # a larger shard is skipped
SHARD_READ_SECONDS = 5.0         # no shard is opened after this
POOL_POSITIONS = 16384           # no further shard is opened once the games read hold this many


@dataclass(frozen=True)
class BackendSetup:
    """How a runner's CPU backend is chosen and checked, beyond the server config: `shards`,
    the run's shard folder (None: none known), whose newest games int8 is calibrated on and
    every backend is checked against fp32 on (check_positions); `progress(text)`, called before
    each backend is built and timed (a role's start shows it is busy, not stuck: roles/serve.py
    prints it, and the supervisor waits on while lines come), None: nothing is said."""
    shards: str | None = None
    progress: Callable[[str], None] | None = None

    def __post_init__(self):
        object.__setattr__(self, "shards", os.fspath(self.shards) if self.shards else None)


def reference_positions(config, count: int, seed: int = 2024) -> np.ndarray:
    """uint8 [count, P, N, N]: positions after a seeded random number of random legal moves
    (0 .. 1.2 * N * N), encoded with the network's encoding; the same for the same arguments.
    The games are played once per process (every reload checks its backend on them); each call
    returns a fresh copy."""
    return _reference_positions(config, count, seed).copy()


@functools.lru_cache(maxsize=8)
def _reference_positions(config, count, seed):
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


@dataclass(frozen=True, eq=False)
class ShardSample:
    """Positions rebuilt from a run's shards, each under a random one of the 8 symmetries."""
    calibration: np.ndarray      # uint8 [C, P, N, N], C <= CALIBRATION_POSITIONS
    held_out: np.ndarray         # uint8 [H, P, N, N], H <= HELD_OUT_POSITIONS, from other games
    calibration_games: tuple     # ids of the games `calibration` is drawn from
    held_out_games: tuple        # ids of the games `held_out` is drawn from (disjoint)
    shards: tuple                # names of the shards read, newest first
    skipped: tuple               # names of the shards skipped (unreadable, other board size)

    def __bool__(self):
        return len(self.calibration) > 0 and len(self.held_out) > 0


def shard_positions(config, directory, *, calibration=CALIBRATION_POSITIONS,
                    held_out=HELD_OUT_POSITIONS, max_shards=MAX_SHARDS,
                    max_bytes=MAX_SHARD_BYTES, seconds=SHARD_READ_SECONDS, seed=0) -> ShardSample:
    """Positions from the games of the newest shards in `directory` (names sort by time), read
    and verified with rundata.shards and encoded as `config`'s network sees them (fastgo.replay).
    The games are shuffled (seeded) and dealt alternately into two halves; `calibration`
    positions are drawn without replacement from the first half's positions, `held_out` from
    the second's. An unreadable shard, one over max_bytes or one of another board size is
    skipped with a warning. At most `max_shards` files are opened, none after `seconds`, and no
    further one once POOL_POSITIONS positions are read. Falsy (empty arrays) without two games."""
    directory = os.fspath(directory)
    try:
        names = list_shards(directory)
    except OSError as err:
        log.warning("calibration shards %s unreadable: %s", directory, err)
        names = []
    deadline = time.monotonic() + seconds
    games: list = []                     # GameRecords with a move each
    read, skipped = [], []
    for name in reversed(names[-int(max_shards):] if max_shards > 0 else []):
        if time.monotonic() > deadline or sum(len(g.moves) for g in games) >= POOL_POSITIONS:
            break
        try:
            shard = read_shard(os.path.join(directory, name), max_bytes=max_bytes)
        except (ShardError, OSError) as err:
            log.warning("calibration: shard skipped: %s", err)
            skipped.append(name)
            continue
        if shard.header["size"] != config.board_size:
            log.warning("calibration: shard %s skipped: board %dx%d, the network plays %dx%d",
                        name, shard.header["size"], shard.header["size"], config.board_size,
                        config.board_size)
            skipped.append(name)
            continue
        games.extend(g for g in shard.games if len(g.moves))
        read.append(name)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(games)) if len(games) >= 2 else np.zeros(0, np.int64)
    halves = [[games[i] for i in order[0::2]], [games[i] for i in order[1::2]]]
    planes = [_encode_games(config, half, count, rng, encode_samples)
              for half, count in zip(halves, (calibration, held_out))]
    return ShardSample(planes[0], planes[1], tuple(g.id for g in halves[0]),
                       tuple(g.id for g in halves[1]), tuple(read), tuple(skipped))


def _encode_games(config, games, count, rng, encode_samples) -> np.ndarray:
    """uint8 [min(count, positions), P, N, N]: distinct positions of `games` drawn uniformly,
    each under a uniformly drawn symmetry. Komi does not enter the planes."""
    n = config.board_size
    lengths = np.array([len(g.moves) for g in games], dtype=np.int64)
    game_start = np.zeros(len(games) + 1, dtype=np.int64)
    np.cumsum(lengths, out=game_start[1:])
    total = int(game_start[-1])
    take = min(int(count), total)
    out = np.empty((take, config.planes, n, n), dtype=np.uint8)
    if take == 0:
        return out
    picks = np.sort(rng.choice(total, size=take, replace=False))
    game = (np.searchsorted(game_start, picks, side="right") - 1).astype(np.int32)
    move = (picks - game_start[game]).astype(np.int32)
    symmetry = rng.integers(0, 8, size=take).astype(np.uint8)
    policy_count = np.concatenate([g.policy_count for g in games]).astype(np.int64)
    policy_start = np.zeros(total + 1, dtype=np.int64)
    np.cumsum(policy_count, out=policy_start[1:])
    encode_samples(n, float(games[0].komi), config.encoding,
                   np.ascontiguousarray(np.concatenate([g.moves for g in games]), dtype=np.int16),
                   game_start, np.array([g.winner for g in games], dtype=np.int8),
                   np.ascontiguousarray(np.stack([g.ownership for g in games]), dtype=np.int8),
                   policy_start,
                   np.ascontiguousarray(np.concatenate([g.policy_moves for g in games]), dtype=np.int16),
                   np.ascontiguousarray(np.concatenate([g.policy_visits for g in games]),
                                        dtype=np.float32),
                   np.ascontiguousarray(np.concatenate([g.full for g in games]), dtype=np.uint8),
                   game, move, symmetry, out, np.empty((take, n * n + 1), np.float32),
                   np.empty(take, np.float32), np.empty(take, np.float32),
                   np.empty((take, n * n), np.float32))
    return out


@dataclass(frozen=True, eq=False)
class CheckPositions:
    """What int8 backends are calibrated on and what every backend is checked on."""
    calibration: np.ndarray      # uint8 [C, P, N, N]
    checks: dict                 # label (REFERENCE, SHARDS) -> uint8 [K, P, N, N]
    source: str                  # where `calibration` comes from, for the log


def check_positions(config, shard_dir=None, *, reference=REFERENCE_POSITIONS) -> CheckPositions:
    """Shard positions (shard_positions) when `shard_dir` holds usable shards, beside the
    reference positions; else the reference positions for both calibration and checks, with a
    log line saying why when a `shard_dir` was given."""
    ref = reference_positions(config, reference)
    if shard_dir:
        sample = shard_positions(config, shard_dir)
        if sample:
            source = (f"{len(sample.calibration)} positions of {len(sample.calibration_games)} "
                      f"games in the newest {len(sample.shards)} shard(s) of {shard_dir}")
            return CheckPositions(sample.calibration, {REFERENCE: ref, SHARDS: sample.held_out},
                                  source)
        why = "no usable shard" if not sample.shards else "fewer than two games"
        log.info("calibration: %s in %s: int8 calibrated on the reference positions", why,
                 shard_dir)
    return CheckPositions(ref, {REFERENCE: ref}, f"{len(ref)} reference positions")


def _log_softmax(logits):
    x = np.asarray(logits, dtype=np.float64)
    x = x - x.max(1, keepdims=True)
    return x - np.log(np.exp(x).sum(1, keepdims=True))


def agreement(reference, candidate) -> dict:
    """top1: share of positions where the candidate's best move is fp32's best, or within
    TIE_LOGITS of it in fp32's logits; policy_kl: mean KL(fp32 || candidate) of the softmax
    policies, nats; value_mae: mean |value error|; max_logit_err: the largest |logit error|.
    Each argument is (logits [B, M], values [B])."""
    ref_logits, ref_values = reference
    logits, values = candidate
    best = ref_logits.max(1)
    chosen = ref_logits[np.arange(len(ref_logits)), logits.argmax(1)]
    with np.errstate(all="ignore"):
        log_p, log_q = _log_softmax(ref_logits), _log_softmax(logits)
        kl = float(np.mean(np.sum(np.exp(log_p) * (log_p - log_q), axis=1)))
    return {"top1": float(np.mean(chosen >= best - TIE_LOGITS)),
            "value_mae": float(np.mean(np.abs(ref_values.reshape(-1) - values.reshape(-1)))),
            "policy_kl": kl,
            "max_logit_err": float(np.max(np.abs(ref_logits - logits)))}


def acceptable(agree: dict, *, top1=True, max_kl=MAX_POLICY_KL) -> bool:
    """Within every bound (top1=False: every bound but top-1's; max_kl: the policy-KL bound)."""
    return bool(np.isfinite(agree["max_logit_err"]) and (not top1 or agree["top1"] >= MIN_TOP1)
                and agree["value_mae"] <= MAX_VALUE_MAE
                and agree.get("policy_kl", 0.0) <= max_kl)


def acceptable_everywhere(agreements: dict) -> bool:
    """{label: agreement} within the bounds: value on every set of positions; top-1 and the
    policy KL's MAX_POLICY_KL on the positions served - the run's held-out positions where
    there are shards, else every set (the reference positions) - and MAX_REFERENCE_KL on the
    others. Reference positions are random games, far from a trained run's positions: there a
    young network's policy is nearly flat and int8 calibrated on the run's positions flips
    near-ties beyond TIE_LOGITS (64 positions: one flip is 1.6% of top-1) and errs more in
    every move, while the looser KL bound still refuses a calibration that breaks there."""
    served = {SHARDS} if SHARDS in agreements else set(agreements)
    return all(acceptable(agree, top1=label in served,
                          max_kl=MAX_POLICY_KL if label in served else MAX_REFERENCE_KL)
               for label, agree in agreements.items())


def worst(agreements: dict) -> dict:
    """The least agreeing figures over {label: agreement}: the lowest top1, the highest errors."""
    rows = list(agreements.values())
    out = {"top1": min(a["top1"] for a in rows)}
    for key in ("value_mae", "policy_kl", "max_logit_err"):
        values = [a[key] for a in rows]
        out[key] = float(np.nan) if any(not np.isfinite(v) for v in values) else max(values)
    return out


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
                     channels_last=True, calibration=None, positions=None, checks=None,
                     static_batches=(), progress=None) -> dict:
    """{name: {"evals_per_s", "top1", "value_mae", "policy_kl", "max_logit_err", "checks", "ok"}
    or {"error": text, "ok": False}} for `names` (default: every available backend), each timed
    at `batch` on `threads` threads. `positions` (default: reference positions) are timed;
    `checks` ({label: positions}, default {REFERENCE: positions}) are compared with fp32, each
    label's agreement under "checks" and the worst of them at the top level; int8 is calibrated
    on `calibration` (default: `positions`); OpenVINO compiles `static_batches` (build_backend).
    `progress(text)` (BackendSetup.progress) is called before each backend is built and timed.
    "ok": acceptable on every label."""
    import torch

    torch.set_num_threads(max(1, int(threads)))
    names = list(names or available_backends())
    if positions is None:
        positions = reference_positions(net.config, max(batch, REFERENCE_POSITIONS))
    planes = np.ascontiguousarray(positions[:batch])
    if len(planes) < batch:
        planes = np.ascontiguousarray(np.resize(positions, (batch,) + positions.shape[1:]))
    checks = dict(checks) if checks else {REFERENCE: positions}
    fp32 = build_backend(TORCH_FP32, net, threads=threads, channels_last=channels_last)
    references = {label: fp32.run(check) for label, check in checks.items()}
    onnx_cache: dict = {}
    table = {}
    for name in names:
        if progress is not None:
            progress(f"timing backend {name} at batch {batch}")
        try:
            backend = build_backend(name, net, threads=threads, channels_last=channels_last,
                                    calibration=positions if calibration is None else calibration,
                                    onnx_cache=onnx_cache, static_batches=static_batches)
            per = {label: agreement(references[label], backend.run(check))
                   for label, check in checks.items()}
            row = {"evals_per_s": round(evals_per_second(backend, planes, seconds), 1),
                   **worst(per), "checks": per}
            row["ok"] = acceptable_everywhere(per)
        except Exception as err:     # a runtime that fails on this machine is just not a candidate
            row = {"error": f"{type(err).__name__}: {str(err)[:200]}", "ok": False}
        table[name] = row
    return table


def pick(table: dict) -> str:
    """The fastest backend whose agreement is acceptable; torch-fp32 if none is."""
    good = [(row["evals_per_s"], name) for name, row in table.items() if row.get("ok")]
    return max(good)[1] if good else TORCH_FP32


def choose_backend(net, *, batch: int, threads: int, channels_last=True, seconds: float = 0.4,
                   use_cache=True, calibration=None, positions: CheckPositions | None = None,
                   static_batches=(), progress=None) -> tuple[str, dict]:
    """(name, table): the backend `auto` serves `net` with on this machine. A cached choice is
    reused when its backend is still available; the table is then the cached one. `positions`
    (check_positions) gives the calibration and the position sets checked; without it, the
    reference positions (and `calibration` for int8). `static_batches` as the server builds its
    backends with (build_backend); `progress` as measure_backends says its steps with."""
    key = cache_key(net.config, batch=batch, threads=threads)
    if use_cache:
        entry = read_cache().get(key)
        if entry is not None:
            return entry["choice"], entry.get("table", {})
    checks = None
    if positions is not None:
        calibration, checks = positions.calibration, positions.checks
    table = measure_backends(net, batch=batch, threads=threads, seconds=seconds,
                             channels_last=channels_last, calibration=calibration, checks=checks,
                             static_batches=static_batches, progress=progress)
    choice = pick(table)
    log.info("backend auto: %s (batch %d, %d threads; int8 calibrated on %s)\n%s", choice, batch,
             threads, positions.source if positions is not None else "the reference positions",
             format_table(table))
    if use_cache:
        write_cache(key, {"choice": choice, "table": table, "time": time.time()})
    return choice, table


def ranked(table: dict) -> list[str]:
    """The measured backends of `table`, fastest first, down to torch-fp32 (slower ones are
    never worth serving). Rows refused when measured are kept: agreement depends on the weights
    and the calibration, so each is checked again on the weights it is to serve."""
    rows = sorted(((row["evals_per_s"], name) for name, row in table.items()
                   if "error" not in row and "evals_per_s" in row), reverse=True)
    names = [name for _, name in rows]
    return names[:names.index(TORCH_FP32) + 1] if TORCH_FP32 in names else names + [TORCH_FP32]


def describe_agreement(agreements: dict) -> str:
    """One line: each label's top-1, policy KL and value MAE."""
    return "; ".join(f"{label} top-1 {a['top1']:.3f}, policy KL {a.get('policy_kl', 0.0):.5f}, "
                     f"value MAE {a['value_mae']:.4f}" for label, a in agreements.items())


def format_table(table: dict, peak: float | None = None) -> str:
    """The table as text: speed, then top-1, policy KL and value MAE on each set of positions."""
    fp32 = table.get(TORCH_FP32, {}).get("evals_per_s")
    labels = []
    for row in table.values():
        for label in row.get("checks", {REFERENCE: None}):
            if label not in labels:
                labels.append(label)
    head = "".join(f" {label[:9] + ' top1':>15} {'KL':>8} {'val MAE':>8}" for label in labels)
    lines = [f"  {'backend':<15} {'evals/s':>9} {'x fp32':>7}{head}  ok"]
    for name, row in table.items():
        if "error" in row:
            lines.append(f"  {name:<15} {'-':>9} {'':>7}  {row['error'][:60]}")
            continue
        ratio = f"{row['evals_per_s'] / fp32:.2f}" if fp32 else "-"
        checks = row.get("checks") or {REFERENCE: row}
        cells = ""
        for label in labels:
            agree = checks.get(label)
            if agree is None:
                cells += f" {'-':>15} {'-':>8} {'-':>8}"
                continue
            kl = agree.get("policy_kl")
            cells += (f" {agree['top1']:>15.3f} {kl if kl is not None else float('nan'):>8.5f} "
                      f"{agree['value_mae']:>8.5f}")
        lines.append(f"  {name:<15} {row['evals_per_s']:>9,.0f} {ratio:>7}{cells}  "
                     f"{'yes' if row['ok'] else 'no'}")
    return "\n".join(lines)
