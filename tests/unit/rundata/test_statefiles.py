"""The run directory's state files as a careless user or an attacker leaves them
(rundata.statefiles and its readers: ratings.jsonl, evaluations.jsonl, metrics.csv, status files):
a FIFO, a directory or a device where a file belongs is not waited on; a huge file is read only
in its bounded tail; damaged rows are skipped and counted; the file is never rewritten."""
import json
import os
import threading

import pytest

from evaluation.evaluations import read_evaluations
from evaluation.plots import run_algorithm
from rundata import statefiles
from rundata.elo_fit import fit_ratings
from rundata.ratings_table import read_table
from rundata.statefiles import MAX_COUNT, read_json, read_lines
from trainer.metrics import read_metrics


def within(seconds, fn):
    """fn()'s result, or a failure if it has not returned within `seconds` (a hang)."""
    out = {}
    worker = threading.Thread(target=lambda: out.setdefault("value", fn()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"{fn} blocked"
    return out["value"]


def readers(path):
    return [lambda: read_table(path), lambda: read_evaluations(path), lambda: read_metrics(path),
            lambda: read_json(path)]


@pytest.mark.parametrize("kind", ["fifo", "directory", "device"])
def test_a_non_regular_file_is_refused_without_blocking(tmp_path, kind):
    path = tmp_path / "state"
    if kind == "fifo":
        os.mkfifo(path)                  # opening it for reading would block for good
    elif kind == "directory":
        path.mkdir()
    else:
        os.symlink("/dev/zero", path)    # endless bytes
    for read in readers(path):
        value = within(5, read)
        assert not value or value == ([], []), value
    lines, too_long, note = within(5, lambda: read_lines(path))
    assert lines == [] and too_long == [] and "not a regular file" in note


def test_a_huge_file_is_read_only_in_its_tail(tmp_path):
    path = tmp_path / "ratings.jsonl"
    row = json.dumps({"a": "x", "b": "random", "wins_a": 1, "wins_b": 0, "draws": 0}) + "\n"
    with open(path, "w") as handle:
        handle.write("garbage " * 200_000 + "\n")          # 1.6 MB before the rows
        handle.write(row * 1000)
    lines, too_long, note = read_lines(path, max_bytes=len(row) * 100)
    assert "read its last" in note
    assert 99 <= len(lines) <= 100 and too_long == []
    assert all(raw == row.rstrip("\n").encode() for _, raw in lines[1:])


def test_one_endless_line_is_skipped_and_the_rows_after_it_kept(tmp_path):
    path = tmp_path / "ratings.jsonl"
    row = {"a": "x", "b": "random", "wins_a": 3, "wins_b": 1, "draws": 0}
    path.write_text("7" * (statefiles.MAX_LINE_BYTES * 3) + "\n" + json.dumps(row) + "\n")
    table = read_table(path)
    assert [r["wins_a"] for r in table] == [3] and table.skipped_lines == [1]


def test_damaged_rows_are_skipped_counted_and_the_file_left_alone(tmp_path):
    path = tmp_path / "ratings.jsonl"
    good = {"a": "ckpt-1", "b": "random", "wins_a": 8, "wins_b": 2, "draws": 0}
    lines = [json.dumps(good),
             json.dumps({**good, "wins_a": 10 ** 400}),          # once an OverflowError
             json.dumps({**good, "wins_a": MAX_COUNT + 1}),
             json.dumps({**good, "wins_a": "8"}),                 # wrong type
             json.dumps({**good, "wins_a": True}),
             json.dumps({k: v for k, v in good.items() if k != "b"}),   # a field missing
             json.dumps([1, 2]), "[" * 100_000, '{"a": "trunc']
    data = ("\n".join(lines) + "\n").encode() + b"\xff\xfe not utf-8\n"
    path.write_bytes(data)
    table = read_table(path)
    assert [r["wins_a"] for r in table] == [8]
    assert table.skipped_lines == list(range(2, 11))
    ratings = fit_ratings(table, anchor="random")
    assert ratings["ckpt-1"][0] > 0
    assert path.read_bytes() == data


def test_evaluations_rows_are_range_checked(tmp_path):
    path = tmp_path / "evaluations.jsonl"
    good = {"player": "ckpt-5", "step": 5, "wall_s": 1.5, "games": 10}
    rows = [good, {**good, "step": -1}, {**good, "wall_s": float("inf")},
            {**good, "games": 10 ** 400}, {**good, "player": 7}, {**good, "step": None}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\nnot json\n")
    assert read_evaluations(path) == [good]


def test_metrics_csv_with_bad_bytes_and_long_rows(tmp_path):
    path = tmp_path / "metrics.csv"
    path.write_bytes(b"step,loss,pool,win_rate\n1,0.5,2,0.6\n\xff\xfe,\x00\n2,0.4,2,0.7,extra\n"
                     b"3,0.3\n")
    header, rows = read_metrics(path)
    assert header == ["step", "loss", "pool", "win_rate"]
    assert [r["step"] for r in rows] == ["1", "3"] and rows[1]["pool"] == ""
    assert rows.skipped_lines == [3, 4]
    assert run_algorithm(tmp_path) == "reinforce"


def test_nesting_at_the_bound_is_read_and_past_it_skipped(tmp_path):
    """64 levels of arrays and objects (fastgo.bounded_json.MAX_DEPTH) are a row; 65, and the
    990 that once raised RecursionError from deep in a caller's stack, are a skipped line."""
    def nested(levels):
        return '{"games": 1, "x": ' + "[" * (levels - 1) + "]" * (levels - 1) + "}"
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(nested(n) for n in (64, 65, 990)) + "\n")
    rows = statefiles.read_jsonl(path, lambda row: row["games"])
    assert list(rows) == [1] and rows.skipped_lines == [2, 3]
    status = tmp_path / "status.json"
    status.write_text(nested(64))
    assert read_json(status)["games"] == 1
    for levels in (65, 990):
        status.write_text(nested(levels))
        assert read_json(status) is None


def test_status_files_that_are_not_objects_read_as_none(tmp_path):
    path = tmp_path / "status.json"
    for content in (b"[1]", b"{", b"\xff", b"{}" * 10, b""):
        path.write_bytes(content)
        assert read_json(path) is None
    path.write_bytes(b'{"games": 3}')
    assert read_json(path) == {"games": 3}


# ratings.json read on resume: any JSON shape is a logged refusal of the part, never a crash
HUGE = "1" + "0" * 400                       # 10**400: valid JSON, beyond a float's range


def write_ratings(tmp_path, text):
    path = tmp_path / "ratings.json"
    path.write_text(text)
    return statefiles.read_ratings(path)


@pytest.mark.parametrize("latest", ['["ckpt-1"]', '{"player": ["ckpt-1"], "elo": 1}',
                                    '{"player": {"a": 1}}', '{"player": 7}', '{"player": ""}',
                                    '"ckpt-1"', '{"player": null}'])
def test_a_latest_player_that_is_not_a_name_refuses_the_latest_entry(tmp_path, latest, caplog):
    caplog.set_level("WARNING", logger="rundata.statefiles")
    got = write_ratings(tmp_path, '{"latest": %s, "ratings": {"random": [0, 0, 0]}}' % latest)
    assert got == {"latest": {}, "ratings": {"random": [0.0, 0.0, 0.0]}}
    assert any('"latest" refused' in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("field", ["elo", "elo_low", "elo_high"])
@pytest.mark.parametrize("value", [HUGE, "-" + HUGE, "1e400", "NaN", "-Infinity", '"12"', "true",
                                   "[1]", "null"])
def test_an_elo_that_is_not_a_number_in_range_reads_as_nan(tmp_path, field, value):
    got = write_ratings(tmp_path, '{"latest": {"player": "ckpt-5", "elo": 10, "elo_low": 5, '
                                  '"elo_high": 15, "%s": %s, "results": ["a 1-0", 3]}}'
                        % (field, value))
    latest = got["latest"]
    assert latest["player"] == "ckpt-5" and latest["results"] == ["a 1-0"]
    assert latest[field] != latest[field]                              # NaN
    assert [latest[k] for k in ("elo", "elo_low", "elo_high") if k != field] == \
        [v for k, v in (("elo", 10.0), ("elo_low", 5.0), ("elo_high", 15.0)) if k != field]


def test_ratings_entries_not_of_three_numbers_are_dropped_and_said_once(tmp_path, caplog):
    caplog.set_level("WARNING", logger="rundata.statefiles")
    text = ('{"latest": {"player": "ckpt-5", "elo": 10, "step": %s, "cpu_share": %s}, '
            '"ratings": {"random": [0, 0, 0], "a": [1, 2], "b": "x", "c": [%s, 0, 1], '
            '"d": [5, null, Infinity], "e": [true, 1, 2]}}' % (HUGE, HUGE, HUGE))
    for _ in range(3):
        got = write_ratings(tmp_path, text)
    assert "step" not in got["latest"] and "cpu_share" not in got["latest"]
    assert sorted(got["ratings"]) == ["c", "d", "random"]
    c, d = got["ratings"]["c"], got["ratings"]["d"]
    assert c[0] != c[0] and c[1:] == [0.0, 1.0] and d[0] == 5.0 and d[1] != d[1] and d[2] != d[2]
    said = [r.getMessage() for r in caplog.records if "entries refused" in r.getMessage()]
    assert len(said) == 1 and "3 entries" in said[0]


def test_a_state_number_refuses_numbers_beyond_a_float_by_range_not_overflow():
    from fastgo.coords import json_number

    with pytest.raises(ValueError, match="^cpu_share is outside 0..1$"):
        json_number(10 ** 400, what="cpu_share", low=0, high=1)
    with pytest.raises(ValueError, match="^x is beyond a float's range$"):
        json_number(-(10 ** 400), what="x")
    assert json_number(10 ** 300, what="x") == 1e300
