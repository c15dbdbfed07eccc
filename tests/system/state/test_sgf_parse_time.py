"""fastgo.sgf.parse_sgf in linear time on comment-heavy files, timed (the bounds themselves are
tests/unit/fastgo/test_sgf_read.py)."""
import time

from fastgo import sgf


def _parse_time(text):
    start = time.perf_counter()
    sgf.parse_sgf(text)
    return time.perf_counter() - start


def test_comment_nodes_parse_in_linear_time():
    # Many comment nodes on one position once took quadratic time (string concatenation).
    small = "(;" + ";C[comment]" * 10_000 + ")"
    large = "(;" + ";C[comment]" * 80_000 + ")"
    t_small = min(_parse_time(small) for _ in range(2))
    t_large = _parse_time(large)
    assert t_large < 8 * t_small * 3, (t_small, t_large)     # 8x input: linear, not 64x
    game = sgf.parse_sgf(large)
    assert game.comments[0].count("\n") == 80_000 - 1
