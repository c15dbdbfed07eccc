"""The network's outputs per position, cached (KataGo's NN cache), with every head it has.

`HeadsCache(heads, max_entries)` wraps a heads function

    heads(planes uint8 [B, P, N, N]) -> (logits [B, N*N+1], values [B], ownership [B, N*N] or
                                         None, score [B] or None, lead [B] or None)

(all from the side to move's view; ownership +1 = the mover's; score = the mover's final
margin in points at the komi the network learnt, its mean; lead = that margin's median, the
points that would even the game) and is itself a search evaluator,
`cache(planes) -> (logits, values)`, that runs the network only on the rows it has not seen.
`fetch(planes)` returns every head for each row, evaluating the misses. Rows are keyed by a
128-bit digest of their planes, so a position the search met under the identity symmetry is
found again by re-encoding it. At most `max_entries` positions are kept (least recently used
dropped first).
"""
from __future__ import annotations

import hashlib
from collections import OrderedDict

import numpy as np


def digest(row):
    """The cache key of one position's planes (uint8 [P, N, N], C-contiguous)."""
    return hashlib.blake2b(row.tobytes(), digest_size=16).digest()


class HeadsCache:
    def __init__(self, heads, max_entries=200_000):
        if int(max_entries) < 1:
            raise ValueError(f"max_entries must be >= 1, got {max_entries}")
        self.heads = heads
        self.max_entries = int(max_entries)
        self._rows = OrderedDict()      # digest -> (logits row, value, ownership row or None,
                                        #            score or None, lead or None)
        self.hits = 0
        self.misses = 0
        self.has_ownership = None       # known after the first evaluation
        self.has_score = None

    def __len__(self):
        return len(self._rows)

    def clear(self):
        self._rows.clear()

    def _evaluate(self, planes, keys, rows):
        """Runs the network on the rows of `planes` whose key is not cached; fills `rows`
        (then drops the least recently used beyond max_entries)."""
        missing = [i for i, key in enumerate(keys) if key not in self._rows]
        self.hits += len(keys) - len(missing)
        self.misses += len(missing)
        if missing:
            batch = planes if len(missing) == len(keys) else np.ascontiguousarray(planes[missing])
            logits, values, ownership, score, lead = self.heads(batch)
            logits = np.asarray(logits, dtype=np.float32)
            values = np.asarray(values, dtype=np.float32).reshape(-1)
            self.has_ownership = ownership is not None
            self.has_score = score is not None
            for j, i in enumerate(missing):
                self._rows[keys[i]] = (
                    logits[j].copy(), float(values[j]),
                    None if ownership is None else np.asarray(ownership[j], np.float32).copy(),
                    None if score is None else float(score[j]),
                    None if lead is None else float(lead[j]))
        for i, key in enumerate(keys):
            self._rows.move_to_end(key)
            rows[i] = self._rows[key]
        while len(self._rows) > self.max_entries:
            self._rows.popitem(last=False)

    def fetch(self, planes):
        """[(logits, value, ownership or None, score or None, lead or None)] for each row of `planes`
        (uint8 [B, P, N, N]); the network runs on the rows not cached."""
        planes = np.ascontiguousarray(planes, dtype=np.uint8)
        keys = [digest(planes[i]) for i in range(planes.shape[0])]
        rows = [None] * len(keys)
        self._evaluate(planes, keys, rows)
        return rows

    def lookup(self, key):
        """The cached heads of a digest, or None."""
        return self._rows.get(key)

    def __call__(self, planes):
        """The search's evaluator: (logits [B, N*N+1], values [B]) for `planes`."""
        rows = self.fetch(planes)
        return (np.stack([r[0] for r in rows]),
                np.fromiter((r[1] for r in rows), dtype=np.float32, count=len(rows)))
