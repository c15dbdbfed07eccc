"""The opponent pool: growth and the oldest dropped (rundata.pool), validation and seeded
sampling in proportion to the weights (rundata.pool, the workers' reader)."""
from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

from rundata.pool import (
    MAX_POOL_BYTES,
    OpponentPool,
    PoolError,
    check_entries,
    draw_opponent,
    read_pool,
    sample_opponent,
)


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
    # 64 levels parse (then fail the schema), 65 are refused unparsed
    (None, '{"version": 1, "entries": ' + "[" * 63 + "]" * 63 + "}", "entry 0: not a map"),
    (None, '{"version": 1, "entries": ' + "[" * 64 + "]" * 64 + "}",
     "not JSON: nested deeper than 64"),
    (None, '{"version": 1, "entries": ' + "[" * 990 + "]" * 990 + "}", "nested deeper than 64"),
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


# --- the trainer's side with a pool.json it cannot use (OpponentPool) ---------------------------

def _fifo(path):
    os.mkfifo(path)


def _directory(path):
    os.mkdir(path)
    (path / "inside.txt").write_text("user data")


def _dev_zero(path):
    os.symlink("/dev/zero", path)


def _raw(data):
    def make(path):
        path.write_bytes(data)
    return make


def _doc(doc):
    return _raw(json.dumps(doc).encode())


HOSTILE_POOLS = {
    "fifo": (_fifo, "not a regular file"),
    "directory": (_directory, "not a regular file"),
    "dev-zero symlink": (_dev_zero, "not a regular file"),
    "huge": (_raw(b" " * (MAX_POOL_BYTES + 1)), "over the limit"),
    "not json": (_raw(b"{\"version\": 1, \"entries\": [oops"), "not JSON"),
    "not utf-8": (_raw(b"{\"version\": 1, \"entries\": [\"\xff\xfe\"]}"), "not JSON"),
    "deep nesting": (_raw(b"[" * 100_000 + b"]" * 100_000), "not JSON"),
    "wrong top type": (_doc([1, 2]), "version 1 pool"),
    "entries not a list": (_doc({"version": 1, "entries": {"a": 1}}), "1..100000 entries"),
    "missing fields": (_doc({"version": 1, "entries": [{"name": "ckpt-0"}]}), "path must be"),
    "step a string": (_doc({"version": 1, "entries": [entry(step="0")]}), "step"),
    "nan weight": (_raw(b'{"version": 1, "entries": [{"name": "a", "path": "p", "step": 0, '
                        b'"weight": NaN}]}'), "weight"),
    "infinite weight": (_raw(b'{"version": 1, "entries": [{"name": "a", "path": "p", "step": 0, '
                             b'"weight": 1e999}]}'), "weight"),
    "huge step": (_raw(b'{"version": 1, "entries": [{"name": "a", "path": "p", "step": '
                       + b"9" * 30 + b', "weight": 1}]}'), "step"),
    "5000-digit step": (_raw(b'{"version": 1, "entries": [{"name": "a", "path": "p", "step": '
                             + b"9" * 5000 + b', "weight": 1}]}'), "step"),
    "401-digit weight": (_raw(b'{"version": 1, "entries": [{"name": "a", "path": "p", "step": 0, '
                              b'"weight": 1' + b"0" * 400 + b'}]}'), "weight"),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE_POOLS))
def test_a_bad_pool_file_is_moved_aside_and_a_new_pool_started(tmp_path, kind, caplog):
    caplog.set_level("WARNING", logger="rundata.pool")
    root = tmp_path / "run"
    root.mkdir()
    path = root / "pool.json"
    make, message = HOSTILE_POOLS[kind]
    make(path)
    before = os.lstat(path)
    pool = OpponentPool(str(root))
    entries = pool.load_or_start(ckpt(str(root), 0), 0)
    assert [(e.name, e.path, e.step, e.weight) for e in entries] == \
           [("ckpt-0", "checkpoints/ckpt-000000000.ckpt", 0, 1.0)]
    assert read_pool(str(path)) == entries                       # the trainer's pool, readable
    # The user's file is kept, as it was (the same inode), with the reason beside it.
    [aside] = pool.set_aside
    assert os.path.dirname(aside) == str(root / "quarantine")
    moved = os.lstat(aside)
    assert (moved.st_ino, moved.st_mode) == (before.st_ino, before.st_mode)
    reason_text = open(aside + ".reason", encoding="utf-8").read()
    assert message in reason_text and "unusable when the trainer started" in reason_text
    assert any(message in r.getMessage() and "moved to" in r.getMessage()
               for r in caplog.records)


def test_a_pool_file_changed_on_disk_is_moved_aside_before_the_trainer_writes(tmp_path):
    root = str(tmp_path)
    pool = OpponentPool(root)
    pool.load_or_start(ckpt(root, 0), 0)
    user = {"version": 1, "entries": [entry(weight=5.0)]}
    with open(pool.path, "w") as handle:       # a user's edit while the trainer runs
        json.dump(user, handle)
    assert pool.add(ckpt(root, 2), 2)
    assert [e.step for e in read_pool(pool.path)] == [0, 2]
    [aside] = pool.set_aside
    assert json.load(open(aside)) == user
    assert "changed on disk while the trainer ran" in open(aside + ".reason").read()
    # Its own file is replaced without a copy aside.
    assert pool.add(ckpt(root, 4), 4)
    assert len(pool.set_aside) == 1 and [e.step for e in read_pool(pool.path)] == [0, 2, 4]


def test_a_pool_file_that_cannot_be_moved_aside_is_left_alone(tmp_path, caplog):
    caplog.set_level("WARNING", logger="rundata.pool")
    root = tmp_path
    (root / "quarantine").write_text("a file where the folder should be")
    (root / "pool.json").write_bytes(b"\xff not a pool")
    pool = OpponentPool(str(root))
    entries = pool.load_or_start(ckpt(str(root), 0), 0)
    assert [e.step for e in entries] == [0] and pool.set_aside == []
    assert (root / "pool.json").read_bytes() == b"\xff not a pool"
    assert any("could not be moved aside" in r.getMessage() for r in caplog.records)
    # Once the way is clear, the next change writes the pool it kept in memory.
    os.unlink(root / "quarantine")
    assert pool.add(ckpt(str(root), 1), 1)
    assert [e.step for e in read_pool(str(root / "pool.json"))] == [0, 1]
    assert open(pool.set_aside[0], "rb").read() == b"\xff not a pool"
