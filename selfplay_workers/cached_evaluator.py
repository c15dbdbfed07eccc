"""An evaluator that answers positions it has seen from a cache (`selfplay.nn_cache`).

`CachedEvaluator(inner, cache)` keeps the evaluator interface (network.batch_evaluator): each
submitted batch is looked up in a fastgo.nn_cache.NetworkCache (keyed by position up to
symmetry); only the rows it does not hold go to `inner`, and their answers are stored. The cache
holds one network version: when a reply comes from another version than the one it was filled
with, it is cleared before that reply's rows are stored. A batch the cache answers whole costs no
request. Counters: `rows`, `hits` (answered from the cache), `requests` (batches sent on).
"""
from __future__ import annotations

import itertools

import numpy as np

from fastgo.nn_cache import NetworkCache


class CachedEvaluator:
    def __init__(self, inner, cache: NetworkCache):
        self.inner = inner
        self.cache = cache
        self.nn = cache.board_size * cache.board_size
        self._version = None             # the network version the cache's entries came from
        self._tickets = itertools.count()
        self._open: dict[int, tuple] = {}
        self.rows = 0
        self.hits = 0
        self.requests = 0

    @property
    def model_version(self):
        return self.inner.model_version

    def evaluate(self, planes: np.ndarray):
        return self.receive(self.submit(planes))

    __call__ = evaluate

    def submit(self, planes: np.ndarray) -> int:
        planes = np.ascontiguousarray(planes, dtype=np.uint8)
        rows = planes.shape[0]
        keys, syms = self.cache.keys(planes)
        logits = np.empty((rows, self.nn + 1), np.float32)
        values = np.empty(rows, np.float32)
        hits = self.cache.lookup(keys, syms, logits, values)
        misses = np.flatnonzero(hits == 0)
        inner = None
        if len(misses):
            asked = planes if len(misses) == rows else planes[misses]
            inner = self.inner.submit(asked)
            self.requests += 1
            # `asked` is held until the reply: the inner evaluator may send it again
            inner = (inner, asked)
        ticket = next(self._tickets)
        self._open[ticket] = (inner, misses, keys, syms, logits, values)
        self.rows += rows
        self.hits += rows - len(misses)
        return ticket

    def receive(self, ticket: int):
        try:
            inner, misses, keys, syms, logits, values = self._open.pop(ticket)
        except KeyError:
            raise KeyError(f"unknown or already received ticket {ticket}") from None
        if inner is not None:
            got_logits, got_values = self.inner.receive(inner[0])
            got_logits = np.ascontiguousarray(got_logits, dtype=np.float32)
            got_values = np.ascontiguousarray(got_values, dtype=np.float32).reshape(-1)
            if got_logits.shape != (len(misses), self.nn + 1) or got_values.shape != (len(misses),):
                raise ValueError(f"the evaluator answered {len(misses)} rows with logits "
                                 f"{got_logits.shape} and values {got_values.shape}")
            version = self.inner.model_version
            if version != self._version:
                self.cache.clear()
                self._version = version
            logits[misses] = got_logits
            values[misses] = got_values
            if np.isfinite(got_logits).all() and np.isfinite(got_values).all():
                self.cache.store(keys[misses], syms[misses], got_logits, got_values)
        return logits, values

    def close(self):
        self._open.clear()
        self.inner.close()

    def stats(self) -> dict:
        return {"cache_rows": self.rows, "cache_hits": self.hits,
                "cache_hit_share": round(self.hits / self.rows, 4) if self.rows else 0.0}
