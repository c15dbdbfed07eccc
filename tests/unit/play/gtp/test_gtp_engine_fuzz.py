"""Fuzzing the GTP engine (play.gtp.engine) with hypothesis, bounded (max_examples, no
per-example deadline), and replaying tests/corpus/gtp/: inputs that once crashed or hung it. Every
line gets a GTP answer ('=' or '?'); the engine keeps serving."""
import pathlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
CORPUS = pathlib.Path(__file__).resolve().parents[3] / "corpus"


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
    from play.gtp.engine import GtpEngine
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
