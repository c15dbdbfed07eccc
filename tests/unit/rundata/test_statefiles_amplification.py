"""Run-directory state files that are small on disk but costly to hold or to fit: a ratings
table whose players form one long chain (the fit's Hessian is n x n), rows whose metadata is a
bomb of small values, a tail read line by line, a byte order mark. An append to a FIFO or a
folder standing where the table belongs is tests/system/state/test_state_append_fifo.py."""
from __future__ import annotations

import json
import tracemalloc

from rundata.elo_fit import MAX_FIT_PLAYERS, fit_ratings
from rundata.ratings_table import TableError, read_table
from rundata.statefiles import MAX_COLUMNS, read_jsonl
from trainer.metrics import read_metrics


def row(a, b, **extra):
    return json.dumps({"a": a, "b": b, "wins_a": 1, "wins_b": 1, "draws": 0, **extra})


def test_a_chain_of_players_beyond_the_bound_is_refused_before_the_fit(tmp_path, refusal_peak):
    path = tmp_path / "ratings.jsonl"
    path.write_text("".join(row(f"p{i}", f"p{i + 1}") + "\n" for i in range(MAX_FIT_PLAYERS)))
    table = read_table(path)
    # refused before the fit: a fit's n x n Hessian of this chain would be gigabytes
    peak = refusal_peak(lambda: fit_ratings(table), TableError, f"{MAX_FIT_PLAYERS + 1} players")
    assert peak < 16 << 20, f"{peak} bytes to refuse a table of {path.stat().st_size} bytes"


def test_metadata_bombs_are_not_held_but_the_results_are(tmp_path):
    path = tmp_path / "ratings.jsonl"
    bomb = {"meta": [[] for _ in range(30_000)]}                  # 90 KB of text per line
    many = {f"k{i}": i for i in range(5_000)}
    path.write_text("\n".join([row("x", "y", **bomb), row("x", "y", **many),
                               row("x", "y", visits=8, sprt=[0.0, 200.0, True])]) + "\n")
    tracemalloc.start()
    try:
        table = read_table(path)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert [r["wins_a"] for r in table] == [1, 1, 1] and table.skipped == 0
    assert "meta" not in table[0] and "k1" not in table[1]
    assert table[2]["visits"] == 8 and table[2]["sprt"] == [0.0, 200.0, True]
    assert held < 512 << 10, f"{held} bytes held for three rows"


def test_a_byte_order_mark_does_not_cost_the_first_row(tmp_path):
    path = tmp_path / "ratings.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + row("x", "y").encode() + b"\n" + row("y", "z").encode())
    table = read_table(path)
    assert [(r["a"], r["b"]) for r in table] == [("x", "y"), ("y", "z")] and table.skipped == 0
    csv_path = tmp_path / "metrics.csv"
    csv_path.write_bytes(b"\xef\xbb\xbfstep,loss\r\n1,2\r\n")
    header, rows = read_metrics(csv_path)
    assert header == ["step", "loss"] and rows == [{"step": "1", "loss": "2"}]


def test_a_csv_header_of_too_many_columns_gives_no_rows(tmp_path):
    path = tmp_path / "metrics.csv"
    path.write_text(",".join(str(i) for i in range(MAX_COLUMNS + 1)) + "\n" + "1,2\n" * 100)
    header, rows = read_metrics(path)
    assert header == [] and list(rows) == [] and "columns" in rows.note


def test_rows_are_validated_as_they_are_read_not_after_reading_all_lines(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a": 1}\n' * 60_000)               # 540 KB of rows all refused
    tracemalloc.start()
    try:
        rows = read_jsonl(path, lambda value: None)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert list(rows) == [] and rows.skipped == 60_000
    assert peak < 4 << 20, f"peak {peak} bytes reading 540 KB of refused rows"
