"""Experience shards: round trip, every kind of damage detected and quarantined (training goes
on), size bounds just under and over the limit, and a bounded fuzz of the reader."""
import os
import struct

import msgpack
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from network.batch_evaluator import UniformEvaluator
from rundata.config import loads_config
from rundata.rundir import open_run_dir
from rundata.shards import TRAILER, GameRecord, ShardError, ShardWriter, list_shards, read_shard
from selfplay_workers.worker import SelfplayWorker

CONFIG = loads_config("""
[model]
board_size = 5
blocks = 1
channels = 8
[selfplay]
games = 8
visits = 8
komi = 0.5
shard_games = 6
[trainer]
min_positions = 50
batch_size = 16
checkpoint_every = 5
publish = false
device = "cpu"
""")


def make_shards(directory, games=12, seed=5):
    worker = SelfplayWorker(CONFIG, UniformEvaluator(5), shard_dir=directory, seed=seed)
    worker.run(max_games=games)
    return worker


@pytest.fixture(scope="module")
def good_shard(tmp_path_factory):
    directory = tmp_path_factory.mktemp("good")
    make_shards(directory, games=6)
    name = list_shards(directory)[0]
    return (directory / name).read_bytes()


def test_round_trip_keeps_every_field(tmp_path):
    worker = make_shards(tmp_path, games=12)
    names = list_shards(tmp_path)
    shards = [read_shard(tmp_path / n) for n in names]
    games = [g for s in shards for g in s.games]
    assert sum(len(s.games) for s in shards) == worker.shards.games_in_shards >= 12
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".")]
    for game in games:
        assert game.size == 5 and game.komi == 0.5
        assert len(game.full) == len(game.moves) == len(game.root_value) == len(game.policy_count)
        # every full search's visit distribution sums to the visits asked for (8; tree reuse may add)
        starts = np.concatenate([[0], np.cumsum(game.policy_count, dtype=np.int64)]).astype(np.int64)
        for k in np.flatnonzero(game.full):
            assert game.policy_visits[starts[k]:starts[k + 1]].sum() >= 8
        assert game.end in ("passes", "move_cap")
        assert game.winner == (1 if game.score > 0 else -1)
    assert len({g.id for g in games}) == len(games)


def rewrite(data, header=None, records=None, count=None, fix_checksum=True):
    """A shard's bytes rebuilt from (possibly altered) header and records."""
    import hashlib
    unpacker = msgpack.Unpacker(raw=False)
    unpacker.feed(data[:-TRAILER.size])
    items = list(unpacker)
    head = items[0] if header is None else header
    recs = items[1:] if records is None else records
    body = msgpack.packb(head) + b"".join(msgpack.packb(r) for r in recs)
    digest = hashlib.sha256(body).digest() if fix_checksum else b"\0" * 32
    return body + TRAILER.pack(b"FGSHEND1", len(recs) if count is None else count, digest)


def records_of(data):
    unpacker = msgpack.Unpacker(raw=False)
    unpacker.feed(data[:-TRAILER.size])
    items = list(unpacker)
    return items[0], items[1:]


def illegal_move(data):
    header, recs = records_of(data)
    rec = dict(recs[0])
    moves = np.frombuffer(rec["moves"], "<i2").copy()
    moves[1] = moves[0]                           # the same point twice: occupied
    rec["moves"] = moves.tobytes()
    return rewrite(data, records=[rec] + recs[1:])


def wrong_result(data):
    header, recs = records_of(data)
    rec = dict(recs[0], winner=-recs[0]["winner"])
    return rewrite(data, records=[rec] + recs[1:])


def duplicate_id(data):
    header, recs = records_of(data)
    return rewrite(data, records=[recs[0], recs[0]] + recs[1:])


