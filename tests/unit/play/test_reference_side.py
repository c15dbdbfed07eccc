"""A reference player as a match side (play.specs.reference_side): its network loaded from the
index's file, checked against its digest, played at the index's visits whatever the caller's;
and `missing`, which says what keeps a player from this machine and the command that adds it."""
import pytest

from fastgo import reference_players as refs
from fastgo.player_spec import parse_spec
from play.match import play_match
from play.players import RandomPlayer
from play.specs import make_side, missing


@pytest.fixture
def folder(tmp_path, monkeypatch, reference_folder):
    path = reference_folder(tmp_path / "refs", [("low", 3), ("high", 6)])
    monkeypatch.setenv(refs.REFERENCES_ENV, str(path))
    return path


def test_a_reference_plays_at_its_own_visits(folder):
    side = make_side("ref:high", seed=3, backend="torch")
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
        make_side("ref:low")
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
        side = make_side(ref.spec, seed=5, backend="torch", move_seconds=0.01)
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
