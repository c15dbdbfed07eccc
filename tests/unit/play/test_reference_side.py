"""A reference player as a match side (play.specs.reference_side): its network loaded from the
index's file, checked against its digest, played at the index's visits whatever the caller's;
and `missing`, which says what keeps a player from this machine and the command that adds it: for
a reference player, its file read from its folder only (a link out of it, a FIFO, a folder, a
missing, truncated or replaced file each answered in one line naming the file)."""
import hashlib
import json
import os
import shutil

import pytest

from fastgo import reference_players as refs
from fastgo.player_spec import parse_spec
from play.match import play_match
from play.players import RandomPlayer
from play.specs import check_reference, make_spec_side, missing


@pytest.fixture
def folder(tmp_path, monkeypatch, reference_folder):
    path = reference_folder(tmp_path / "refs", [("low", 3), ("high", 6)])
    monkeypatch.setenv(refs.REFERENCES_ENV, str(path))
    return path


def test_a_reference_plays_at_its_own_visits(folder):
    side = make_spec_side("ref:high", seed=3, backend="torch")
    try:
        assert (side.name, side.visits, side.board_size, side.fixed_visits) == (
            "ref:high", 6, 9, True)
        result = play_match(side, RandomPlayer(seed=1), 2, size=9)
        assert result.games == 2 and result.name_a == "ref:high"
        # every move of the reference searched its 6 root visits (a pass forced by a full
        # board is no search, so the mean is at most 6)
        _, visits = result.per_move("a")
        assert 5.0 <= visits <= 6.0
    finally:
        side.close()


def test_a_replaced_file_is_refused_before_it_plays(folder):
    (folder / "low.ckpt").write_bytes((folder / "high.ckpt").read_bytes())   # a valid network
    with pytest.raises(ValueError, match=r"ref:low: .*\(a damaged or replaced file\)"):
        make_spec_side("ref:low")
    (folder / "low.ckpt").unlink()
    gone = missing(parse_spec("ref:low"))
    assert gone.what == "reference player" and "low.ckpt" in gone.why and not gone.command


def test_missing_names_the_command_that_adds_each_engine(monkeypatch, tmp_path):
    from fastgo import player_spec

    monkeypatch.setattr(player_spec, "GNUGO_PROGRAM", "no-such-gnugo-program")
    monkeypatch.setenv("PATH", str(tmp_path))
    gone = missing(parse_spec("gnugo:5"))
    assert (gone.what, gone.command) == ("GNU Go", "apt-get install gnugo")
    monkeypatch.setenv("FASTGO_KATAGO_HOME", str(tmp_path / "no-katago"))
    monkeypatch.delenv("FASTGO_KATAGO", raising=False)
    gone = missing(parse_spec("katago:1,t=4"))
    assert (gone.what, gone.command) == ("KataGo", "fastgo katago fetch")
    assert missing(parse_spec("random")) is None and missing(parse_spec("mcts:10")) is None


def test_every_shipped_reference_plays_its_first_move_at_its_own_visits(monkeypatch):
    # the shipped index, not a test folder: each name loads (digest, checkpoint checks) and its
    # first move on the empty board is a search of the index's visits, so one file named at
    # several visits is several players
    from fastgo.game import Game

    monkeypatch.delenv(refs.REFERENCES_ENV, raising=False)
    index = refs.read_index()
    # one file at several visits: no two names share a file and visits
    assert len(index) >= 3 and len({(ref.path, ref.visits) for ref in index.values()}) == len(index)
    for ref in index.values():
        side = make_spec_side(ref.spec, seed=5, backend="torch", move_seconds=0.01)
        try:
            assert (side.name, side.visits, side.fixed_visits) == (ref.spec, ref.visits, True)
            side.prepare(1, ref.board_size, 7.5)
            game = Game(ref.board_size, 7.5)
            (move,) = side.moves([0], [game])
            assert game.is_legal(move)
            # the root's evaluation comes first; each of the index's visits then goes to a child
            assert int(side.search.root_visits(0).sum()) == ref.visits
        finally:
            side.close()


