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
