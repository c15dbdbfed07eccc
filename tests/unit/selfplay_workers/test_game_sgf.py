"""SGF export of game records: who played which color, and what each move's comment says."""
import numpy as np

from fastgo.sgf import parse_sgf
from rundata.shards import GameRecord
from selfplay_workers.game_sgf import game_sgf_text


def _record(players, full):
    moves = np.array([0, 1, 2, 3], dtype=np.int16)          # A9 B9 C9 D9 on 3x3 indices
    n = len(moves)
    return GameRecord(size=3, komi=0.5, moves=moves, full=np.array(full, dtype=np.uint8),
                      root_value=np.array([0.25, -0.5, 0.0, 1.0], dtype=np.float32),
                      policy_count=np.ones(n, dtype=np.uint16), policy_moves=moves.copy(),
                      policy_visits=np.array([40, 8, 40, 8], dtype=np.float32),
                      winner=1, score=2.5, end="move_cap", ownership=np.zeros(9, dtype=np.int8),
                      versions=[12, 3], players=players)


def test_learner_as_white_is_named_white_and_its_moves_are_marked():
    game = parse_sgf(game_sgf_text(_record({"learner": -1, "opponent": "ckpt-3"}, [0, 1, 0, 1])))
    assert game.white_player == "fastgo v12 (learner)"
    assert game.black_player == "ckpt-3 v3 (opponent)"
    assert game.comments[1].startswith("policy sample by the opponent")
    assert game.comments[2].startswith("policy sample by the learner")
    assert "-0.500" in game.comments[2]
    assert game.result == "B+2.5"


def test_learner_as_black():
    game = parse_sgf(game_sgf_text(_record({"learner": 1, "opponent": "initial"}, [1, 0, 1, 0])))
    assert game.black_player == "fastgo v12 (learner)"
    assert game.white_player == "initial v3 (opponent)"


def test_search_games_say_the_moves_share_of_the_target():
    game = parse_sgf(game_sgf_text(_record(None, [1, 0, 1, 0])))
    assert game.black_player == "fastgo v12" and game.white_player == "fastgo v3"
    assert game.comments[1] == ("full search, the move's share of the policy target 1.00, "
                                "root value +0.250 (side to move)")
    assert game.comments[2] == "cheap search (no policy target), root value -0.500 (side to move)"
    # Visit counts (PUCT) and probabilities (Gumbel) read the same: A9 played, 30 of 40.
    record = _record(None, [1, 0, 1, 0])
    for weights in ([30, 10, 40, 20, 20], [0.75, 0.25, 1.0, 0.5, 0.5]):
        record.policy_count = np.array([2, 1, 2, 0], dtype=np.uint16)
        record.policy_moves = np.array([0, 4, 1, 2, 7], dtype=np.int16)
        record.policy_visits = np.array(weights, dtype=np.float32)
        game = parse_sgf(game_sgf_text(record))
        assert game.comments[1].startswith("full search, the move's share of the policy target 0.75")
        assert "share of the policy target 0.50" in game.comments[3]


def test_the_last_move_says_how_the_game_ended():
    record = _record(None, [1, 0, 1, 0])
    game = parse_sgf(game_sgf_text(record))
    assert game.comments[4].endswith("the game stopped at the move cap: the board is counted as "
                                     "it stands, not a settled area (no score or ownership "
                                     "target), Black's margin +2.5")
    assert "move cap" not in game.comments[3]
    record.end = "passes"
    assert parse_sgf(game_sgf_text(record)).comments[4].endswith(
        "the game ended by two passes: its final board is its area (Tromp-Taylor count), "
        "Black's margin +2.5")
    record.end = "resign"
    last = parse_sgf(game_sgf_text(record)).comments[4]
    assert last.endswith("the game ended by resignation (no score or ownership target)")
