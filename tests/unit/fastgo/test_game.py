"""fastgo.game.Game: positional superko, resignation, undo, setup, results."""
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastgo.board import BLACK, WHITE, IllegalMoveError
from fastgo.game import RESIGN, Game

# 3x3, komi 0.5. After B1 W3 B5 W4 B0 W2 (White takes two), Black's 1 takes one stone back and
# recreates the position after W4: not a simple ko (two stones were taken), but a superko cycle.
#   after W4      after W2      B1 again
#   .X.           ..O           .X.
#   OOX           OOX           OOX
#   ...           ...           ...
SUPERKO_MOVES = [1, 3, 5, 4, 0, 2]
SUPERKO_REPEAT = 1


def test_superko_cycle_refused_with_reason_and_game_unchanged():
    game = Game(3, komi=0.5)
    for move in SUPERKO_MOVES:
        game.play(move)
    assert game.board.is_legal(SUPERKO_REPEAT)            # simple ko does not see it
    assert not game.is_legal(SUPERKO_REPEAT)
    assert game.legal_moves()[SUPERKO_REPEAT] == 0
    before = (game.board.to_ascii(), len(game.moves), list(game.hash_history))
    with pytest.raises(IllegalMoveError, match="superko") as info:
        game.play(SUPERKO_REPEAT)
    assert info.value.reason == "superko"
    assert (game.board.to_ascii(), len(game.moves), list(game.hash_history)) == before
    loose = Game(3, komi=0.5, superko=False)
    for move in SUPERKO_MOVES + [SUPERKO_REPEAT]:
        loose.play(move)
    assert loose.hash_history[-1] == loose.hash_history[4]


def test_simple_ko_and_other_reasons_propagate():
    game = Game(5)
    with pytest.raises(IllegalMoveError, match="off board"):
        game.play(26)
    game.play(12)
    with pytest.raises(IllegalMoveError, match="occupied"):
        game.play(12)
    assert game.moves == [(BLACK, 12)] and game.to_move == WHITE


def test_two_passes_end_the_game_with_a_score():
    game = Game(5, komi=0.5)
    game.setup(black=[2, 7, 12, 17, 22])
    game.play(game.pass_move)
    assert not game.is_over() and game.winner is None and game.result_string() == "Void"
    game.play(game.pass_move)
    assert game.is_over()
    assert game.score() == 25 - 0.5                    # a black wall owns the board
    assert game.winner == BLACK and game.result_string() == "B+24.5"
    assert not game.is_legal(0) and game.legal_moves().sum() == 0
    with pytest.raises(IllegalMoveError, match="game over"):
        game.play(0)


def test_results_white_win_and_draw():
    game = Game(2, komi=1.0)
    game.setup(white=[0])
    for _ in range(2):
        game.play(game.pass_move)
    assert game.result_string() == "W+5" and game.winner == WHITE
    game = Game(2, komi=0.0)
    game.play(game.pass_move)
    game.play(game.pass_move)
    assert game.result_string() == "0" and game.winner is None and game.is_over()


def test_resign_and_undo():
    game = Game(9)
    game.play(40)
    game.resign(WHITE)
    assert game.is_over() and game.winner == BLACK and game.result_string() == "B+R"
    assert game.undo() and not game.is_over()                # takes back the resignation
    game.play(RESIGN)                                        # White to move resigns
    assert game.result_string() == "B+R"
    game.undo()
    game.play(41)
    game.play(RESIGN)
    assert game.result_string() == "W+R"
    with pytest.raises(ValueError):
        game.resign(3)


def test_undo_restores_positions_and_superko_history():
    game = Game(3, komi=0.5)
    hashes = [game.board.hash]
    for move in SUPERKO_MOVES:
        game.play(move)
        hashes.append(game.board.hash)
    for expected in reversed(hashes[:-1]):
        assert game.undo()
        assert game.board.hash == expected
    assert not game.undo()
    assert game.moves == [] and len(game.hash_history) == 1
    for move in SUPERKO_MOVES[:4]:
        game.play(move)
    assert game.is_legal(SUPERKO_REPEAT) is False             # occupied now, not superko


