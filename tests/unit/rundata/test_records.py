"""Hostile game records (rundata.records, rundata.shards): a small message must not decode
into a huge structure (peak memory measured with tracemalloc against the message's size), and
valid-looking records that would poison training are refused with the field named."""
import tracemalloc

import msgpack
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rundata.records import MAX_VISITS, GameRecord, ShardError, check_record, unpack_record
from rundata.shards import ShardWriter, read_shard

NN = 25


def good_record(**changes) -> GameRecord:
    """Black and White pass on 5x5: over, empty board, White wins by komi 0.5."""
    fields = dict(size=5, komi=0.5, moves=np.array([NN, NN], np.int16), full=np.zeros(2, np.uint8),
                  root_value=np.zeros(2, np.float32), policy_count=np.array([1, 1], np.uint16),
                  policy_moves=np.array([NN, NN], np.int16),
                  policy_visits=np.array([3.0, 5.0], np.float32), winner=-1, score=-0.5,
                  end="passes", ownership=np.zeros(NN, np.int8), versions=[0], id="a" * 32,
                  t_start=1.7e9, t_end=1.7e9 + 1)
    fields.update(changes)
    return GameRecord(**fields)


def decoded(record: GameRecord) -> dict:
    return msgpack.unpackb(record.to_msgpack(), raw=False)


def peak_bytes(fn):
    tracemalloc.start()
    try:
        fn()
    except ValueError:
        pass
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def nested_empty_arrays(total: int) -> bytes:
    """A record map {"id": ..., "aux": [[[], [], ... 4,096], ...]} holding `total` empty arrays:
    each is one byte on the wire (0x90) and about 56 bytes decoded."""
    rows = total // 4096
    row = b"\xdc" + (4096).to_bytes(2, "big") + b"\x90" * 4096          # array16 of empty arrays
    head = b"\x82" + msgpack.packb("id") + msgpack.packb("a" * 32) + msgpack.packb("aux")
    return head + b"\xdd" + rows.to_bytes(4, "big") + row * rows       # array32 of rows


def test_a_message_of_empty_arrays_is_refused_within_a_small_multiple_of_its_size():
    data = nested_empty_arrays(1 << 20)               # 1 MiB of empty arrays
    assert len(data) > 1 << 20
    with pytest.raises(ValueError, match="arrays and maps"):
        unpack_record(data)
    peak = peak_bytes(lambda: unpack_record(data))
    # Unbounded decoding of this message takes ~60x its size (about 60 MiB); bounded, a few
    # containers of at most 4,096 entries are built before the budget stops it.
    assert peak < 2 * len(data), f"peak {peak} bytes for a {len(data)}-byte message"


def test_plain_msgpack_of_the_same_message_would_amplify():
    """The independent expectation behind the bound above: without the budget this message
    decodes into tens of times its bytes."""
    data = nested_empty_arrays(1 << 18)
    peak = peak_bytes(lambda: msgpack.unpackb(data, raw=False, max_array_len=4096))
    assert peak > 20 * len(data)


def test_a_shard_of_nested_arrays_is_refused_with_bounded_memory(tmp_path):
    path = tmp_path / "x.shard"
    writer = ShardWriter(str(tmp_path), size=5, komi=0.5, prefix="t")
    writer.add(good_record())
    writer.close("t-0.shard")
    [written] = list(tmp_path.glob("*.shard"))
    read_shard(written)                                # the good shard reads
    raw = written.read_bytes()
    # Replace the game by a record carrying 1 MiB of empty arrays, then re-seal the shard.
    import hashlib

    from rundata import shards

    unpacker = msgpack.Unpacker(raw=False)
    unpacker.feed(raw[:-shards.TRAILER.size])
    header = next(unpacker)
    body = msgpack.packb(header, use_bin_type=True) + nested_empty_arrays(1 << 20)
    path.write_bytes(body + shards.TRAILER.pack(shards.TRAILER_MAGIC, 1, hashlib.sha256(body).digest()))
    with pytest.raises(ShardError, match="arrays and maps"):
        read_shard(path)
    peak = peak_bytes(lambda: read_shard(path))
    assert peak < 4 * path.stat().st_size, peak


