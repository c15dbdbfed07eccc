"""The player contract (play.players): every side is a Player (one game at a time) or a
MatchSide (many games at once), analysis is the AnalysingPlayer capability; the match and the GTP
engine refuse anything else, and no module probes a side with hasattr or sets attributes on a
player from outside."""
import re
from pathlib import Path

import pytest

from play.gtp.engine import GtpEngine
from play.gtp.side import GtpSide
from play.match import SearchSide, play_match
from play.players import AnalysingPlayer, MatchSide, Player, RandomPlayer, UctPlayer
from play.search_player import SearchPlayer
from play.specs import make_spec_side

ROOT = Path(__file__).resolve().parents[3]


def test_every_side_is_one_of_the_two_kinds():
    assert isinstance(RandomPlayer(seed=1), Player) and isinstance(UctPlayer(10, seed=1), Player)
    player = SearchPlayer("uniform", 8)
    assert isinstance(player, AnalysingPlayer) and isinstance(player, Player)
    assert isinstance(SearchSide("uniform", 8), MatchSide)
    assert isinstance(make_spec_side("gnugo:1"), GtpSide) and isinstance(make_spec_side("gnugo:1"), MatchSide)
    assert isinstance(make_spec_side("random"), Player) and isinstance(make_spec_side("mcts:5"), Player)
    for side in (RandomPlayer(), SearchSide("uniform", 8), make_spec_side("gnugo:1")):
        side.close()                                   # every side can be ended the same way
    assert not isinstance(RandomPlayer(), AnalysingPlayer)
    assert RandomPlayer().board_size is None and SearchPlayer("uniform", 8, board_size=9).board_size == 9


def test_anything_else_is_refused_by_the_match_and_the_engine():
    class Lookalike:                     # has the methods, not the contract
        name = "x"

        def genmove(self, game):
            return game.board.pass_move

    with pytest.raises(TypeError, match="MatchSide or Player"):
        play_match(Lookalike(), RandomPlayer(), 2, size=5)
    with pytest.raises(TypeError, match="plays a play.players.Player"):
        GtpEngine(Lookalike(), size=9)


def test_analysis_commands_only_for_an_analysing_player():
    assert "lz-analyze" in GtpEngine(SearchPlayer("uniform", 8), size=9).handlers
    assert "lz-analyze" not in GtpEngine(RandomPlayer(), size=9).handlers


def test_no_hasattr_probes_and_no_attributes_set_from_outside():
    files = [*(ROOT / "play").glob("*.py"), *(ROOT / "play" / "arena").glob("*.py"),
             ROOT / "fastgo_cli" / "arena_cmd.py", ROOT / "fastgo_cli" / "gtp_cmd.py",
             ROOT / "evaluation" / "evaluator.py", ROOT / "evaluation" / "opponents.py"]
    probes = re.compile(r"hasattr\((?:side|player|self\.player|a|b|s)\b|"
                        r"getattr\((?:side|player|self\.player|s), \"")
    outside = re.compile(r"^\s*(?:player|side)\.(?!name\b|visits\b)\w+ = ", re.M)
    found = [f"{p.relative_to(ROOT)}: {m.group(0).strip()}" for p in files
             for m in [*probes.finditer(p.read_text()), *outside.finditer(p.read_text())]
             if p.name not in ("players.py",)]
    assert found == []