def test_setup_only_before_moves_and_handicap_turn():
    game = Game(9)
    game.setup(black=[20, 24])
    game.to_move = WHITE
    assert game.to_move == WHITE and game.hash_history == [game.board.position_hash]
    game.play(40)
    with pytest.raises(ValueError):
        game.setup(black=[0])


def test_replay_honours_colours():
    game = Game.replay([(BLACK, 0), (BLACK, 2), (WHITE, 1)], size=3)
    assert game.board.to_ascii() == "XOX\n...\n..."
    assert game.moves == [(BLACK, 0), (BLACK, 2), (WHITE, 1)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(size=st.sampled_from([2, 3, 4, 5]), seed=st.integers(0, 2 ** 32 - 1))
def test_random_games_never_repeat_a_position_and_end(size, seed):
    rnd = random.Random(seed)
    game = Game(size, komi=0.5)
    while not game.is_over():
        mask = game.legal_moves()
        legal = np.flatnonzero(mask[:-1])
        assert all(game.is_legal(int(m)) for m in legal)
        move = game.pass_move if len(legal) == 0 or rnd.random() < 0.1 else int(rnd.choice(legal))
        before = set(game.hash_history)
        game.play(move)
        if move != game.pass_move:
            assert game.hash_history[-1] not in before
    assert len(game.moves) <= 2 * size * size
    assert game.result_string() in ("0",) or game.result_string()[:2] in ("B+", "W+")
    copy = game.copy()
    assert copy.undo() and len(game.moves) == len(copy.moves) + 1


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(size=st.sampled_from([2, 3, 4, 5, 9]), seed=st.integers(0, 2 ** 32 - 1))
def test_legal_moves_and_points_except_eyes_match_the_move_by_move_reference(size, seed):
    # The superko filter and the eye filter in one C pass each, against one Python call per
    # point (the way both were computed before) at every position of random games.
    rnd = random.Random(seed)
    game = Game(size, komi=0.5)
    checked = 0
    while not game.is_over() and checked < 60:
        board = game.board
        want = board.legal_moves()
        for m in np.flatnonzero(want[:-1]):
            if board.hash_after(int(m)) in set(game.hash_history):
                want[m] = 0
        mask = game.legal_moves()
        np.testing.assert_array_equal(mask, want)
        for color in (BLACK, WHITE):
            eyes_left = [int(m) for m in np.flatnonzero(mask[:-1]) if not board.is_eye(int(m), color)]
            assert board.points_except_eyes(mask, color).tolist() == eyes_left
        legal = np.flatnonzero(mask[:-1])
        game.play(game.pass_move if len(legal) == 0 or rnd.random() < 0.1 else int(rnd.choice(legal)))
        checked += 1


def test_board_filters_refuse_wrong_shapes_and_colors():
    game = Game(3, komi=0.5)
    with pytest.raises(ValueError, match="entries"):
        game.history.strike_repeats(game.board, np.ones(9, np.uint8))
    with pytest.raises(ValueError, match="entries"):
        game.board.points_except_eyes(np.ones(8, np.uint8), BLACK)
    with pytest.raises(ValueError, match="color"):
        game.board.points_except_eyes(np.ones(10, np.uint8), 7)


def test_pass_wins_only_after_a_pass_and_when_the_position_is_won():
    game = Game(3, komi=0.5)
    game.play(4)                             # Black centre: Black owns the whole 3x3 board
    assert not game.pass_wins()              # White to move; Black has not passed
    game.play(game.pass_move)                # White passes
    assert game.board.passes == 1 and game.to_move == BLACK
    assert game.score() == 8.5 and game.pass_wins()
    game.play(game.pass_move)                # over: nothing to win by passing
    assert game.is_over() and not game.pass_wins()
    lost = Game(3, komi=9.5)                 # the same board, but komi outweighs it
    lost.play(4)
    lost.play(lost.pass_move)
    assert lost.score() == -0.5 and not lost.pass_wins()
    lost.play(0)                             # Black plays on; White's own pass comes first
    assert lost.board.passes == 0 and not lost.pass_wins()
    assert Game(3, komi=0.5).unfilled_points().tolist() == list(range(9))
