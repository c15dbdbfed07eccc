"""metrics.csv is the user's file: the trainer appends to it and never loses its bytes. A last
line without a line end (a row cut short, or garbage) is ended before the next row; new columns
are added by appending to each line, every earlier byte kept in place; a file that cannot be
widened so is left as it is. Each case says so in one log line."""
import csv
import io
import logging

import pytest

from trainer import metrics
from trainer.metrics import ALPHAZERO_FIELDS, append_metrics_row

GARBAGE = 'step,1,"an unclosed quote \x01 \u00e9 ;; and no line end'


@pytest.fixture(autouse=True)
def fresh_process(monkeypatch):
    monkeypatch.setattr(metrics, "_said", set())


def good_rows(header):
    return (",".join(header) + "\r\n" + ",".join("1" for _ in header) + "\r\n"
            + ",".join("2" for _ in header) + "\n")


def rows_of(data: bytes):
    return [row for row in csv.reader(io.StringIO(data.decode("utf-8"), newline=""))]


def test_garbage_without_a_line_end_is_kept_and_the_row_goes_on_its_own_line(tmp_path, caplog):
    path = tmp_path / "metrics.csv"
    path.write_bytes((good_rows(ALPHAZERO_FIELDS) + GARBAGE).encode())
    before = path.read_bytes()
    with caplog.at_level(logging.INFO, logger="fastgo.train"):
        for value in (3, 4):
            assert append_metrics_row(path, ALPHAZERO_FIELDS, {f: value for f in ALPHAZERO_FIELDS})
    after = path.read_bytes()
    assert after.startswith(before + b"\n")
    tail = after[len(before) + 1:].decode().splitlines()
    assert tail == [",".join(["3"] * len(ALPHAZERO_FIELDS)), ",".join(["4"] * len(ALPHAZERO_FIELDS))]
    assert len(caplog.records) == 1 and "no line end" in caplog.records[0].getMessage()


def test_new_columns_keep_every_earlier_byte_of_each_line(tmp_path, caplog):
    path = tmp_path / "metrics.csv"
    header = list(ALPHAZERO_FIELDS[:-2])
    path.write_bytes((good_rows(header) + "\n" + "4,5,6").encode())       # a row cut short
    before = path.read_bytes().split(b"\n")
    with caplog.at_level(logging.INFO, logger="fastgo.train"):
        assert append_metrics_row(path, ALPHAZERO_FIELDS, {f: 3 for f in ALPHAZERO_FIELDS})
    after = path.read_bytes().split(b"\n")
    for old, new in zip(before, after):
        assert new.startswith(old.rstrip(b"\r")), (old, new)
    rows = rows_of(path.read_bytes())
    assert rows[0] == list(ALPHAZERO_FIELDS)
    assert all(len(r) == len(ALPHAZERO_FIELDS) for r in rows if r)
    assert rows[-1] == ["3"] * len(ALPHAZERO_FIELDS) and rows[-2][:3] == ["4", "5", "6"]
    assert len(caplog.records) == 2        # the line end added, the columns added


def test_a_file_that_cannot_be_widened_is_left_as_it_is(tmp_path, caplog):
    path = tmp_path / "metrics.csv"
    header = list(ALPHAZERO_FIELDS[:-2])
    path.write_bytes((good_rows(header) + GARBAGE).encode())
    before = path.read_bytes()
    with caplog.at_level(logging.INFO, logger="fastgo.train"):
        for value in (3, 4):
            assert append_metrics_row(path, ALPHAZERO_FIELDS, {f: value for f in ALPHAZERO_FIELDS})
    after = path.read_bytes()
    assert after.startswith(before + b"\n")
    assert rows_of(after[len(before) + 1:]) == [["3"] * len(header), ["4"] * len(header)]
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2 and "not rewritten" in messages[1] and "line 4" in messages[1]
