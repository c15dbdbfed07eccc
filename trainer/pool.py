"""The trainer's side of the opponent pool (format and reader: fastgo.pool): the pool starts with
the initial network's checkpoint, the REINFORCE trainer adds its current checkpoint every
`pool_every` updates, the oldest entries are dropped beyond `pool_max` (0 = unbounded), and every
change rewrites pool.json atomically. Every entry has weight 1 (uniform over the pool, as in
AlphaGo's policy-gradient stage)."""
from __future__ import annotations

import json
import os

from fastgo.atomic import atomic_write
from fastgo.pool import POOL_VERSION, PoolEntry, check_entries, pool_path, read_pool


class OpponentPool:
    def __init__(self, run_root, *, pool_max: int = 0):
        self.root = os.path.abspath(os.fspath(run_root))
        self.path = pool_path(self.root)
        self.pool_max = int(pool_max)
        self.entries: list[PoolEntry] = []

    def relative(self, checkpoint_path) -> str:
        rel = os.path.relpath(os.path.abspath(checkpoint_path), self.root)
        if rel.startswith(".."):
            raise ValueError(f"checkpoint {checkpoint_path} is outside the run directory {self.root}")
        return rel.replace(os.sep, "/")

    def load_or_start(self, initial_checkpoint, step: int) -> list[PoolEntry]:
        """Reads pool.json (a restarted trainer) or starts it with the initial checkpoint."""
        entries = read_pool(self.path, run_root=self.root)
        if entries is None:
            self.entries = []
            self.add(initial_checkpoint, step)
        else:
            self.entries = entries
        return self.entries

    def add(self, checkpoint_path, step: int) -> bool:
        """Adds a checkpoint (a no-op when that step is in the pool already); drops the oldest
        entries beyond pool_max; writes pool.json. Returns whether the pool changed."""
        if any(e.step == step for e in self.entries):
            return False
        entry = PoolEntry(name=f"ckpt-{int(step)}", path=self.relative(checkpoint_path),
                          step=int(step), weight=1.0)
        entries = self.entries + [entry]
        if self.pool_max and len(entries) > self.pool_max:
            entries = entries[len(entries) - self.pool_max:]
        check_entries([e.to_dict() for e in entries], self.path, self.root)
        self.entries = entries
        self.write()
        return True

    def write(self):
        doc = {"version": POOL_VERSION, "entries": [e.to_dict() for e in self.entries]}
        text = json.dumps(doc, indent=1) + "\n"
        atomic_write(self.path, lambda handle: handle.write(text), binary=False, suffix=".json")

    def checkpoint_paths(self) -> set[str]:
        """Absolute paths of the pool's checkpoints (never pruned while in the pool)."""
        return {os.path.join(self.root, e.path) for e in self.entries}
