"""Fuzzing every parser with hypothesis (bounded: max_examples and no per-example deadline, a
few seconds per parser), plus the regression corpus: inputs that once crashed, hung or
ballooned a process, kept under tests/corpus/<parser>/ and replayed here. A parser may refuse
its input only with its own error type (GtpError answers, SgfError, ConfigError,
CheckpointError, ProtocolError), never another exception.

Wire corpus files hold frames as 4-byte little-endian lengths, each followed by its bytes."""
import json
import pathlib
import time

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastgo import sgf
from fastgo.config import ConfigError, load_config, loads_config
from inference_server import protocol

CORPUS = pathlib.Path(__file__).resolve().parents[2] / "corpus"
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


def corpus(kind):
    return sorted((CORPUS / kind).iterdir())


# --- GTP ---------------------------------------------------------------------------------------

GTP_WORDS = st.sampled_from(["play", "genmove", "boardsize", "komi", "fixed_handicap", "undo",
                             "place_free_handicap", "set_free_handicap", "time_settings", "time_left",
                             "is_legal", "list_stones", "final_score", "showboard", "loadsgf",
                             "known_command", "clear_board", "lz-analyze", "b", "w", "pass", "D4",
                             "A1", "Z99", "resign", "interval"])
GTP_NUMBERS = st.one_of(st.integers(-10**30, 10**30).map(str), st.text("0123456789\u00b2\u0663_.e-+",
                                                                       max_size=12))
GTP_LINE = st.one_of(
    st.lists(st.one_of(GTP_WORDS, GTP_NUMBERS), min_size=1, max_size=6).map(" ".join),
    st.text(max_size=80),
    st.binary(max_size=80))


def fresh_engine():
    from play.gtp_engine import GtpEngine
    from play.specs import make_player

    return GtpEngine(make_player("random", seed=1), size=5)


def check_answer(engine, line):
    response = engine.handle_line(line)
    if response is not None:
        assert response[0] in "=?" and (response.endswith("\n\n") or engine.analysis_interval), response


@FUZZ
@given(lines=st.lists(GTP_LINE, min_size=1, max_size=8))
def test_fuzz_gtp_lines(lines):
    engine = fresh_engine()
    for line in lines:
        check_answer(engine, line)
    assert engine.handle_line("name") == "= fastgo\n\n"       # still serving


@pytest.mark.parametrize("path", corpus("gtp"), ids=lambda p: p.name)
def test_gtp_corpus(path):
    engine = fresh_engine()
    for line in path.read_bytes().decode("utf-8").split("\n"):
        check_answer(engine, line)
    assert engine.handle_line("name") == "= fastgo\n\n"


# --- SGF ---------------------------------------------------------------------------------------

SGF_PIECES = st.sampled_from(["(", ")", ";", "[", "]", "\\", ":", "B", "W", "AB", "AW", "AE", "SZ",
                              "KM", "HA", "PL", "C", "GM", "aa", "ss", "tt", "zz", "9", "19", "\u00b2",
                              "6.5", "nan", " ", "\n", "1_0", "9" * 50])
SGF_TEXT = st.one_of(st.lists(SGF_PIECES, max_size=60).map("".join), st.text(max_size=60))


def check_sgf(text):
    try:
        record = sgf.parse_sgf(text)
    except sgf.SgfError:
        return
    try:
        sgf.to_game(record)
    except sgf.SgfError:
        pass
    assert sgf.parse_sgf(sgf.write_sgf(record)).moves == record.moves


@FUZZ
@given(text=SGF_TEXT)
def test_fuzz_sgf(text):
    check_sgf(text)
    check_sgf("(;SZ[9]" + text + ")")


@pytest.mark.parametrize("path", corpus("sgf"), ids=lambda p: p.name)
def test_sgf_corpus(path):
    start = time.perf_counter()
    check_sgf(path.read_bytes())
    assert time.perf_counter() - start < 5


# --- TOML config -------------------------------------------------------------------------------

TOML_PIECES = st.sampled_from(["[server]\n", "[model]\n", "[", "]", "{", "}", "=", "\"", "'", "#",
                               "\n", " ", ",", "endpoint", "max_batch", "init_seed", "blocks",
                               "\"tcp://127.0.0.1:5\"", "1", "-1", "18446744073709551616", "1e999",
                               "nan", "true", "x.y", "checkpoints", "slots"])


@FUZZ
@given(text=st.one_of(st.lists(TOML_PIECES, max_size=40).map("".join), st.text(max_size=60)))
def test_fuzz_toml_config(text):
    try:
        loads_config(text)
    except ConfigError:
        pass


SCHEDULE_ENTRY = st.one_of(
    st.builds("{}:{}".format, st.integers(-5, 10 ** 13), st.integers(-5, 10 ** 7)),
    st.text(alphabet="0123456789:-x ", max_size=16))


@FUZZ
@given(entries=st.lists(SCHEDULE_ENTRY, max_size=6),
       search=st.sampled_from(["puct", "gumbel", "mcts", ""]))
def test_fuzz_search_settings(entries, search):
    # The visit schedule and the search name: a ConfigError or a config whose schedule gives
    # visits in 1..100000 at every step, nothing else.
    text = f"[selfplay]\nsearch = \"{search}\"\nvisits_schedule = {json.dumps(entries)}\n"
    try:
        config = loads_config(text)
    except ConfigError:
        return
    for step in (None, 0, 1, 10 ** 6, 10 ** 13):
        assert 1 <= config.selfplay.visits_at(step) <= 100_000


