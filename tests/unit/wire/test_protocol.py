"""The wire protocol: round trips, and every malformed message becomes a ProtocolError."""
import msgpack
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wire import protocol
from wire.protocol import ProtocolError

LIMIT = 1024


def header(**fields):
    base = {"m": protocol.MAGIC, "v": protocol.VERSION, "k": "eval", "id": 7, "slot": "current",
            "n": 2, "size": 9, "planes": 17, "dtype": "uint8"}
    base.update(fields)
    return msgpack.packb({k: v for k, v in base.items() if v is not ...})


PAYLOAD = bytes(2 * 17 * 81)


def test_eval_round_trip():
    planes = (np.arange(3 * 17 * 81) % 2).astype(np.uint8).reshape(3, 17, 9, 9)
    frames = protocol.eval_request(11, planes, "best")
    request = protocol.parse_request([bytes(f) for f in frames], LIMIT)
    assert (request.kind, request.request_id, request.slot, request.count, request.board_size,
            request.planes) == ("eval", 11, "best", 3, 9, 17)
    np.testing.assert_array_equal(np.frombuffer(request.payload, np.uint8).reshape(planes.shape), planes)


def test_eval_request_sends_the_buffer_itself():
    planes = np.zeros((2, 17, 9, 9), np.uint8)
    frames = protocol.eval_request(1, planes, "current")
    planes[0, 0, 0, 0] = 1          # no copy was taken
    assert bytes(frames[1])[0] == 1
    with pytest.raises(ValueError):
        protocol.eval_request(1, planes.astype(np.float32), "current")


def test_result_round_trip():
    logits = np.arange(2 * 82, dtype=np.float32).reshape(2, 82)
    values = np.array([0.5, -0.25], np.float32)
    frames = protocol.result_reply(5, "current", 3, logits, values)
    reply = protocol.parse_reply([bytes(memoryview(f)) for f in frames])
    assert (reply.kind, reply.request_id, reply.header["version"]) == ("result", 5, 3)
    np.testing.assert_array_equal(reply.logits, logits)
    np.testing.assert_array_equal(reply.values, values)


def test_other_messages_round_trip():
    assert protocol.parse_request(protocol.stats_request(3), LIMIT).kind == "stats"
    request = protocol.parse_request(protocol.reload_request(4, "best", "/x.ckpt"), LIMIT)
    assert (request.kind, request.slot, request.path, request.data) == ("reload", "best", "/x.ckpt", None)
    request = protocol.parse_request(protocol.reload_request(4, "best", data=b"ckpt"), LIMIT)
    assert (request.path, bytes(request.data)) == ("", b"ckpt")
    with pytest.raises(ProtocolError, match="too_large"):
        protocol.parse_request(protocol.reload_request(4, "best", data=b"x" * 100), LIMIT, 99)
    with pytest.raises(ProtocolError, match="path or checkpoint bytes"):
        protocol.parse_request(protocol.reload_request(4, "best", ""), LIMIT)
    reply = protocol.parse_reply(protocol.error_reply(9, protocol.BAD_SIZE, "nope"))
    assert (reply.kind, reply.request_id, reply.header["code"]) == ("error", 9, "bad_size")
    reply = protocol.parse_reply(protocol.stats_reply(2, {"batches": 4, "errors": {"x": 1}}))
    assert reply.header["stats"]["errors"] == {"x": 1}
    assert protocol.parse_reply(protocol.reloaded_reply(1, "current", 12)).header["version"] == 12


@pytest.mark.parametrize("frames, code, request_id", [
    ([], protocol.BAD_FRAMES, -1),
    ([b"\xc1garbage"], protocol.BAD_HEADER, -1),
    ([msgpack.packb([1, 2, 3])], protocol.BAD_HEADER, -1),
    ([header(v=2), PAYLOAD], protocol.BAD_VERSION, 7),
    ([header(m="xyz"), PAYLOAD], protocol.BAD_VERSION, 7),
    ([header(id=...), PAYLOAD], protocol.BAD_HEADER, -1),
    ([header(id="7"), PAYLOAD], protocol.BAD_HEADER, -1),
    ([header(k="dance"), PAYLOAD], protocol.BAD_KIND, 7),
    ([header()], protocol.BAD_FRAMES, 7),
    ([header(), PAYLOAD, PAYLOAD], protocol.BAD_FRAMES, 7),
    ([header(n=0), PAYLOAD], protocol.BAD_HEADER, 7),
    ([header(n=-3), PAYLOAD], protocol.BAD_HEADER, 7),
    ([header(n=True), PAYLOAD], protocol.BAD_HEADER, 7),
    ([header(n=10 ** 12), PAYLOAD], protocol.TOO_LARGE, 7),
    ([header(n=2 ** 63), PAYLOAD], protocol.TOO_LARGE, 7),
    ([header(size=10 ** 6), PAYLOAD], protocol.BAD_SHAPE, 7),
    ([header(dtype="float32"), PAYLOAD], protocol.BAD_SHAPE, 7),
    ([header(slot=3), PAYLOAD], protocol.BAD_HEADER, 7),
    ([header(), PAYLOAD[:-1]], protocol.BAD_SIZE, 7),
    ([header(), PAYLOAD + b"x"], protocol.BAD_SIZE, 7),
    ([b"\x81" + msgpack.packb("m") + b"\xc7\x01\x05x"], protocol.BAD_HEADER, -1),   # ext type
    ([msgpack.packb({"m": "fgo", "v": 1, "k": "x", "id": 1, "pad": "a" * 5000})], protocol.BAD_HEADER, -1),
])
def test_malformed_requests(frames, code, request_id):
    with pytest.raises(ProtocolError) as info:
        protocol.parse_request(frames, LIMIT)
    assert info.value.code == code
    assert info.value.request_id == request_id


@settings(max_examples=150, deadline=None)
@given(st.lists(st.binary(max_size=300), max_size=4))
def test_random_bytes_only_raise_protocol_errors(frames):
    try:
        protocol.parse_request(frames, LIMIT)
    except ProtocolError:
        pass


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.sampled_from(["m", "v", "k", "id", "slot", "n", "size", "planes", "dtype", "x"]),
                       st.one_of(st.integers(-2 ** 63, 2 ** 64 - 1), st.text(max_size=10), st.none(),
                                 st.booleans(), st.floats(),
                                 st.lists(st.integers(-2 ** 63, 2 ** 63 - 1), max_size=3)),
                       max_size=10),
       st.binary(max_size=200))
def test_random_headers_only_raise_protocol_errors(fields, payload):
    try:
        protocol.parse_request([msgpack.packb(fields), payload], LIMIT)
    except ProtocolError:
        pass


def test_malformed_replies():
    with pytest.raises(ProtocolError):
        protocol.parse_reply([b"junk"])
    frames = protocol.result_reply(5, "current", 3, np.zeros((2, 82), np.float32), np.zeros(2, np.float32))
    with pytest.raises(ProtocolError, match="bad_size"):
        protocol.parse_reply([frames[0], b"\x00" * 8, bytes(8)])
    with pytest.raises(ProtocolError, match="bad_frames"):
        protocol.parse_reply(frames[:2])
