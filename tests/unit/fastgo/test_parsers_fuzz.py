"""Fuzzing fastgo's parsers with hypothesis, bounded (max_examples and no per-example deadline),
plus the regression corpus: inputs that once crashed, hung or ballooned a process, kept under
tests/corpus/<parser>/ and replayed here. A parser may refuse its input only with its own error
type (SgfError, ConfigError, PoolError, ShardError), never another exception. The GTP engine's,
the wire's and the evaluator's files have theirs beside their packages (tests/unit/play,
tests/unit/wire, tests/unit/evaluation)."""
import json
import pathlib

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastgo import sgf
from rundata.config import ConfigError, load_config, loads_config

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
CORPUS = pathlib.Path(__file__).resolve().parents[2] / "corpus"


def corpus(kind):
    return sorted((CORPUS / kind).iterdir())


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
def test_sgf_corpus(path, allocation_peak):
    # bombs (a size of 5,000 digits, a rectangle over the whole board) cost what a small game
    # costs: bounded in memory, not in wall-clock time
    _, peak = allocation_peak(lambda: check_sgf(path.read_bytes()))
    assert peak < 8 << 20, f"{peak} bytes for {path.stat().st_size} bytes of SGF"


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


# -- the opponent pool file ---------------------------------------------------------------------

@FUZZ
@given(text=st.one_of(st.text(max_size=400), st.builds(
    lambda entries: '{"version": 1, "entries": %s}' % entries,
    st.lists(st.fixed_dictionaries({"name": st.text(max_size=8), "path": st.text(max_size=30),
                                    "step": st.integers(-3, 10), "weight": st.floats()}),
             max_size=4).map(lambda e: __import__("json").dumps(e)))))
def test_pool_reader_refuses_cleanly(tmp_path_factory, text):
    from rundata.pool import PoolError, read_pool

    path = tmp_path_factory.mktemp("pool") / "pool.json"
    path.write_text(text)
    try:
        entries = read_pool(str(path))
    except PoolError:
        return
    assert entries is None or all(e.weight >= 0 for e in entries)


# -- game records from a peer, run-directory state files -----------------------------------------

MSGPACK_VALUE = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**64 - 1), st.floats(),
              st.text(max_size=8), st.binary(max_size=16)),
    lambda inner: st.one_of(st.lists(inner, max_size=6),
                            st.dictionaries(st.text(max_size=6), inner, max_size=6)),
    max_leaves=40)


def _record_refused_cleanly(data):
    from rundata.records import ShardError, check_record, unpack_record

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
    from rundata.records import ShardError, check_record, unpack_record

    with pytest.raises((ShardError, ValueError)):
        check_record(unpack_record(path.read_bytes()), size=5, komi=0.5, allow_recorded=False)


def _state_readers(path):
    from rundata.ratings_table import read_table
    from rundata.statefiles import read_json
    from trainer.metrics import read_metrics

    return read_table(path), read_metrics(path), read_json(path)


@FUZZ
@given(data=st.one_of(st.binary(max_size=400), st.lists(
    st.one_of(MSGPACK_VALUE.map(lambda v: repr(v)), st.text(max_size=40)), max_size=6).map(
        lambda lines: "\n".join(lines).encode("utf-8", "surrogatepass"))))
def test_fuzz_state_files(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("state") / "state"
    path.write_bytes(data)
    table, (header, rows), status = _state_readers(path)
    assert all(isinstance(r["wins_a"], int) and r["wins_a"] >= 0 for r in table)
    assert path.read_bytes() == data                     # never rewritten


@pytest.mark.parametrize("path", corpus("state"), ids=lambda p: p.name)
def test_state_corpus(path):
    table, (header, rows), status = _state_readers(path)
    assert list(table) == []
    if path.suffix == ".csv":
        assert header == ["step", "loss"] and [r["step"] for r in rows] == ["2"]
