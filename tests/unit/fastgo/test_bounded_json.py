"""fastgo.bounded_json, the one JSON reader: the nesting scan against json's own depth on any
value (hypothesis, bounded) and on hostile texts (brackets inside strings, escaped quotes,
unclosed strings, stray closers), the depth and size bounds at the limit and one past it, and
the regression corpus under tests/corpus/json/ (inputs that once raised RecursionError)."""
import json
import math
import pathlib
import sys

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fastgo import bounded_json
from fastgo.bounded_json import MAX_DEPTH, JSONRefused, loads, nesting_depth

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
CORPUS = pathlib.Path(__file__).resolve().parents[2] / "corpus" / "json"


def depth(value):
    """The nesting of a parsed value: 1 per array or object around the deepest leaf."""
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    return 0


def wrap(value, levels, in_object):
    for _ in range(levels):
        value = {"k": value} if in_object else [value]
    return value


TEXT = st.text(alphabet='ab"\\[]{}:,/\u00e9\n', max_size=8)
LEAVES = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT
SHALLOW = st.recursive(LEAVES, lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(TEXT, inner, max_size=3), max_leaves=12)
# values around the bound: a random value under a chain of up to 2 x MAX_DEPTH levels
VALUES = st.builds(wrap, SHALLOW, st.integers(0, 2 * MAX_DEPTH), st.booleans())


@FUZZ
@given(VALUES, st.booleans(), st.integers(1, 2 * MAX_DEPTH))
@example({"a": "[[[[", "b": ["]]]\\"]}, False, 1)
@example(["\"[{", {"\\": []}], True, 2)
@example(wrap(0, MAX_DEPTH, True), False, MAX_DEPTH)
@example(wrap(0, MAX_DEPTH + 1, False), False, MAX_DEPTH)
def test_the_scan_agrees_with_json_on_any_value(value, ascii_only, limit):
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert nesting_depth(text) == depth(value)
    if depth(value) <= limit:
        assert loads(text, max_depth=limit) == json.loads(text)
    else:
        with pytest.raises(JSONRefused, match=f"^nested deeper than {limit} arrays and objects$"):
            loads(text, max_depth=limit)


PIECES = st.sampled_from(['[', ']', '{', '}', '"', '\\', '\\"', '\\\\', ':', ',', '1', 'a',
                          ' ', '"k":', '\n', 'true', '\u00e9'])


@FUZZ
@given(st.lists(PIECES, max_size=40).map("".join))
@example('["\\\\"[')
@example('"\\"[[[[')
@example(']][[[')
def test_any_text_is_parsed_or_refused_in_one_line(text):
    """Whatever the text, loads returns json's value or raises JSONRefused with one line; when
    json parses it, the scan measured the value's depth exactly."""
    try:
        expected = json.loads(text)
    except ValueError:
        expected = JSONRefused
    if expected is not JSONRefused:
        assert nesting_depth(text) == depth(expected)
    try:
        assert loads(text) == expected
    except JSONRefused as err:
        assert expected is JSONRefused and "\n" not in str(err) and str(err)


def test_depth_at_the_limit_and_past_it():
    for levels in (1, MAX_DEPTH):
        for in_object in (False, True):
            text = json.dumps(wrap(1, levels, in_object))
            assert loads(text) == json.loads(text)
            with pytest.raises(JSONRefused, match=f"nested deeper than {MAX_DEPTH}"):
                loads(json.dumps(wrap(1, MAX_DEPTH + 1, in_object)))
    assert loads("[" * 3 + "]" * 3, max_depth=3) == [[[]]]
    with pytest.raises(JSONRefused):
        loads("[" * 4 + "]" * 4, max_depth=3)


def test_size_at_the_limit_and_past_it():
    text = json.dumps("x" * 98)                           # 100 characters
    assert loads(text, max_size=100) == "x" * 98
    assert loads(text.encode(), max_size=100) == "x" * 98
    with pytest.raises(JSONRefused, match="^101 characters, over the limit of 100$"):
        loads(json.dumps("x" * 99), max_size=100)
    with pytest.raises(JSONRefused, match="^101 bytes, over the limit of 100$"):
        loads(json.dumps("x" * 99).encode(), max_size=100)
    assert bounded_json.MAX_SIZE == 1 << 20


def test_json_errors_and_bytes_are_one_line_refusals():
    for bad, words in ((b'{"a": \xff}', "not UTF-8 (byte 6)"), ("[1,\n2,", "Expecting value"),
                       ("", "Expecting value"), ("NaN", None)):
        try:
            loads(bad, parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)))
        except JSONRefused as err:
            assert "\n" not in str(err) and (words is None or words in str(err))
        else:
            raise AssertionError(bad)


def test_integers_beyond_a_floats_range_read_as_infinities_as_exponents_do():
    """So that a field's check for a finite number refuses 10**400 (or 5,000 nines) as it
    refuses 1e400, and no reader's float() raises OverflowError."""
    largest = int(sys.float_info.max)             # 309 digits, the largest finite float
    text = f'[{10 ** 400}, -{10 ** 400}, {"9" * 5000}, {largest}, -{largest}, {largest + 1}, ' \
           f'-{largest + 1}, 1e400, {2 ** 53 + 1}, -0, 7]'
    got = loads(text)
    assert got[:3] == [math.inf, -math.inf, math.inf] and got[5:8] == [math.inf, -math.inf, math.inf]
    assert got[3:5] == [largest, -largest] and all(type(x) is int for x in got[3:5])
    assert got[8:] == [2 ** 53 + 1, 0, 7] and type(got[8]) is int
    assert loads("123", parse_int=str) == "123"          # a caller's own hook is kept


def test_a_hundred_thousand_levels_are_refused_without_recursion():
    for text in ("[" * 100_000, "[" * 100_000 + "]" * 100_000, '{"a":' * 100_000):
        with pytest.raises(JSONRefused, match="nested deeper than"):
            loads(text)


@pytest.mark.parametrize("path", sorted(CORPUS.iterdir()), ids=lambda p: p.name)
def test_json_corpus(path):
    """Each kept input: refused in one line or parsed to json's own value, never RecursionError;
    the scan never measures less than the depth json reaches."""
    data = path.read_bytes()
    try:
        value = loads(data)
    except JSONRefused as err:
        assert "\n" not in str(err)
    else:
        assert nesting_depth(data.decode()) == depth(value) <= MAX_DEPTH
        assert value == json.loads(data)


ANY_FLOATS = st.floats(allow_nan=True, allow_infinity=True)
WRITTEN = st.recursive(st.none() | st.booleans() | st.integers() | ANY_FLOATS | TEXT,
                       lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner)
                       | st.dictionaries(TEXT, inner, max_size=3), max_leaves=12)


def non_finite_to_none(value):
    """The expectation, written apart from bounded_json.finite: floats that are not equal to
    themselves or beyond the largest finite float become None."""
    if isinstance(value, float):
        return None if value != value or abs(value) > 1.7976931348623157e308 else value
    if isinstance(value, dict):
        return {k: non_finite_to_none(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [non_finite_to_none(v) for v in value]
    return value


@FUZZ
@given(WRITTEN)
@example({"loss": float("nan"), "elo": [float("inf"), -float("inf"), 3.5], "n": 10 ** 400})
def test_what_the_project_writes_is_finite_json_any_reader_parses(value):
    text = bounded_json.dumps(value, sort_keys=True)
    back = json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} written"))
    assert back == non_finite_to_none(value)


def test_dumps_overrides_a_callers_allow_nan():
    assert bounded_json.dumps({"a": float("nan")}, allow_nan=True) == '{"a": null}'
