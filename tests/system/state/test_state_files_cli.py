"""`fastgo ratings` and `fastgo curve` on hostile run-directory files, as subprocesses: where
--json points at a FIFO, a folder or the table itself, a table whose players form one long
chain, a run folder whose name is not UTF-8, an evaluations file of a million rows. Each ends
in bounded time with one line naming the problem (or a plot), no traceback, and the user's
table as it was."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from rundata.elo_fit import MAX_FIT_PLAYERS

ROW = {"a": "random", "b": "ckpt-1", "wins_a": 1, "wins_b": 3, "draws": 0}


def fastgo(*args, cwd, timeout=60):
    proc = subprocess.run([sys.executable, "-m", "fastgo_cli.main", *args], cwd=cwd,
                          capture_output=True, timeout=timeout)
    return proc.returncode, proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace")


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "ratings.jsonl"
    path.write_text(json.dumps(ROW) + "\n")
    return path


@pytest.mark.parametrize("kind", ["fifo", "folder", "the table", "device"])
def test_ratings_json_target_that_is_not_a_new_file_is_refused(tmp_path, table, kind):
    target = {"fifo": "out.json", "folder": "out.json", "the table": table.name,
              "device": "/dev/null"}[kind]
    if kind == "fifo":
        os.mkfifo(tmp_path / target)
    elif kind == "folder":
        (tmp_path / target).mkdir()
    before = table.read_bytes()
    code, out, err = fastgo("ratings", table.name, "--json", target, cwd=tmp_path)
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "--json" in err and table.read_bytes() == before


def test_ratings_json_is_written_beside_the_table(tmp_path, table):
    code, out, err = fastgo("ratings", table.name, "--json", "elo.json", cwd=tmp_path)
    assert code == 0, err
    assert set(json.loads((tmp_path / "elo.json").read_text())) == {"random", "ckpt-1"}


def test_ratings_of_a_chain_too_long_to_fit_is_one_line(tmp_path):
    path = tmp_path / "ratings.jsonl"
    path.write_text("".join(json.dumps({**ROW, "a": f"p{i}", "b": f"p{i + 1}"}) + "\n"
                            for i in range(MAX_FIT_PLAYERS + 5)))
    code, out, err = fastgo("ratings", path.name, cwd=tmp_path, timeout=30)
    assert code == 2 and "Traceback" not in err and f"over the {MAX_FIT_PLAYERS}" in err, err


def _run(directory, evaluations=1):
    directory.mkdir()
    (directory / "ratings.jsonl").write_text(json.dumps(ROW) + "\n")
    line = json.dumps({"player": "ckpt-1", "step": 1, "wall_s": 60.0, "games": 4}) + "\n"
    (directory / "evaluations.jsonl").write_text(line * evaluations)


def test_curve_of_a_run_folder_whose_name_is_not_utf8(tmp_path):
    name = os.fsdecode(b"run-\xff\nx")
    _run(tmp_path / name)
    code, out, err = fastgo("curve", name, "-o", "c.png", cwd=tmp_path)
    assert code == 0 and "Traceback" not in err, err
    assert (tmp_path / "c.png").stat().st_size > 0 and "run-" in out


def test_curve_of_a_million_evaluations_is_thinned(tmp_path):
    _run(tmp_path / "run", evaluations=600_000)            # 36 MB, 16 MB of it read
    code, out, err = fastgo("curve", "run", "-o", "c.png", cwd=tmp_path, timeout=30)
    assert code == 0 and "Traceback" not in err, err
    assert "1000 rated checkpoints" in out


def test_curve_labels_with_control_characters_are_refused(tmp_path):
    _run(tmp_path / "run")
    code, out, err = fastgo("curve", "run", "-o", "c.png", "--labels", "a\nb", cwd=tmp_path)
    assert code == 2 and "printable" in err and not (tmp_path / "c.png").exists()


@pytest.mark.parametrize("name", ["ratings.jsonl", "evaluations.jsonl"])
def test_evaluate_refuses_a_fifo_where_it_appends(tmp_path, name):
    run = tmp_path / "run"
    run.mkdir()
    os.mkfifo(run / name)
    code, out, err = fastgo("evaluate", "--config", "quickstart", "--run-dir", str(run), "--once",
                            "--quiet", cwd=tmp_path, timeout=30)
    assert code == 2 and "Traceback" not in err and f"{name}: not a regular file" in err, err


def test_evaluations_rows_keep_only_checked_fields(tmp_path):
    from evaluation.evaluations import read_evaluations

    path = tmp_path / "evaluations.jsonl"
    rows = [{"player": "ckpt-1", "step": 1, "wall_s": 1, "games": 2, "path": ["x"], "time": "t"},
            {"player": "ckpt-2", "step": 2, "wall_s": 2, "games": 2, "path": "c/2", "time": 5.0,
             "junk": [[]] * 1000}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    first, second = read_evaluations(path)
    assert "path" not in first and "time" not in first
    assert second == {"player": "ckpt-2", "step": 2, "wall_s": 2, "games": 2, "path": "c/2",
                      "time": 5.0}
