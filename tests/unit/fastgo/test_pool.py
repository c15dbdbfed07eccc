"""The opponent pool: growth and the oldest dropped (fastgo.pool), validation and seeded
sampling in proportion to the weights (fastgo.pool, the workers' reader)."""
from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

from fastgo.pool import (MAX_POOL_BYTES, PoolError, draw_opponent, read_pool, sample_opponent,
                         check_entries)
from fastgo.pool import OpponentPool


def ckpt(root, step):
    path = os.path.join(root, "checkpoints", f"ckpt-{step:09d}.ckpt")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "wb").close()
    return path


@pytest.mark.parametrize("pool_every,pool_max,updates", [(3, 0, 20), (2, 4, 21), (1, 1, 5)])
def test_pool_grows_as_configured(tmp_path, pool_every, pool_max, updates):
    root = str(tmp_path)
    pool = OpponentPool(root, pool_max=pool_max)
    pool.load_or_start(ckpt(root, 0), 0)
    for step in range(1, updates + 1):
        if step % pool_every == 0:
            pool.add(ckpt(root, step), step)
    added = [0] + [s for s in range(1, updates + 1) if s % pool_every == 0]
    kept = added[-pool_max:] if pool_max else added
    on_disk = read_pool(os.path.join(root, "pool.json"))
    assert [e.step for e in on_disk] == kept
    assert [e.name for e in on_disk] == [f"ckpt-{s}" for s in kept]
    assert [e.path for e in on_disk] == [f"checkpoints/ckpt-{s:09d}.ckpt" for s in kept]
    # A restarted trainer reads the same pool; adding a step already there changes nothing.
    again = OpponentPool(root, pool_max=pool_max)
    again.load_or_start(ckpt(root, 0), 0)
    assert again.entries == on_disk
    assert not again.add(ckpt(root, kept[-1]), kept[-1])


def test_sampling_follows_the_weights_and_the_seed():
    pool = check_entries([{"name": f"p{i}", "path": f"checkpoints/{i}.ckpt", "step": i,
                           "weight": w} for i, w in enumerate([1.0, 2.0, 3.0, 0.0, 4.0])])
    draws = 20_000
    rng = np.random.default_rng(5)
    counts = {}
    for _ in range(draws):
        name = sample_opponent(pool, rng).name
        counts[name] = counts.get(name, 0) + 1
    assert "p3" not in counts                       # weight 0: never drawn
    total = 10.0
    for entry in pool:
        if entry.weight == 0:
            continue
        p = entry.weight / total
        expected = draws * p
        bound = 5 * math.sqrt(draws * p * (1 - p))  # 5 standard deviations of a binomial
        assert abs(counts[entry.name] - expected) < bound, (entry.name, counts, expected)
    first, second = np.random.default_rng(42), np.random.default_rng(42)
    assert [sample_opponent(pool, first).name for _ in range(200)] == \
           [sample_opponent(pool, second).name for _ in range(200)]
    other, again = np.random.default_rng(43), np.random.default_rng(42)
    assert [sample_opponent(pool, other).name for _ in range(200)] != \
           [sample_opponent(pool, again).name for _ in range(200)]
    # The workers' per-mini-batch draw depends on (seed, worker, batch) only.
    assert [draw_opponent(pool, 7, 1, b).name for b in range(50)] == \
           [draw_opponent(pool, 7, 1, b).name for b in range(50)]
    assert [draw_opponent(pool, 7, 1, b).name for b in range(50)] != \
           [draw_opponent(pool, 7, 2, b).name for b in range(50)]


def write(tmp_path, doc, raw=None):
    path = tmp_path / "pool.json"
    path.write_text(raw if raw is not None else json.dumps(doc))
    return str(path)


def entry(**kw):
    base = {"name": "ckpt-0", "path": "checkpoints/ckpt-000000000.ckpt", "step": 0, "weight": 1.0}
    base.update(kw)
    return base


@pytest.mark.parametrize("doc,raw,message", [
    ({"version": 2, "entries": [entry()]}, None, "version 1 pool"),
    ({"version": 1, "entries": []}, None, "1..100000 entries"),
    ({"version": 1, "entries": [entry(path="../x.ckpt")]}, None, "without '..'"),
    ({"version": 1, "entries": [entry(path="/etc/passwd")]}, None, "relative"),
    ({"version": 1, "entries": [entry(weight=-1)]}, None, "weight"),
    ({"version": 1, "entries": [entry(weight=0)]}, None, "every weight is 0"),
    (None, '{"version": 1, "entries": [{"name": "a", "path": "p", "step": 0, "weight": NaN}]}', "weight"),
    ({"version": 1, "entries": [entry(weight=True)]}, None, "weight"),
    ({"version": 1, "entries": [entry(step=-3)]}, None, "step"),
    ({"version": 1, "entries": [entry(name="a b")]}, None, "name"),
    ({"version": 1, "entries": [entry(), entry(path="checkpoints/b.ckpt")]}, None, "duplicate name"),
    ({"version": 1, "entries": [entry(colour="red")]}, None, "unknown key"),
    ({"version": 1, "entries": [entry()], "extra": 1}, None, "unknown key"),
    (None, "{not json", "not JSON"),
    (None, "[1, 2]", "version 1 pool"),
])
def test_bad_pool_files_are_refused_in_one_line(tmp_path, doc, raw, message):
    path = write(tmp_path, doc, raw)
    with pytest.raises(PoolError) as err:
        read_pool(path)
    text = str(err.value)
    assert message in text and "\n" not in text and path in text


def test_size_bound_symlink_escape_and_absent(tmp_path):
    assert read_pool(str(tmp_path / "pool.json")) is None
    big = write(tmp_path, None, " " * (MAX_POOL_BYTES + 1))
    with pytest.raises(PoolError, match="over the limit"):
        read_pool(big)
    outside = tmp_path / "outside"
    outside.mkdir()
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    os.symlink(outside, run / "checkpoints" / "elsewhere")
    (run / "pool.json").write_text(json.dumps(
        {"version": 1, "entries": [entry(path="checkpoints/elsewhere/x.ckpt")]}))
    with pytest.raises(PoolError, match="outside the run directory"):
        read_pool(str(run / "pool.json"))
    os.mkfifo(tmp_path / "fifo.json")
    with pytest.raises(PoolError, match="not a regular file"):
        read_pool(str(tmp_path / "fifo.json"))