def set_entry(folder, name, **changes):
    """The index of `folder` with reference `name`'s entry changed."""
    index = json.loads((folder / refs.INDEX_NAME).read_text())
    for item in index["references"]:
        if item["name"] == name:
            item.update(changes)
    (folder / refs.INDEX_NAME).write_text(json.dumps(index))


def link_out(folder, tmp_path):
    outside = tmp_path / "outside.ckpt"        # the same bytes: only where it lies is wrong
    shutil.copy(folder / "low.ckpt", outside)
    (folder / "low.ckpt").unlink()
    os.symlink(outside, folder / "low.ckpt")


def truncate_indexed(folder, tmp_path):
    data = (folder / "low.ckpt").read_bytes()[:1000]
    (folder / "low.ckpt").write_bytes(data)     # and the index says so: no archive left
    set_entry(folder, "low", sha256=hashlib.sha256(data).hexdigest())


@pytest.mark.parametrize("damage, words", [
    (link_out, "low.ckpt: a symbolic link, not followed"),
    (lambda folder, _: (folder / "low.ckpt").unlink(), "low.ckpt: No such file or directory"),
    (lambda folder, _: ((folder / "low.ckpt").unlink(), os.mkfifo(folder / "low.ckpt")),
     "low.ckpt: not a regular file (a FIFO)"),
    (lambda folder, _: ((folder / "low.ckpt").unlink(), (folder / "low.ckpt").mkdir()),
     "low.ckpt: not a regular file (a directory)"),
    (lambda folder, _: (folder / "low.ckpt").write_bytes((folder / "low.ckpt").read_bytes()[:999]),
     "(a damaged or replaced file)"),
    (truncate_indexed, "low.ckpt: not a fastgo checkpoint (not a zip archive"),
    (lambda folder, _: set_entry(folder, "low", sha256="0" * 64),
     "the index says 0000000000000000... (a damaged or replaced file)"),
])
def test_a_file_that_cannot_play_is_missing_with_one_line_and_refused_by_make_spec_side(
        folder, tmp_path, damage, words):
    damage(folder, tmp_path)
    gone = missing(parse_spec("ref:low"))
    assert gone.what == "reference player" and not gone.command
    assert gone.why.startswith("reference player ref:low: ") and words in gone.why, gone.why
    assert "\n" not in gone.why and str(folder / "low.ckpt") in gone.why
    with pytest.raises(ValueError) as info:            # before any network is loaded
        make_spec_side("ref:low", backend="torch")
    assert str(info.value) == gone.why
    assert missing(parse_spec("ref:high")) is None     # the other player of the folder plays


def test_a_network_of_another_board_size_than_its_index_is_refused_where_it_is_loaded(
        folder, tmp_path, reference_folder):
    other = reference_folder(tmp_path / "thirteen", [("low", 3)], size=13)
    shutil.copy(other / "low.ckpt", folder / "low.ckpt")
    set_entry(folder, "low", sha256=hashlib.sha256((other / "low.ckpt").read_bytes()).hexdigest())
    spec = parse_spec("ref:low")
    assert missing(spec) is None                       # no network is loaded there (no torch)
    said = (f"reference player ref:low: {folder / 'low.ckpt'} holds a network of 13x13, the "
            "index says 9x9")
    with pytest.raises(ValueError) as info:
        make_spec_side(spec, backend="torch")
    assert str(info.value) == said
    with pytest.raises(ValueError) as info:            # what `fastgo compare` checks at its start
        check_reference(spec, 9)
    assert str(info.value) == said
    with pytest.raises(ValueError, match=r"^reference player ref:high plays 9x9 \(its index\), "
                                         r"not 13x13$"):
        check_reference(parse_spec("ref:high"), 13)
    assert check_reference(parse_spec("ref:high"), 9).name == "high"
