"""GTP vertices and SGF points <-> move indices (row 0 at the top, pass = N * N)."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fastgo import coords


@pytest.mark.parametrize("text, size, move", [
    ("A1", 9, 72), ("a1", 9, 72), ("J9", 9, 8), ("j9", 9, 8), ("A9", 9, 0), ("H1", 9, 79),
    ("D4", 19, 15 * 19 + 3), ("Q16", 19, 3 * 19 + 15), ("T19", 19, 18), ("Z25", 25, 24),
    ("pass", 9, 81), ("PASS", 19, 361), ("Pass", 2, 4), (" d4 ", 9, 5 * 9 + 3),
])
def test_from_gtp(text, size, move):
    assert coords.from_gtp(text, size) == move


@pytest.mark.parametrize("text, size", [
    ("I5", 9), ("K1", 9), ("A10", 9), ("A0", 9), ("A", 9), ("", 9), ("5A", 9), ("D-4", 9),
    ("resign", 9), ("A1x", 9), ("T20", 19), ("Z26", 25), ("A١", 9), ("D 4", 9),
])
def test_from_gtp_rejects_with_the_text(text, size):
    with pytest.raises(ValueError) as info:
        coords.from_gtp(text, size)
    assert repr(text) in str(info.value)


def test_gtp_letters_skip_i():
    assert coords.to_gtp(7, 19) == "H19"
    assert coords.to_gtp(8, 19) == "J19"
    assert coords.to_gtp(81, 9) == "pass"


@pytest.mark.parametrize("text, size, move", [
    ("aa", 9, 0), ("ia", 9, 8), ("ai", 9, 72), ("dd", 19, 3 * 19 + 3), ("pd", 19, 3 * 19 + 15),
    ("", 9, 81), ("tt", 19, 361), ("tt", 9, 81), ("ss", 19, 360), ("yy", 25, 624),
    ("tt", 25, 19 * 25 + 19),
])
def test_from_sgf(text, size, move):
    assert coords.from_sgf(text, size) == move


@pytest.mark.parametrize("text, size", [
    ("a", 9), ("aaa", 9), ("jj", 9), ("a1", 9), ("??", 9), ("zz", 19), ("Aa", 19),
])
def test_from_sgf_rejects_with_the_text(text, size):
    with pytest.raises(ValueError) as info:
        coords.from_sgf(text, size)
    assert repr(text) in str(info.value)


@pytest.mark.parametrize("bad_size", [0, 26, -1, True, "9"])
def test_bad_sizes(bad_size):
    with pytest.raises(ValueError):
        coords.from_gtp("A1", bad_size)


@pytest.mark.parametrize("bad_move", [-1, 82, None, 1.5])
def test_bad_moves(bad_move):
    with pytest.raises(ValueError):
        coords.to_gtp(bad_move, 9)
    with pytest.raises(ValueError):
        coords.to_sgf(bad_move, 9)


@given(st.integers(2, 25).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n * n))))
def test_round_trips(size_move):
    size, move = size_move
    assert coords.from_gtp(coords.to_gtp(move, size), size) == move
    assert coords.from_gtp(coords.to_gtp(move, size).lower(), size) == move
    assert coords.from_sgf(coords.to_sgf(move, size), size) == move


def test_gtp_and_sgf_agree_on_orientation():
    # D4 on 19x19 is the lower-left star point: SGF "dp" (column d, row p from the top).
    assert coords.from_gtp("D4", 19) == coords.from_sgf("dp", 19)
    assert coords.to_sgf(coords.from_gtp("Q16", 19), 19) == "pd"


def test_one_board_size_check():
    from fastgo.constants import MAX_BOARD_SIZE, MIN_BOARD_SIZE
    from fastgo.coords import is_board_size

    assert is_board_size(MIN_BOARD_SIZE) and is_board_size(9) and is_board_size(MAX_BOARD_SIZE)
    for size in (MIN_BOARD_SIZE - 1, MAX_BOARD_SIZE + 1, 9.0, "9", True, None):
        assert not is_board_size(size)


# coords.json_number: the strict reader of numbers a JSON decoder gave
@pytest.mark.parametrize("value, low, high, integer, expected", [
    (7.5, -400, 400, False, 7.5), (7, -400, 400, False, 7.0), (-400, -400, 400, False, -400.0),
    (3, 1, 10, True, 3), (10 ** 300, None, None, False, 1e300), (10 ** 30, 1, None, True, 10 ** 30)])
def test_json_number_in_range(value, low, high, integer, expected):
    got = coords.json_number(value, low=low, high=high, integer=integer)
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize("value, low, high, integer, words", [
    (10 ** 400, -400, 400, False, "outside -400..400"), (-10 ** 400, 0, 1e20, False, "outside"),
    (10 ** 400, None, None, False, "beyond a float's range"),
    (-(10 ** 400), None, None, False, "beyond a float's range"),
    (float("nan"), None, None, False, "finite"), (float("inf"), 0, 5, False, "finite"),
    (True, 0, 5, False, "must be a number"), ("7.5", 0, 10, False, "must be a number"),
    (None, 0, 10, False, "must be a number"), ([1], 0, 10, False, "must be a number"),
    (2.5, 0, 10, True, "must be an integer"), (11, 0, 10, True, "outside 0..10"),
    (10 ** 400, 0, 10, True, "outside 0..10")])
def test_json_number_refuses_in_one_line_naming_the_field(value, low, high, integer, words):
    with pytest.raises(ValueError, match=words) as err:
        coords.json_number(value, low=low, high=high, integer=integer, what="komi")
    assert str(err.value).startswith("komi ") and "\n" not in str(err.value)


@given(st.one_of(st.integers(min_value=-(10 ** 500), max_value=10 ** 500),
                 st.floats(allow_nan=True, allow_infinity=True), st.booleans(), st.none(),
                 st.text(max_size=5)),
       st.one_of(st.none(), st.floats(-1e6, 0)), st.one_of(st.none(), st.floats(0, 1e6)),
       st.booleans())
def test_json_number_gives_a_bounded_value_or_a_value_error(value, low, high, integer):
    try:
        got = coords.json_number(value, low=low, high=high, integer=integer)
    except ValueError:
        return
    assert (low is None or got >= low) and (high is None or got <= high)
    assert not isinstance(value, bool) and got == value