@pytest.mark.parametrize("field, value, needle", [
    ("policy_visits", np.array([3.0, 3e38], np.float32), "visit counts"),
    ("policy_visits", np.array([3.0, MAX_VISITS * 2], np.float32), "visit counts"),
    ("score", 1e300, "score"),
    ("score", 3.5, "disagree"),                        # White won but the score says Black
    ("t_start", -5.0, "t_start"),
    ("t_end", 1e30, "t_end"),
])
def test_numeric_fields_out_of_their_meaning_are_refused(field, value, needle):
    record = decoded(good_record())
    record[field] = value.tobytes() if isinstance(value, np.ndarray) else value
    with pytest.raises(ShardError, match=needle):
        check_record(record, size=5, komi=0.5)


@pytest.mark.parametrize("surprise, needle", [
    (np.array([0.0, 0.0, 0.0], np.float32), "bytes"),          # one value a move
    (np.array([np.nan, 0.0], np.float32), "surprise"),
    (np.array([-0.5, 0.0], np.float32), "surprise"),
    (np.array([101.0, 0.0], np.float32), "surprise"),
    (np.array([0.0, 0.5], np.float32), "not full"),            # move 1 had no full search
])
def test_a_surprise_out_of_its_meaning_is_refused(surprise, needle):
    record = decoded(good_record(full=np.array([1, 0], np.uint8)))
    record["surprise"] = surprise.tobytes()
    with pytest.raises(ShardError, match=needle):
        check_record(record, size=5, komi=0.5)


@settings(max_examples=150, deadline=None)
@given(raw=st.binary(max_size=24), full=st.lists(st.integers(0, 1), min_size=2, max_size=2))
def test_fuzz_surprise_bytes_are_a_valid_array_or_one_refusal(raw, full):
    """Any bytes in the surprise field: a record whose surprise is finite, in 0..100, one value a
    move and 0 where the search was not full, or a ShardError naming the field."""
    record = decoded(good_record(full=np.array(full, np.uint8)))
    record["surprise"] = raw
    try:
        got = check_record(record, size=5, komi=0.5)
    except ShardError as err:
        assert "surprise" in str(err)
        return
    values = got.surprise
    assert values.shape == (2,) and np.all(np.isfinite(values))
    assert np.all((values >= 0) & (values <= 100)) and np.all(values[np.array(full) == 0] == 0)


def test_a_surprise_travels_and_its_absence_stays_none(tmp_path):
    kept = good_record(full=np.array([1, 0], np.uint8), surprise=np.array([0.75, 0.0], np.float32))
    back = check_record(decoded(kept), size=5, komi=0.5)
    np.testing.assert_array_equal(back.surprise, [0.75, 0.0])
    assert check_record(decoded(good_record()), size=5, komi=0.5).surprise is None
    writer = ShardWriter(tmp_path, prefix="s", size=5, komi=0.5)
    writer.add(kept)
    writer.add(good_record(id="b" * 32))
    path = writer.close("s-0.shard")
    first, second = read_shard(path).games
    np.testing.assert_array_equal(first.surprise, [0.75, 0.0])
    assert second.surprise is None


def test_unknown_fields_and_bad_resign_maps_are_refused():
    record = decoded(good_record())
    with pytest.raises(ShardError, match="unknown field"):
        check_record({**record, "aux": [[]] * 10}, size=5, komi=0.5)
    with pytest.raises(ShardError, match="resign"):
        check_record({**record, "resign": {"disabled": "yes"}}, size=5, komi=0.5)
    with pytest.raises(ShardError, match="resign"):
        check_record({**record, "resign": {"would_resign_move": 10**9}}, size=5, komi=0.5)
    assert check_record(record, size=5, komi=0.5).winner == -1


def test_a_played_game_may_not_claim_a_result_taken_as_written():
    """End 'recorded' keeps an SGF's written result; from a worker it would let a reversed
    winner through, so the recorder's check refuses it."""
    record = decoded(good_record(end="recorded", winner=1, score=0.0))
    assert check_record(record, size=5, komi=0.5).winner == 1          # an SGF import may
    with pytest.raises(ShardError, match="recorded"):
        check_record(record, size=5, komi=0.5, allow_recorded=False)


def test_a_resigned_game_keeps_a_score_of_the_other_sign():
    """A resignation decides the winner whatever the position's score (the board's score at
    resignation is stored as it was)."""
    record = decoded(good_record(end="resign", winner=1, score=-0.5))
    assert check_record(record, size=5, komi=0.5, check_rules=False).winner == 1
    with pytest.raises(ShardError, match="disagree"):
        check_record({**record, "end": "passes"}, size=5, komi=0.5, check_rules=False)
