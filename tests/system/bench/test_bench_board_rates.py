"""`fastgo bench board`'s rates against a rate timed here: the same order of magnitude (no unit
slip), the kernel faster than the pure-Python board. Its JSON's shape and the work it counts
are tests/unit/fastgo/test_board_rules.py."""
import json
import time

from fastgo.board import Board, Random
from fastgo_cli.main import main


def test_bench_board_rates_are_of_the_order_of_a_rate_timed_here(tmp_path):
    out = tmp_path / "board.json"
    assert main(["bench", "board", "--repeats", "1", "--seconds", "0.05", "--python-seconds", "0.05",
                 "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    for size in ("9", "19"):
        row = figures[size]
        rng, count = Random(7), 0
        start = time.perf_counter()
        while count < 20 or time.perf_counter() - start < 0.05:
            Board(int(size)).playout(rng)
            count += 1
        own_rate = count / (time.perf_counter() - start)
        assert own_rate / 20 < row["playouts_per_s"] < own_rate * 20   # same order: no unit slip
        assert 0 < row["python_playouts_per_s"] < row["playouts_per_s"]
