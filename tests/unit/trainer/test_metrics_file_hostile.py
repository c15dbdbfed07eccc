"""metrics.csv as something other than the trainer's file (trainer.metrics.append_metrics_row):
a FIFO, a folder, /dev/zero, a header that is not UTF-8 or has a field over the csv module's
limit. The row is not written, a warning says why, nothing blocks and the file is left as it
was; a file too large to rewrite for new columns keeps its header."""
from __future__ import annotations

import csv
import os
import threading

import pytest

from trainer import metrics
from trainer.metrics import ALPHAZERO_FIELDS, append_metrics_row

ROW = {f: 1 for f in ALPHAZERO_FIELDS}


def call_bounded(path, fields=ALPHAZERO_FIELDS):
    done, result = threading.Event(), []

    def run():
        result.append(append_metrics_row(path, fields, ROW))
        done.set()
    threading.Thread(target=run, daemon=True).start()
    assert done.wait(5), "append_metrics_row blocked"
    return result[0]


@pytest.mark.parametrize("kind", ["fifo", "folder", "/dev/zero"])
def test_not_a_regular_file_is_left_alone(tmp_path, kind, caplog):
    path = tmp_path / "metrics.csv"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:
        path.symlink_to("/dev/zero")
    assert call_bounded(path) is False
    assert "not a regular file" in caplog.text


@pytest.mark.parametrize("header", [b"step,\xff\xfe\n", b"step," + b"x" * 200_000 + b"\n"])
def test_an_unusable_header_is_left_alone(tmp_path, header, caplog):
    path = tmp_path / "metrics.csv"
    path.write_bytes(header + b"1,2\n")
    before = path.read_bytes()
    assert call_bounded(path) is False
    assert path.read_bytes() == before and "metrics row not written" in caplog.text


def test_a_file_too_large_to_rewrite_keeps_its_header(tmp_path, monkeypatch):
    path = tmp_path / "metrics.csv"
    path.write_text("step,loss\n" + "1,2\n" * 100)
    before = path.read_bytes()
    monkeypatch.setattr(metrics, "MAX_REWRITE_BYTES", 64)
    assert call_bounded(path) is True
    data = path.read_bytes()
    assert data.startswith(before)
    assert list(csv.reader(data.decode().splitlines()))[-1] == ["1", "1"]
