"""Shards of many tiny games (each held game costs a few KB whatever its bytes) and records
whose version list is longer than their game: refused before they are held; writers close a
shard at the bound the reader takes."""
from __future__ import annotations

import subprocess
import sys

import msgpack
import numpy as np
import pytest

from fastgo import shards
from fastgo.records import GameRecord, ShardError, check_record, unpack_record
from fastgo.shards import MAX_SHARD_GAMES, RotatingShards, ShardWriter, read_shard

SIZE, KOMI = 2, 0.5


def tiny_game(versions=()):
    """A 2x2 game Black resigned by White at move 0: about 300 bytes on disk."""
    empty = np.zeros(0)
    return GameRecord(size=SIZE, komi=KOMI, moves=empty.astype(np.int16),
                      full=empty.astype(np.uint8), root_value=empty.astype(np.float32),
                      policy_count=empty.astype(np.uint16), policy_moves=empty.astype(np.int16),
                      policy_visits=empty.astype(np.float32), winner=1, score=0.0, end="resign",
                      ownership=np.zeros(SIZE * SIZE, np.int8), versions=list(versions),
                      t_start=1.0, t_end=2.0)


def test_versions_beyond_the_moves_are_refused():
    record = unpack_record(tiny_game(versions=[1, 2]).to_msgpack())
    check_record(record, size=SIZE, komi=KOMI)
    record["versions"] = [1] * 3
    with pytest.raises(ShardError, match="3 versions for 0 moves"):
        check_record(record, size=SIZE, komi=KOMI)


def test_a_shard_of_more_games_than_the_bound_is_refused_unread(tmp_path, monkeypatch):
    monkeypatch.setattr(shards, "MAX_SHARD_GAMES", 50)
    writer = ShardWriter(tmp_path, prefix="t", size=SIZE, komi=KOMI)
    for _ in range(50):
        writer.add(tiny_game())
    with pytest.raises(ValueError, match="at most 50 games"):
        writer.add(tiny_game())
    writer.abort()
    rotating = RotatingShards(tmp_path, prefix="t", size=SIZE, komi=KOMI, max_games=10 ** 6,
                              max_seconds=3600)
    for _ in range(50):
        rotating.add(tiny_game())
    assert rotating.due()
    rotating.writer.abort()


# VmHWM, not ru_maxrss: a child forked from a large test process inherits the parent's maxrss
PEAK_SCRIPT = """
import sys
from fastgo.shards import ShardError, read_shard
try:
    read_shard(sys.argv[1])
    print("read")
except ShardError as err:
    print("refused", err)
print([line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM")][0])
"""


def test_a_shard_of_many_tiny_games_is_refused_within_bounded_memory(tmp_path, monkeypatch):
    # written past the bound the way a hostile writer would; the reader is another process
    monkeypatch.setattr(shards, "MAX_SHARD_GAMES", 1 << 30)
    writer = ShardWriter(tmp_path, prefix="t", size=SIZE, komi=KOMI)
    fields = msgpack.unpackb(tiny_game().to_msgpack())
    for _ in range(MAX_SHARD_GAMES + 20_000):
        writer._write(msgpack.packb({**fields, "id": f"{writer.count:032x}"}, use_bin_type=True))
        writer.count += 1
    path = writer.close("many.shard")
    out = subprocess.run([sys.executable, "-c", PEAK_SCRIPT, path], capture_output=True,
                         text=True, timeout=60).stdout.split("\n")
    assert out[0].startswith("refused") and f"over the {MAX_SHARD_GAMES}" in out[0], out
    assert int(out[1]) < 200 * 1024, f"peak RSS {int(out[1]) // 1024} MB refusing the shard"
