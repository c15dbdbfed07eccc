"""The opponent pool of a REINFORCE run: `pool.json` in the run directory, written by the trainer
(OpponentPool, below) and read by the policy-only workers, which draw each mini-batch's opponent from
it. Torch-free (stdlib and numpy), so workers can import it.

    {"version": 1, "entries": [{"name": "ckpt-0", "path": "checkpoints/ckpt-000000000.ckpt",
                                "step": 0, "weight": 1.0}, ...]}

Paths are relative to the run directory and must stay inside it; weights are finite, >= 0 and
not all 0; an opponent is drawn with probability weight / sum of weights.
"""
from __future__ import annotations

import logging
import math
import os
import re
from dataclasses import dataclass

import numpy as np

from fastgo import bounded_json
from fastgo.files import atomic_write, escaped, printable, read_bounded, reason
from rundata.rundir import RunDir, checkpoint_player
from rundata.shards import quarantine

log = logging.getLogger("rundata.pool")
log.addHandler(logging.NullHandler())

POOL_VERSION = 1
MAX_POOL_BYTES = 4 << 20
MAX_POOL_ENTRIES = 100_000
MAX_WEIGHT = 1e12
_NAME = re.compile(r"[A-Za-z0-9_.:+-]{1,64}")


class PoolError(ValueError):
    """pool.json cannot be used; the message names the file and the first problem."""


@dataclass(frozen=True)
class PoolEntry:
    name: str                    # unique in the pool, e.g. "ckpt-1200"
    path: str                    # checkpoint file, relative to the run directory
    step: int                    # the trainer's step of that checkpoint
    weight: float                # sampling weight (>= 0)

    def to_dict(self) -> dict:
        return {"name": self.name, "path": self.path, "step": self.step, "weight": self.weight}


def pool_path(run_root) -> str:
    return RunDir(os.fspath(run_root)).pool


def check_entries(entries, where="pool", run_root=None) -> list[PoolEntry]:
    """Validates a pool's entries (dicts) and returns them as PoolEntry; PoolError names the
    entry and the problem. With run_root, each path must resolve inside that directory."""
    if not isinstance(entries, list) or not 1 <= len(entries) <= MAX_POOL_ENTRIES:
        raise PoolError(f"{where}: \"entries\" must be a list of 1..{MAX_POOL_ENTRIES} entries")
    pool, names = [], set()
    root = os.path.realpath(run_root) if run_root is not None else None
    for i, item in enumerate(entries):
        at = f"{where}: entry {i}"
        if not isinstance(item, dict):
            raise PoolError(f"{at}: not a map")
        extra = sorted(set(item) - {"name", "path", "step", "weight"})
        if extra:
            raise PoolError(f"{at}: unknown key {str(extra[0])[:40]!r}")
        name, rel, step, weight = (item.get(k) for k in ("name", "path", "step", "weight"))
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise PoolError(f"{at}: name must be 1..64 letters, digits or _.:+-")
        if name in names:
            raise PoolError(f"{at}: duplicate name {name!r}")
        names.add(name)
        if (not isinstance(rel, str) or not 0 < len(rel) <= 512 or os.path.isabs(rel)
                or ".." in rel.replace("\\", "/").split("/") or "\0" in rel):
            raise PoolError(f"{at} ({name}): path must be relative to the run directory, "
                            f"without '..'")
        if root is not None:
            real = os.path.realpath(os.path.join(root, rel))
            if os.path.commonpath([root, real]) != root:
                raise PoolError(f"{at} ({name}): path {rel[:80]!r} leads outside the run directory")
        if not isinstance(step, int) or isinstance(step, bool) or not 0 <= step < 1 << 63:
            raise PoolError(f"{at} ({name}): step must be an integer in 0..2**63-1")
        if (not isinstance(weight, (int, float)) or isinstance(weight, bool)
                or not math.isfinite(weight) or not 0 <= weight <= MAX_WEIGHT):
            raise PoolError(f"{at} ({name}): weight must be a number in 0..{MAX_WEIGHT:g}")
        pool.append(PoolEntry(name, rel, step, float(weight)))
    if sum(e.weight for e in pool) <= 0:
        raise PoolError(f"{where}: every weight is 0")
    return pool


def read_pool(path, *, run_root=None) -> list[PoolEntry] | None:
    """The entries of a pool file, or None when it does not exist. Raises PoolError. The file
    must be a regular file of at most MAX_POOL_BYTES; run_root defaults to its directory."""
    path = os.fspath(path)
    try:
        data = read_bounded(path, MAX_POOL_BYTES)
    except FileNotFoundError:
        return None
    except OSError as err:
        raise PoolError(f"{path}: {reason(err)}") from None
    try:
        doc = bounded_json.loads(data, max_size=MAX_POOL_BYTES)
    except ValueError as err:
        raise PoolError(f"{path}: not JSON: {escaped(err, 200, one_line=True)}") from None
    if not isinstance(doc, dict) or doc.get("version") != POOL_VERSION:
        raise PoolError(f"{path}: not a version {POOL_VERSION} pool (a map with \"version\": 1)")
    extra = sorted(set(doc) - {"version", "entries"})
    if extra:
        raise PoolError(f"{path}: unknown key {str(extra[0])[:40]!r}")
    root = run_root if run_root is not None else os.path.dirname(os.path.abspath(path))
    return check_entries(doc.get("entries"), path, root)