DAMAGE = {
    "truncated": (lambda d: d[:len(d) // 2], "trailer"),
    "truncated by one byte": (lambda d: d[:-1], "trailer"),
    "byte flipped": (lambda d: d[:40] + bytes([d[40] ^ 0xFF]) + d[41:], "checksum"),
    "empty": (lambda d: b"", "truncated"),
    "wrong version": (lambda d: rewrite(d, header=dict(records_of(d)[0], version=99)), "version"),
    "huge declared count": (lambda d: d[:-40] + struct.pack("<Q", 1 << 60) + d[-32:], "count"),
    "fewer records than counted": (lambda d: rewrite(d, count=len(records_of(d)[1]) + 1), "fewer"),
    "illegal move": (illegal_move, "move 1 is illegal"),
    "wrong result": (wrong_result, "disagree"),
    "duplicate id": (duplicate_id, "duplicate id"),
    "huge declared array": (lambda d: rewrite(d, records=[dict(records_of(d)[1][0],
                                                               versions=list(range(5000)))]),
                            "undecodable"),
}


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_damaged_shard_is_refused_with_its_reason(tmp_path, good_shard, kind):
    damage, reason = DAMAGE[kind]
    path = tmp_path / "bad.shard"
    path.write_bytes(damage(good_shard))
    with pytest.raises(ShardError) as info:
        read_shard(path)
    assert reason in str(info.value)
    assert str(path) in str(info.value)


def test_size_bound_just_under_and_over(tmp_path, good_shard):
    path = tmp_path / "s.shard"
    path.write_bytes(good_shard)
    assert len(read_shard(path, max_bytes=len(good_shard)).games) > 0
    with pytest.raises(ShardError, match="over the limit"):
        read_shard(path, max_bytes=len(good_shard) - 1)


def test_a_fifo_is_refused_without_blocking(tmp_path):
    path = tmp_path / "fifo.shard"
    os.mkfifo(path)
    with pytest.raises(ShardError, match="not a regular file"):
        read_shard(path)


def test_trainer_quarantines_bad_shards_and_trains_on(tmp_path, good_shard):
    from trainer.factory import make_trainer as Trainer

    run = open_run_dir(tmp_path / "run")
    make_shards(run.shards, games=24)
    good = list_shards(run.shards)
    for kind in ("truncated", "byte flipped", "empty", "wrong version", "illegal move"):
        (tmp_path / "run" / "shards" / f"zz-{kind.replace(' ', '_')}.shard").write_bytes(
            DAMAGE[kind][0](good_shard))
    trainer = Trainer(CONFIG, run)
    trainer.run(max_steps=6)
    assert trainer.step == 6
    assert trainer.quarantined == 5
    quarantined = sorted(n for n in os.listdir(run.quarantine) if n.endswith(".reason"))
    assert len(quarantined) == 5
    reasons = {n: (tmp_path / "run" / "quarantine" / n).read_text() for n in quarantined}
    assert "checksum" in reasons["zz-byte_flipped.shard.reason"]
    assert "illegal" in reasons["zz-illegal_move.shard.reason"]
    assert sorted(trainer.used_shards) == good
    assert list_shards(run.shards) == good


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fuzz_reader_raises_only_shard_error(tmp_path_factory, good_shard, data):
    """Random damage anywhere (bytes flipped, cut, inserted, with the checksum recomputed so the
    decoder and the record checks are reached): the reader returns a shard or raises ShardError."""
    import hashlib
    body = bytearray(good_shard[:-TRAILER.size])
    for _ in range(data.draw(st.integers(1, 4))):
        op = data.draw(st.sampled_from(["flip", "cut", "insert"]))
        at = data.draw(st.integers(0, max(0, len(body) - 1)))
        if op == "flip" and body:
            body[at] ^= data.draw(st.integers(1, 255))
        elif op == "cut":
            del body[at:at + data.draw(st.integers(1, 64))]
        else:
            body[at:at] = data.draw(st.binary(min_size=1, max_size=16))
    count = data.draw(st.sampled_from([None, 0, 1, 7, 1 << 40]))
    _, recs = records_of(good_shard)
    blob = bytes(body) + TRAILER.pack(b"FGSHEND1", len(recs) if count is None else count,
                                      hashlib.sha256(bytes(body)).digest())
    path = tmp_path_factory.mktemp("fuzz") / "f.shard"
    path.write_bytes(blob)
    try:
        read_shard(path)
    except ShardError:
        pass


def test_writer_refuses_a_game_of_another_board(tmp_path):
    writer = ShardWriter(tmp_path, prefix="t", size=5, komi=0.5)
    record = GameRecord(size=9, komi=0.5, moves=np.zeros(0, np.int16), full=np.zeros(0, np.uint8),
                        root_value=np.zeros(0, np.float32), policy_count=np.zeros(0, np.uint16),
                        policy_moves=np.zeros(0, np.int16), policy_visits=np.zeros(0, np.float32),
                        winner=0, score=0.0, end="passes", ownership=np.zeros(81, np.int8),
                        versions=[])
    with pytest.raises(ValueError, match="9x9"):
        writer.add(record)
    writer.abort()
    assert os.listdir(tmp_path) == []