@pytest.mark.parametrize("path", corpus("toml"), ids=lambda p: p.name)
def test_toml_corpus(path):
    with pytest.raises(ConfigError, match=str(path)):
        load_config(path)


# --- checkpoint bytes --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def checkpoint_bytes(tmp_path_factory):
    from fastgo.config import ModelConfig
    from inference_server.checkpoint import save_checkpoint
    from inference_server.model import build_model

    path = tmp_path_factory.mktemp("fuzz") / "a.ckpt"
    save_checkpoint(path, build_model(ModelConfig(blocks=1, channels=4), seed=0), step=1)
    return path.read_bytes()


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_fuzz_checkpoint_bytes(checkpoint_bytes, data):
    from inference_server.checkpoint import CheckpointError, load_checkpoint

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


# -- the recorder's game message, the opponent pool file, CURVE key files ------------------------

@FUZZ
@given(header=st.dictionaries(st.sampled_from(["v", "id", "k", "game", "worker", "n", "x"]),
                              st.one_of(st.integers(-2, 2**64 - 1), st.text(max_size=40),
                                        st.binary(max_size=40), st.none()), max_size=6),
       record=st.binary(max_size=256), extra=st.integers(0, 2))
def test_game_message_parser_refuses_cleanly(header, record, extra):
    frames = [msgpack.packb(header, use_bin_type=True), record] + [b"x"] * extra
    try:
        request_id, game_id, worker, body = protocol.parse_game_message(frames, 1 << 10)
    except protocol.ProtocolError:
        return
    assert len(game_id) == 32 and len(bytes(body)) <= 1 << 10


@FUZZ
@given(text=st.one_of(st.text(max_size=400), st.builds(
    lambda entries: '{"version": 1, "entries": %s}' % entries,
    st.lists(st.fixed_dictionaries({"name": st.text(max_size=8), "path": st.text(max_size=30),
                                    "step": st.integers(-3, 10), "weight": st.floats()}),
             max_size=4).map(lambda e: __import__("json").dumps(e)))))
def test_pool_reader_refuses_cleanly(tmp_path_factory, text):
    from fastgo.pool import PoolError, read_pool

    path = tmp_path_factory.mktemp("pool") / "pool.json"
    path.write_text(text)
    try:
        entries = read_pool(str(path))
    except PoolError:
        return
    assert entries is None or all(e.weight >= 0 for e in entries)


@FUZZ
@given(data=st.binary(max_size=300))
def test_curve_key_readers_refuse_cleanly(tmp_path_factory, data):
    from inference_server.keys import CurveKeyError, read_public_key, read_secret_key

    path = tmp_path_factory.mktemp("keys") / "k.key_secret"
    path.write_bytes(data)
    path.chmod(0o600)
    for reader in (read_secret_key, read_public_key):
        try:
            reader(str(path))
        except CurveKeyError:
            pass


# -- game records from a peer, run-directory state files -----------------------------------------

MSGPACK_VALUE = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**64 - 1), st.floats(),
              st.text(max_size=8), st.binary(max_size=16)),
    lambda inner: st.one_of(st.lists(inner, max_size=6),
                            st.dictionaries(st.text(max_size=6), inner, max_size=6)),
    max_leaves=40)


def _record_refused_cleanly(data):
    from fastgo.records import ShardError, check_record, unpack_record

    try:
        check_record(unpack_record(data), size=5, komi=0.5, allow_recorded=False)
    except (ShardError, ValueError):
        pass


@FUZZ
@given(value=MSGPACK_VALUE, raw=st.binary(max_size=200))
def test_fuzz_game_records(value, raw):
    _record_refused_cleanly(msgpack.packb(value, use_bin_type=True))
    _record_refused_cleanly(raw)


@pytest.mark.parametrize("path", corpus("records"), ids=lambda p: p.name)
def test_records_corpus(path):
    from fastgo.records import ShardError, check_record, unpack_record

    with pytest.raises((ShardError, ValueError)):
        check_record(unpack_record(path.read_bytes()), size=5, komi=0.5, allow_recorded=False)


def _state_readers(path):
    from cluster.plots import read_evaluations
    from fastgo.ratings import read_table
    from fastgo.statefiles import read_csv, read_json

    return read_table(path), read_evaluations(path), read_csv(path), read_json(path)


@FUZZ
@given(data=st.one_of(st.binary(max_size=400), st.lists(
    st.one_of(MSGPACK_VALUE.map(lambda v: repr(v)), st.text(max_size=40)), max_size=6).map(
        lambda lines: "\n".join(lines).encode("utf-8", "surrogatepass"))))
def test_fuzz_state_files(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("state") / "state"
    path.write_bytes(data)
    table, evaluations, (header, rows), status = _state_readers(path)
    assert all(isinstance(r["wins_a"], int) and r["wins_a"] >= 0 for r in table)
    assert path.read_bytes() == data                     # never rewritten


@pytest.mark.parametrize("path", corpus("state"), ids=lambda p: p.name)
def test_state_corpus(path):
    table, evaluations, (header, rows), status = _state_readers(path)
    assert list(table) == [] and evaluations == []
    if path.suffix == ".csv":
        assert header == ["step", "loss"] and [r["step"] for r in rows] == ["2"]