def sample_opponent(pool: list[PoolEntry], rng: np.random.Generator) -> PoolEntry:
    """One entry, drawn with probability weight / total weight from `rng`."""
    weights = np.array([e.weight for e in pool], dtype=np.float64)
    total = weights.sum()
    if not len(pool) or not math.isfinite(total) or total <= 0:
        raise PoolError("the pool has no entry with a weight > 0")
    return pool[int(rng.choice(len(pool), p=weights / total))]


def draw_opponent(pool: list[PoolEntry], seed: int, worker_id: int, batch: int) -> PoolEntry:
    """The opponent of a worker's mini-batch `batch`: sample_opponent from a stream seeded by
    (seed, worker_id, batch), so the same seed draws the same opponents after a restart."""
    return sample_opponent(pool, np.random.default_rng([int(seed), int(worker_id), int(batch)]))


# The trainer's side: the pool starts with the initial network's checkpoint, the REINFORCE trainer
# adds its current checkpoint every `pool_every` updates, the oldest entries are dropped beyond
# `pool_max` (0 = unbounded), and every change rewrites pool.json atomically. Every entry has
# weight 1 (uniform over the pool, as in AlphaGo's policy-gradient stage).
#
# pool.json is the trainer's, but it never writes over a file it did not write: a pool.json that
# cannot be used when the trainer starts (not a regular file, too large, not JSON, bad rows), or
# one changed on disk since the trainer wrote it, is moved to RUN/quarantine with its reason
# (rundata.shards.quarantine) before the trainer's pool is written; the trainer goes on with the
# pool it holds (a bad file at start: a new pool). When the file cannot be moved aside, the pool
# is kept in memory only and the write is tried again at the next change.

class OpponentPool:
    def __init__(self, run_root, *, pool_max: int = 0):
        self.root = os.path.abspath(os.fspath(run_root))
        self.path = pool_path(self.root)
        self.quarantine_dir = RunDir(self.root).quarantine   # pool files moved aside
        self.pool_max = int(pool_max)
        self.entries: list[PoolEntry] = []
        self.set_aside: list[str] = []       # where the files moved aside went
        self._written = None                 # identity of the pool.json this object wrote or read

    def relative(self, checkpoint_path) -> str:
        rel = os.path.relpath(os.path.abspath(checkpoint_path), self.root)
        if rel.startswith(".."):
            raise ValueError(f"checkpoint {checkpoint_path} is outside the run directory {self.root}")
        return rel.replace(os.sep, "/")

    def load_or_start(self, initial_checkpoint, step: int) -> list[PoolEntry]:
        """Reads pool.json (a restarted trainer) or starts it with the initial checkpoint (a path,
        or a callable returning one, called only when the pool starts). A pool.json that cannot
        be used is logged, moved aside, and a new pool started: never raises PoolError."""
        try:
            entries = read_pool(self.path, run_root=self.root)
        except PoolError as err:
            log.warning("%s; starting a new opponent pool", printable(err))
            self._move_aside(f"unusable when the trainer started: {err}")
            entries = None
        if entries is None:
            self.entries = []
            self.add(initial_checkpoint() if callable(initial_checkpoint) else initial_checkpoint,
                     step)
        else:
            self.entries = entries
            self._written = _identity(self.path)
        return self.entries

    def add(self, checkpoint_path, step: int) -> bool:
        """Adds a checkpoint (a no-op when that step is in the pool already); drops the oldest
        entries beyond pool_max; writes pool.json (see write). Returns whether the pool changed."""
        if any(e.step == step for e in self.entries):
            return False
        entry = PoolEntry(name=checkpoint_player(step), path=self.relative(checkpoint_path),
                          step=int(step), weight=1.0)
        entries = self.entries + [entry]
        if self.pool_max and len(entries) > self.pool_max:
            entries = entries[len(entries) - self.pool_max:]
        check_entries([e.to_dict() for e in entries], self.path, self.root)
        self.entries = entries
        self.write()
        return True

    def write(self) -> bool:
        """Writes the pool to pool.json atomically, first moving aside a file there that this
        object did not write. False (logged) when it could not: the pool stays in memory."""
        current = _identity(self.path)
        if current is not None and current != self._written:
            try:
                read_pool(self.path, run_root=self.root)
                problem = ""
            except PoolError as err:
                problem = f": {err}"
            if not self._move_aside(f"changed on disk while the trainer ran{problem}"):
                return False
        doc = {"version": POOL_VERSION, "entries": [e.to_dict() for e in self.entries]}
        text = bounded_json.dumps(doc, indent=1) + "\n"
        try:
            atomic_write(self.path, lambda handle: handle.write(text), binary=False,
                         suffix=".json")
        except OSError as err:
            log.warning("%s: not written (%s); the pool of %d entries is kept in memory",
                        printable(self.path), printable(reason(err)), len(self.entries))
            return False
        self._written = _identity(self.path)
        return True

    def _move_aside(self, why: str) -> bool:
        """Moves pool.json (whatever it is) to the quarantine folder with `why`; True when there
        is nothing there any more."""
        try:
            target = quarantine(self.path, self.quarantine_dir, why)
        except FileNotFoundError:
            return True
        except OSError as err:
            log.warning("%s: could not be moved aside (%s); it is left as it is and the pool is "
                        "kept in memory", printable(self.path), printable(reason(err)))
            return False
        self.set_aside.append(target)
        log.warning("%s moved to %s: %s", printable(self.path), printable(target), printable(why))
        return True

    def checkpoint_paths(self) -> set[str]:
        """Absolute paths of the pool's checkpoints (never pruned while in the pool)."""
        return {os.path.join(self.root, e.path) for e in self.entries}


def _identity(path):
    """(device, inode, size, mtime) of what is at `path` (not followed), None when absent."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns
