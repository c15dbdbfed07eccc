"""The ladder's calibration table as data (rundata.calibration_table): additions whole or not
at all, the shipped rows and a folder of one's own read together, and the table as hostile input
(links, FIFOs, folders, huge files, damaged lines): one line naming the file, never a traceback,
nothing read outside the folder."""
import json
import os
import random

import pytest

from fastgo.reference_players import REFERENCES_ENV
from rundata import calibration_table as ct
from rundata import ladder


def row(a="mcts:2", b="mcts:4", wins_a=1, wins_b=0, draws=0, **meta):
    return {"a": a, "b": b, "wins_a": wins_a, "wins_b": wins_b, "draws": draws, **meta}


def test_rows_are_added_whole_and_read_back(tmp_path):
    path = tmp_path / ct.CALIBRATION_NAME
    ct.add_rows(path, [row(), row(wins_a=0, wins_b=1, game=1)])
    ct.add_rows(path, [row(draws=1, wins_a=0)])
    table = ct.read_calibration(path)
    assert [(r["wins_a"], r["wins_b"], r["draws"]) for r in table] == [(1, 0, 0), (0, 1, 0),
                                                                       (0, 0, 1)]
    assert table[1]["game"] == 1 and not table.skipped
    assert sorted(os.listdir(tmp_path)) == [ct.CALIBRATION_NAME]     # no temporary file left


def test_a_bad_row_or_a_full_disk_changes_nothing(tmp_path, monkeypatch):
    path = tmp_path / ct.CALIBRATION_NAME
    ct.add_rows(path, [row()])
    before = path.read_bytes()
    with pytest.raises(ct.CalibrationError, match="games not added"):
        ct.add_rows(path, [row(), row(wins_a=-1)])                # the second row is refused
    assert path.read_bytes() == before

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(ct.os, "replace", full)
    with pytest.raises(ct.CalibrationError, match="the disk is full.*as it was"):
        ct.add_rows(path, [row()])
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == [ct.CALIBRATION_NAME]


def test_a_torn_last_line_stays_one_damaged_line(tmp_path):
    path = tmp_path / ct.CALIBRATION_NAME
    ct.add_rows(path, [row()])
    with open(path, "ab") as handle:
        handle.write(b'{"a": "mcts:2", "b"')                       # an older writer cut short
    ct.add_rows(path, [row(wins_a=0, wins_b=1)])
    table = ct.read_calibration(path)
    assert len(table) == 2 and table.skipped_lines == [2]


@pytest.mark.parametrize("make, what", [
    (lambda p: os.symlink("/etc/passwd", p), "symbolic link"),
    (lambda p: os.mkfifo(p), "not a regular file"),
    (lambda p: os.mkdir(p), "not a regular file"),
])
def test_a_table_that_is_no_file_of_its_folder_is_refused_by_name(tmp_path, make, what):
    path = tmp_path / ct.CALIBRATION_NAME
    make(path)
    with pytest.raises(ct.CalibrationError, match=f"{ct.CALIBRATION_NAME}: .*{what}"):
        ct.read_calibration(path)
    with pytest.raises(ct.CalibrationError, match=what):
        ct.add_rows(path, [row()])


def test_a_huge_table_is_refused_before_it_is_read(tmp_path, monkeypatch):
    path = tmp_path / ct.CALIBRATION_NAME
    ct.add_rows(path, [row()])
    monkeypatch.setattr(ct, "MAX_CALIBRATION_BYTES", 64)
    with pytest.raises(ct.CalibrationError, match="over the limit of 64"):
        ct.read_calibration(path)
    with pytest.raises(ct.CalibrationError, match="limit of 64"):
        ct.add_rows(path, [row()] * 3)


def test_a_folder_of_ones_own_adds_its_table_to_the_shipped_rows_without_their_refs(
        tmp_path, monkeypatch):
    shipped = ct.read_calibration(ct.calibration_path(ct.REFERENCES_DIR))
    assert any(r["a"].startswith("ref:") or r["b"].startswith("ref:") for r in shipped)
    ct.add_rows(tmp_path / ct.CALIBRATION_NAME, [row("ref:mine", "gnugo:10", 3, 5)])
    monkeypatch.setenv(REFERENCES_ENV, str(tmp_path))
    rows = ct.calibration_rows()
    assert rows[-1]["a"] == "ref:mine"
    # the shipped ref: rows name other networks there; the rest (mcts, gnugo, katago) stay
    theirs = [r for r in rows[:-1] if "ref:" in r["a"] + r["b"]]
    assert not theirs and len(rows) - 1 == sum(
        1 for r in shipped if "ref:" not in r["a"] + r["b"])


def test_an_unreadable_table_leaves_the_fits_without_calibration_with_one_warning(
        tmp_path, monkeypatch, caplog):
    os.symlink("/etc/hostname", tmp_path / ct.CALIBRATION_NAME)
    monkeypatch.setenv(REFERENCES_ENV, str(tmp_path))
    assert len(ladder.calibration()) == 0
    assert "calibration is not used" in caplog.text and "symbolic link" in caplog.text


# Bytes that once stood for trouble in a table, kept as the fuzz test's first cases.
KEPT = [b"", b"\n\n", b"{}", b"[1,2]", b'{"a":"x","b":"y","wins_a":1e400,"wins_b":0,"draws":0}',
        b'{"a":"x","b":"y","wins_a":-1,"wins_b":0,"draws":0}', b"\xff\xfe\x00", b"[" * 100_000,
        b'{"a":"\\u0000","b":"y","wins_a":1,"wins_b":0,"draws":0}', b'{"a":1,"b":2}']


def test_fuzz_any_bytes_are_rows_or_damaged_lines(tmp_path):
    rng = random.Random(85)
    good = json.dumps(row()).encode() + b"\n"
    cases = list(KEPT)
    for _ in range(300):
        data = bytearray(good * rng.randint(0, 4))
        for _ in range(rng.randint(0, 8)):
            if data and rng.random() < 0.5:
                data[rng.randrange(len(data))] = rng.randrange(256)
            else:
                data[rng.randint(0, len(data)):rng.randint(0, len(data))] = bytes(
                    rng.randrange(256) for _ in range(rng.randint(0, 40)))
        cases.append(bytes(data))
    path = tmp_path / ct.CALIBRATION_NAME
    for data in cases:
        path.write_bytes(data)
        table = ct.read_calibration(path)
        for r in table:
            assert isinstance(r["a"], str) and isinstance(r["wins_a"], int) and r["wins_a"] >= 0
        # and an addition keeps every readable row and adds its own
        ct.add_rows(path, [row()])
        again = ct.read_calibration(path)
        assert len(again) == len(table) + 1 and again[-1]["a"] == "mcts:2"
