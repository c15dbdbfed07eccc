"""The ratings table (rundata.ratings_table): append-only JSON lines, refused appends that
write nothing, damaged lines skipped and counted, names that could forge output refused."""
import json

import pytest

from rundata.elo_fit import fit_ratings
from rundata.ratings_table import TableError, append_result, read_table


def test_append_creates_and_never_rewrites(tmp_path):
    path = tmp_path / "sub-table.jsonl"
    first = append_result(path, "random", "mcts:100", 1, 19, size=9, source="arena")
    assert first["games"] == 20 and first["size"] == 9 and isinstance(first["time"], float)
    before = path.read_bytes()
    for k in range(5):
        append_result(path, f"net{k}", "random", 10 + k, 10 - k, draws=1, visits=64)
    after = path.read_bytes()
    assert after.startswith(before)               # earlier lines are byte for byte unchanged
    rows = read_table(path)
    assert len(rows) == 6 and rows.skipped == 0
    assert rows[3] == {**rows[3], "a": "net2", "b": "random", "wins_a": 12, "wins_b": 8,
                       "draws": 1, "games": 21, "visits": 64}
    assert append_result(path, "a", "b", 0, 0, time=5.0)["time"] == 5.0
    for bad in ((path, "", "b", 1, 0), (path, "a", "b", -1, 0), (path, "a", "b", 1.5, 0),
                (path, "a", "b", True, 0)):
        with pytest.raises(TableError):
            append_result(*bad)
    with pytest.raises(TableError):
        append_result(path, "a", "b", 1, 0, games=3)
    with pytest.raises(TableError):
        append_result(path, "a", "b", 1, 0, blob=object())
    assert path.read_bytes().count(b"\n") == 7     # refused appends wrote nothing


def test_damaged_lines_skipped_and_counted(tmp_path):
    path = tmp_path / "ratings.jsonl"
    for k in range(4):
        append_result(path, "random", f"p{k}", 3, 7)
    data = path.read_bytes()
    path.write_bytes(data[:-15])                  # a torn last write: half a line, no newline
    table = read_table(path)
    assert len(table) == 3 and table.skipped == 1 and table.skipped_lines == [4]
    # the next append starts on a fresh line: only the torn line stays damaged
    append_result(path, "random", "p9", 2, 8)
    table = read_table(path)
    assert [row["b"] for row in table] == ["p0", "p1", "p2", "p9"]
    assert table.skipped_lines == [4]
    with open(path, "ab") as handle:
        handle.write(b"not json\n[1, 2]\n{\"a\": \"x\", \"b\": \"y\", \"wins_a\": -1, "
                     b"\"wins_b\": 0, \"draws\": 0}\n\xff\xfe\n\n")
    table = read_table(path)
    assert len(table) == 4 and table.skipped == 5
    assert fit_ratings(table)["p9"][0] > 0
    assert read_table(tmp_path / "missing.jsonl") == [] and read_table(tmp_path / "x").skipped == 0


@pytest.mark.parametrize("name", ["net\nforged 1 0", "\x1b[31mred\x1b[0m", "a\u202eb", "x" * 201,
                                  "   ", "tab\there"])
def test_names_that_could_forge_output_are_refused_written_and_skipped_read(tmp_path, name):
    path = tmp_path / "table.jsonl"
    with pytest.raises(TableError, match="printable"):
        append_result(path, name, "random", 1, 0)
    assert not path.exists()                       # nothing written
    good = {"a": "net", "b": "random", "wins_a": 3, "wins_b": 1, "draws": 0}
    path.write_text(json.dumps({**good, "a": name}) + "\n" + json.dumps(good) + "\n")
    rows = read_table(path)
    assert [row["a"] for row in rows] == ["net"] and rows.skipped == 1


def test_table_name_takes_any_text_and_keeps_long_ones_apart(tmp_path):
    from rundata.ratings_table import MAX_NAME, table_name

    long_a, long_b = "gtp:" + "x" * 300 + " a", "gtp:" + "x" * 300 + " b"
    names = [table_name(t) for t in ("gnugo:1", "line\nbreak", long_a, long_b, "\t")]
    assert names[0] == "gnugo:1" and names[1] == "line\\nbreak"
    assert names[2] != names[3] and all(len(n) <= MAX_NAME for n in names)
    path = tmp_path / "table.jsonl"
    for name in names:
        append_result(path, name, "random", 1, 0)        # every one is a name the table takes
    assert [row["a"] for row in read_table(path)] == names
