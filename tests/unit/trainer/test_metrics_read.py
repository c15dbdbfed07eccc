"""metrics.csv has one reader (trainer.metrics.read_metrics, one bound) and a row check at its
one writer: a file larger than the bound keeps its header and its newest rows, a row the
readers would misread is refused before it is written, and no other module reads the file."""
import ast
from pathlib import Path

import pytest

from trainer import metrics
from trainer.metrics import ALPHAZERO_FIELDS, append_metrics_row, metrics_row, read_metrics

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def fresh_process(monkeypatch):
    monkeypatch.setattr(metrics, "_said", set())


def test_rows_written_are_the_rows_read(tmp_path):
    path = tmp_path / "metrics.csv"
    for step in (1, 2):
        assert append_metrics_row(path, ALPHAZERO_FIELDS, {"step": step, "loss": "2.5",
                                                           "lr": 0.01, "phase": "ignored"})
    header, rows = read_metrics(path)
    assert header == list(ALPHAZERO_FIELDS) and rows.skipped == 0
    assert [(r["step"], r["loss"], r["lr"], r["window"]) for r in rows] == \
        [("1", "2.5", "0.01", ""), ("2", "2.5", "0.01", "")]
    assert read_metrics(tmp_path / "missing.csv") == ([], [])


def test_a_file_over_the_bound_keeps_its_header_and_its_newest_rows(tmp_path, monkeypatch):
    monkeypatch.setattr(metrics, "MAX_METRICS_BYTES", 100)
    path = tmp_path / "metrics.csv"
    path.write_text("step,loss\n" + "".join(f"{k},{k / 10:.1f}\n" for k in range(1, 101)))
    header, rows = read_metrics(path)
    # the last 100 bytes hold the ends of the 100th row back: a cut row dropped, the rest kept
    assert header == ["step", "loss"] and rows[-1] == {"step": "100", "loss": "10.0"}
    steps = [int(r["step"]) for r in rows]
    assert steps == list(range(steps[0], 101)) and steps[0] > 80 and "last 100" in rows.note


def test_a_chart_reads_evenly_spaced_rows_and_the_columns_it_wants(tmp_path):
    path = tmp_path / "metrics.csv"
    path.write_text("step,time,loss\n" + "".join(f"{k},{1000 + k},{k / 10:.1f}\n"
                                                  for k in range(1, 1001)))
    header, rows = read_metrics(path, max_rows=10)
    steps = [int(r["step"]) for r in rows]
    # 10 rows, the first and the last kept, spaced by 111 lines (999 // 9)
    assert header == ["step", "time", "loss"] and steps[0] == 1 and steps[-1] == 1000
    assert len(steps) == 10 and all(b - a in (110, 111) for a, b in zip(steps, steps[1:]))
    _, times = read_metrics(path, columns=("time",))
    assert len(times) == 1000 and times[0] == {"time": "1001"} and times[-1] == {"time": "2000"}
    _, few = read_metrics(path, max_rows=1)            # never fewer than the ends
    assert [r["step"] for r in few] == ["1", "1000"]
    _, all_rows = read_metrics(path, max_rows=5000)
    assert len(all_rows) == 1000


def test_lines_that_are_not_rows_of_the_header_are_skipped_and_counted(tmp_path):
    path = tmp_path / "metrics.csv"
    path.write_bytes(b"\xef\xbb\xbfstep,loss\n1,2.0\n1,2,3\n\xff\xfe,1\n3\n")
    header, rows = read_metrics(path)
    assert header == ["step", "loss"] and rows.skipped_lines == [3, 4]
    assert rows == [{"step": "1", "loss": "2.0"}, {"step": "3", "loss": ""}]


@pytest.mark.parametrize("cell", [True, [1], {"a": 1}, "two\nlines", "x" * 300, b"bytes"])
def test_a_row_the_readers_would_misread_is_refused_before_it_is_written(tmp_path, cell):
    path = tmp_path / "metrics.csv"
    with pytest.raises(ValueError, match="'loss'"):
        append_metrics_row(path, ALPHAZERO_FIELDS, {"step": 1, "loss": cell})
    assert not path.exists()
    assert metrics_row(("step", "loss"), {"step": 1, "loss": None, "other": [1]}) == \
        {"step": 1, "loss": ""}


def test_no_module_but_the_trainer_metrics_reads_metrics_csv(project_packages):
    # a CSV reader of the whole file would take the first line of a tail as the header
    found = []
    for package in project_packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.relative_to(ROOT).as_posix() == "trainer/metrics.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call) and getattr(node.func, "id",
                                                          getattr(node.func, "attr", "")) == "read_csv":
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []
