"""Fuzzing the parsers of the wire with hypothesis, bounded (max_examples, no per-example
deadline), plus the regression corpus tests/corpus/wire/: wire requests and replies
(ProtocolError), the recorder's game message, checkpoint bytes (CheckpointError) and CURVE key
files (CurveKeyError); a parser refuses its input only with its own error type.

Wire corpus files hold frames as 4-byte little-endian lengths, each followed by its bytes."""
import pathlib

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recorder import messages
from wire import protocol

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
CORPUS = pathlib.Path(__file__).resolve().parents[2] / "corpus"


def corpus(kind):
    return sorted((CORPUS / kind).iterdir())


# --- checkpoint bytes --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def checkpoint_bytes(tmp_path_factory):
    from network.checkpoint import save_checkpoint
    from network.model import build_model
    from rundata.config import ModelConfig

    path = tmp_path_factory.mktemp("fuzz") / "a.ckpt"
    save_checkpoint(path, build_model(ModelConfig(blocks=1, channels=4), seed=0), step=1)
    return path.read_bytes()


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_fuzz_checkpoint_bytes(checkpoint_bytes, data):
    from network.checkpoint import CheckpointError, load_checkpoint

    raw = bytearray(checkpoint_bytes)
    for _ in range(data.draw(st.integers(1, 8))):
        at = data.draw(st.integers(0, len(raw) - 1))
        raw[at] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(len(raw) // 2, len(raw)))
    try:
        load_checkpoint("fuzzed", data=bytes(raw[:cut]))
    except CheckpointError:
        pass


# --- wire messages -----------------------------------------------------------------------------

HEADER_VALUES = st.one_of(st.integers(-(1 << 63), (1 << 64) - 1), st.text(max_size=8),
                          st.binary(max_size=8), st.booleans(), st.none(), st.floats())
HEADER = st.dictionaries(st.sampled_from(["m", "v", "k", "id", "slot", "n", "size", "planes", "dtype",
                                          "path", "code", "msg", "moves", "version"]),
                         HEADER_VALUES, max_size=10)


def valid_base(header):
    return {"m": protocol.MAGIC, "v": protocol.VERSION, **header}


@FUZZ
@given(header=HEADER, kind=st.sampled_from(["eval", "stats", "reload", "result", "error", "x"]),
       extra=st.lists(st.binary(max_size=64), max_size=3), raw=st.binary(max_size=64))
def test_fuzz_wire_messages(header, kind, extra, raw):
    packed = msgpack.packb(valid_base({**header, "k": kind}), use_bin_type=True)
    for frames in ([packed, *extra], [raw, *extra]):
        try:
            protocol.parse_request(frames, 64, 1 << 20)
        except protocol.ProtocolError:
            pass
        try:
            protocol.parse_reply(frames)
        except protocol.ProtocolError:
            pass


def read_frames(path):
    data, frames = path.read_bytes(), []
    while data:
        size = int.from_bytes(data[:4], "little")
        frames.append(data[4:4 + size])
        data = data[4 + size:]
    return frames


@pytest.mark.parametrize("path", corpus("wire"), ids=lambda p: p.name)
def test_wire_corpus(path):
    frames = read_frames(path)
    with pytest.raises(protocol.ProtocolError) as info:
        protocol.parse_request(frames, 1024, 1 << 20)
    # The server's answer to it can be built and read back.
    error = info.value
    reply = protocol.parse_reply(protocol.error_reply(error.request_id, error.code, error.message))
    assert reply.kind == "error" and reply.header["code"] == error.code


# -- the recorder's game message, CURVE key files ------------------------------------------------

@FUZZ
@given(header=st.dictionaries(st.sampled_from(["v", "id", "k", "game", "worker", "n", "x"]),
                              st.one_of(st.integers(-2, 2**64 - 1), st.text(max_size=40),
                                        st.binary(max_size=40), st.none()), max_size=6),
       record=st.binary(max_size=256), extra=st.integers(0, 2))
def test_game_message_parser_refuses_cleanly(header, record, extra):
    frames = [msgpack.packb(header, use_bin_type=True), record] + [b"x"] * extra
    try:
        request_id, game_id, worker, body = messages.parse_game_message(frames, 1 << 10)
    except protocol.ProtocolError:
        return
    assert len(game_id) == 32 and len(bytes(body)) <= 1 << 10


@FUZZ
@given(data=st.binary(max_size=300))
def test_curve_key_readers_refuse_cleanly(tmp_path_factory, data):
    from wire.keys import CurveKeyError, read_public_key, read_secret_key

    path = tmp_path_factory.mktemp("keys") / "k.key_secret"
    path.write_bytes(data)
    path.chmod(0o600)
    for reader in (read_secret_key, read_public_key):
        try:
            reader(str(path))
        except CurveKeyError:
            pass
