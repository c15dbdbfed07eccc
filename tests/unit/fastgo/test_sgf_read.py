"""SGF bombs just under and just over each bound of fastgo.sgf.parse_sgf: setup rectangles,
node count, nesting, size, numbers Python refuses to convert; a FIFO given to read_sgf_file.
That comment-heavy files parse in linear time is timed in tests/system/state/test_sgf_parse_time.py."""
import os
import threading
import tracemalloc

import pytest

from fastgo import sgf
from fastgo.sgf import SgfError


def test_setup_rectangles_are_bounded_before_expansion():
    full = "AB[aa:ss]"                                     # 361 points on 19x19
    fits = sgf.MAX_SETUP_POINTS // 361
    game = sgf.parse_sgf("(;SZ[19]" + "".join(";" + full for _ in range(fits)) + ")")
    assert len(game.setup_black) == 361
    with pytest.raises(SgfError, match="setup stones beyond the limit"):
        sgf.parse_sgf("(;SZ[19]" + "".join(";" + full for _ in range(fits + 1)) + ")")


def test_a_rectangle_bomb_does_not_balloon():
    text = "(;SZ[19]AB" + "[aa:ss]" * 20_000 + ")"          # 140 KB
    tracemalloc.start()
    try:
        with pytest.raises(SgfError, match="setup stones beyond the limit"):
            sgf.parse_sgf(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10 << 20, peak


def test_node_limit_just_under_and_over():
    assert sgf.parse_sgf("(" + ";" * 1000 + ")", max_nodes=1000).moves == []
    with pytest.raises(SgfError, match="more than 1000 nodes"):
        sgf.parse_sgf("(" + ";" * 1001 + ")", max_nodes=1000)


def test_depth_limit_just_under_and_over():
    def nested(depth):
        return "(;" * depth + ")" * depth
    sgf.parse_sgf(nested(50), max_depth=50)
    with pytest.raises(SgfError, match="nested deeper than 50"):
        sgf.parse_sgf(nested(51), max_depth=50)


def test_size_limit_just_under_and_over():
    text = "(;C[" + "x" * 994 + "])"                         # 1000 characters
    assert len(sgf.parse_sgf(text, max_chars=1000).comments[0]) == 994
    with pytest.raises(SgfError, match="too large"):
        sgf.parse_sgf(text + " ", max_chars=1000)


def test_off_main_line_nodes_are_checked_but_not_kept():
    text = "(;SZ[9];B[aa](;W[bb];B[cc])" + "(;W[cc]C[x])" * 5000 + ")"
    game = sgf.parse_sgf(text)
    assert [m for _, m in game.moves] == [0, 10, 20]
    with pytest.raises(SgfError, match="unclosed property value"):
        sgf.parse_sgf("(;SZ[9];B[aa](;W[bb])(;W[cc]C[x)")


def test_only_the_first_game_is_read():
    assert sgf.parse_sgf("(;SZ[9];B[aa])(;SZ[9];B[bb] garbage [").moves == [(1, 0)]


@pytest.mark.parametrize("prop", ["SZ", "HA", "KM"])
@pytest.mark.parametrize("value", ["9" * 5000, "\u00b2", "\u0663", "1_0", "nan", "inf", "1e999"])
def test_numbers_python_refuses_are_sgf_errors(prop, value):
    with pytest.raises(SgfError, match=prop):
        sgf.parse_sgf(f"(;{prop}[{value}])")


def test_valid_numbers_still_read():
    game = sgf.parse_sgf("(;SZ[ 13 ]KM[6.5]HA[2]AB[dd][jj])")
    assert (game.size, game.komi, game.handicap) == (13, 6.5, 2)
    with pytest.raises(SgfError, match="outside 0..81"):
        sgf.parse_sgf("(;SZ[9]HA[82])")


def test_read_sgf_file_refuses_a_fifo_without_blocking(tmp_path):
    fifo = tmp_path / "game.sgf"
    os.mkfifo(fifo)
    outcome = []

    def read():
        try:
            sgf.read_sgf_file(fifo)
        except OSError as err:
            outcome.append(err)
    worker = threading.Thread(target=read, daemon=True)
    worker.start()
    worker.join(5)
    assert not worker.is_alive() and outcome and "not a regular file" in str(outcome[0])
    with pytest.raises(OSError):
        sgf.read_sgf_file(tmp_path)
