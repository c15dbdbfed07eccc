"""Directory trees a careless user or an attacker can hand to `fastgo train --sgf`
(trainer.sgf_import.find_sgf_files, import_sgf): 1,100 levels of folders, paths over the system's
limit, symlink loops and names that are not UTF-8 are walked without recursion, refused folders
are counted and named (escaped) in a warning, and the import goes on with the rest."""
from __future__ import annotations

import logging
import os
import shutil

import pytest

from trainer.sgf_import import MAX_DIR_DEPTH, SgfInputError, find_sgf_files, import_sgf

GAMES = os.path.join(os.path.dirname(__file__), "..", "..", "data", "sgf", "games")
DEEP_LEVELS = 1_100          # deeper than Python's default recursion limit (1,000)
LONG_NAME = "n" * 200        # 25 levels of these: a path of about 5,000 bytes, over PATH_MAX


def _game(name):
    with open(os.path.join(GAMES, name), "rb") as handle:
        return handle.read()


def _chain(top, name, levels, files):
    """Makes `levels` nested folders `name` under `top` through dir_fd (no path ever longer
    than one name), writing files[level] = bytes as `g.sgf` in the folder at that level."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for level in range(1, levels + 1):
            os.mkdir(name, dir_fd=fd)
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
            if level in files:
                out = os.open("g.sgf", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=fd)
                with os.fdopen(out, "wb") as handle:
                    handle.write(files[level])
    finally:
        os.close(fd)


def _remove(top):
    """Removes a tree of any depth: every folder is first renamed to a direct child of `top`
    (so no path is long and shutil.rmtree's recursion stays shallow)."""
    queue, made = [os.path.join(top, name) for name in os.listdir(top)], 0
    while queue:
        path = queue.pop()
        if os.path.islink(path) or not os.path.isdir(path):
            continue
        for child in os.listdir(path):
            inner = os.path.join(path, child)
            if os.path.isdir(inner) and not os.path.islink(inner):
                made += 1
                flat = os.path.join(top, f".flat-{made}")
                os.rename(inner, flat)
                queue.append(flat)
    shutil.rmtree(top)


@pytest.fixture(scope="module")
def hostile_tree(tmp_path_factory):
    """root/ a.sgf (a game), bad-\\udcff.sgf (a 19x19 game; the name is not UTF-8), self.sgf (a
    symlink to itself), loop -> . (a symlink loop), deep/ dd/ x 1,100 (a game at levels 3 and
    1,100), long/ (200-byte names x 25, a game at level 2). Built once: the tests only read it."""
    root = tmp_path_factory.mktemp("hostile") / "root"
    root.mkdir()
    (root / "a.sgf").write_bytes(_game("m00-g1.sgf"))
    with open(os.path.join(os.fsencode(root), b"bad-\xff.sgf"), "wb") as handle:
        handle.write(b"(;SZ[19]KM[7.5]RE[B+R];B[aa])")
    os.symlink("self.sgf", root / "self.sgf")
    os.symlink(".", root / "loop")
    (root / "deep").mkdir()
    _chain(str(root / "deep"), "dd", DEEP_LEVELS, {3: _game("m00-g0.sgf"),
                                                     DEEP_LEVELS: _game("m00-g2.sgf")})
    (root / "long").mkdir()
    _chain(str(root / "long"), LONG_NAME, 25, {2: _game("m00-g3.sgf")})
    try:
        yield str(root)
    finally:
        _remove(str(root))


def test_a_1100_level_tree_with_loops_is_walked_with_the_deep_parts_refused(hostile_tree, caplog):
    caplog.set_level(logging.WARNING, logger="fastgo.train")
    found = find_sgf_files([hostile_tree])
    # sorted pre-order: the top folder's files, then deep/ (level 3), then long/ (level 2)
    deep3 = os.path.join("deep", "dd", "dd", "dd", "g.sgf")
    long2 = os.path.join("long", LONG_NAME, LONG_NAME, "g.sgf")
    assert [shown for _, shown in found] == ["a.sgf", "bad-\\udcff.sgf", "self.sgf", deep3, long2]
    assert [path for path, _ in found][1] == os.path.join(hostile_tree, os.fsdecode(b"bad-\xff.sgf"))
    # levels 1..64 below root (deep/ and 63 dd/) are walked; level 65 is refused, once. long/ + k
    # names is over PATH_MAX for the first k with len(root) + 6 + 201 * k >= 4096: that folder is
    # refused, once.
    assert found.refused == {"folder too deep": 1, "folder not listed": 1}
    too_deep = os.path.join("deep", *["dd"] * MAX_DIR_DEPTH)
    assert found.first["folder too deep"] == (f"{too_deep}: more than {MAX_DIR_DEPTH} levels "
                                              f"below {hostile_tree}")
    assert found.first["folder not listed"].endswith(": File name too long")
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2
    assert any(too_deep in w for w in warnings)
    for message in warnings:
        message.encode("utf-8")                    # would raise on an unescaped name


def test_the_import_counts_refused_folders_and_escapes_names(hostile_tree, tmp_path):
    report, shards = import_sgf([hostile_tree], tmp_path / "out", size=9, default_komi=7.5)
    # tried: a.sgf, bad-\udcff.sgf, self.sgf, level-3 game, long level-2 game
    assert (report.read, report.used, len(shards)) == (5, 3, 1)
    assert report.skipped == {"folder too deep": 1, "folder not listed": 1,
                              "wrong board size": 1, "unreadable": 1}
    assert report.first["wrong board size"] == "bad-\\udcff.sgf: SZ[19], the model plays 9"
    assert report.first["unreadable"] == "self.sgf: Too many levels of symbolic links"
    summary = report.summary()
    summary.encode("utf-8")
    assert "1 folder too deep (first: deep" in summary


def test_the_walk_stops_after_its_entry_bound(hostile_tree):
    found = find_sgf_files([hostile_tree], max_entries=20)
    # root has 6 entries, deep/ 1, then each dd/ 1 (level 3 has 2): 20 entries end at level 12
    assert found.refused == {"walk stopped": 1}
    assert [shown for _, shown in found] == ["a.sgf", "bad-\\udcff.sgf", "self.sgf",
                                             os.path.join("deep", "dd", "dd", "dd", "g.sgf")]


def test_a_tree_whose_only_game_is_too_deep_says_so(tmp_path):
    top = tmp_path / "only"
    top.mkdir()
    try:
        _chain(str(top), "d", MAX_DIR_DEPTH + 1, {MAX_DIR_DEPTH + 1: _game("m00-g0.sgf")})
        with pytest.raises(SgfInputError, match=r"no \.sgf files under .*; 1 folder too deep"):
            find_sgf_files([top])
    finally:
        _remove(str(top))


def test_games_of_many_komis_keep_a_bounded_number_of_shards_open(tmp_path, monkeypatch):
    from rundata.shards import read_shard
    from trainer import sgf_import

    monkeypatch.setattr(sgf_import, "MAX_OPEN_SHARDS", 3)
    opened = []
    real = sgf_import.ShardWriter

    class Counting(real):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            opened.append(self)

    monkeypatch.setattr(sgf_import, "ShardWriter", Counting)
    top = tmp_path / "games"
    top.mkdir()
    for i in range(40):
        (top / f"g{i:02d}.sgf").write_text(f"(;GM[1]SZ[9]KM[{i / 4}]RE[B+R];B[ee];W[dd])")
    open_at_once = []
    real_add = Counting.add

    def add(self, record):
        open_at_once.append(sum(1 for w in opened if not w._file.closed))
        return real_add(self, record)

    monkeypatch.setattr(Counting, "add", add)
    report, written = import_sgf([str(top)], str(tmp_path / "out"), size=9, default_komi=7.5)
    assert report.used == 40 and len(written) == 40
    assert max(open_at_once) <= 3
    assert sorted(read_shard(p).header["komi"] for p in written) == [i / 4 for i in range(40)]
