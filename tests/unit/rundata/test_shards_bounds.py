"""Shards of many tiny games (each held game costs a few KB whatever its bytes) and records
whose version list is longer than their game: refused before they are held; writers close a
shard at the bound the reader takes."""
from __future__ import annotations

import msgpack
import numpy as np
import pytest

from rundata import shards
from rundata.records import GameRecord, ShardError, check_record, unpack_record
from rundata.shards import MAX_SHARD_GAMES, RotatingShards, ShardWriter, read_shard

SIZE, KOMI = 2, 0.5


def tiny_game(versions=()):
    """A 2x2 game resigned by White after Black's pass: about 300 bytes on disk."""
    one = np.zeros(1)
    return GameRecord(size=SIZE, komi=KOMI, moves=np.array([SIZE * SIZE], np.int16),
                      full=one.astype(np.uint8), root_value=one.astype(np.float32),
                      policy_count=one.astype(np.uint16), policy_moves=np.zeros(0, np.int16),
                      policy_visits=np.zeros(0, np.float32), winner=1, score=0.0, end="resign",
                      ownership=np.zeros(SIZE * SIZE, np.int8), versions=list(versions),
                      t_start=1.0, t_end=2.0)


def test_versions_beyond_the_moves_are_refused():
    record = unpack_record(tiny_game(versions=[1, 2]).to_msgpack())
    check_record(record, size=SIZE, komi=KOMI)
    record["versions"] = [1] * 3                     # at most moves + 2
    check_record(record, size=SIZE, komi=KOMI)
    record["versions"] = [1] * 4
    with pytest.raises(ShardError, match="4 versions for 1 moves"):
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


def test_a_shard_of_many_tiny_games_is_refused_within_bounded_memory(tmp_path, monkeypatch,
                                                                    refusal_peak):
    # written past the bound the way a hostile writer would; the reader's allocations while it
    # refuses are traced (tracemalloc), its bound restored first
    monkeypatch.setattr(shards, "MAX_SHARD_GAMES", 1 << 30)
    writer = ShardWriter(tmp_path, prefix="t", size=SIZE, komi=KOMI)
    fields = msgpack.unpackb(tiny_game().to_msgpack())
    for _ in range(MAX_SHARD_GAMES + 20_000):
        writer._write(msgpack.packb({**fields, "id": f"{writer.count:032x}"}, use_bin_type=True))
        writer.count += 1
    path = writer.close("many.shard")
    monkeypatch.setattr(shards, "MAX_SHARD_GAMES", MAX_SHARD_GAMES)
    peak = refusal_peak(lambda: read_shard(path), ShardError, f"over the {MAX_SHARD_GAMES}")
    assert peak < 200 << 20, f"peak {peak >> 20} MB refusing the shard"


def test_a_game_of_no_moves_is_refused_read_and_written_and_skipped_by_workers(tmp_path):
    from selfplay_workers.game_output import GameOutput

    record = unpack_record(tiny_game().to_msgpack())
    record["moves"] = record["moves"][:0]
    for key in ("full", "root_value", "policy_count"):
        record[key] = record[key][:0]
    with pytest.raises(ShardError, match="no moves"):
        check_record(record, size=SIZE, komi=KOMI)
    empty = GameRecord(**{**tiny_game().__dict__, "moves": np.zeros(0, np.int16),
                          "full": np.zeros(0, np.uint8), "root_value": np.zeros(0, np.float32),
                          "policy_count": np.zeros(0, np.uint16)})
    writer = ShardWriter(tmp_path, prefix="t", size=SIZE, komi=KOMI)
    with pytest.raises(ValueError, match="no moves"):
        writer.add(empty)
    writer.abort()
    output = GameOutput(shard_dir=tmp_path, prefix="w", size=SIZE, komi=KOMI, worker=0, shard_games=10,
                        shard_seconds=60)
    output.add(empty)
    output.add(tiny_game())
    assert (output.empty, output.games) == (1, 1)
    path, games = output.shards.close()
    assert games == 1 and len(read_shard(path).games) == 1
