"""The pure-MCTS baseline (fastgo.uct, play.players): deterministic under a seed,
legal, tactically sane, and clearly stronger than the random player on 9x9."""
import numpy as np
import pytest

from fastgo.board import BLACK, WHITE, Board, Random
from fastgo.game import Game
from fastgo.uct import uct_search
from play.players import RandomPlayer, UctPlayer
from play.specs import make_player


def play_game(black, white, size=9, komi=7.5):
    game = Game(size, komi)
    while not game.is_over():
        player = black if game.to_move == BLACK else white
        game.play(player.genmove(game))
    return game


def test_same_seed_same_game():
    a = play_game(UctPlayer(60, seed=5), UctPlayer(60, seed=6), size=7)
    b = play_game(UctPlayer(60, seed=5), UctPlayer(60, seed=6), size=7)
    c = play_game(UctPlayer(60, seed=5), UctPlayer(60, seed=7), size=7)
    assert a.moves == b.moves
    assert a.moves != c.moves


def test_search_is_a_function_of_position_and_seed():
    board = Board.from_ascii("""
        .....
        .XO..
        .XO..
        .....
        .....""")
    runs = [uct_search(board, 300, Random(9)) for _ in range(2)]
    assert runs[0][0] == runs[1][0]
    assert np.array_equal(runs[0][1], runs[1][1])
    assert runs[0][1].sum() == 300


def test_visits_only_on_allowed_moves():
    board = Board.from_ascii("""
        .O...
        O.O..
        .O...
        .....
        .....""")
    mask = board.legal_moves()
    mask[20] = 0                          # as if forbidden by superko
    move, visits, wins = uct_search(board, 400, Random(1), root_mask=mask)
    assert visits[mask == 0].sum() == 0
    assert visits[25] == 0                # no pass while board moves remain
    assert (wins <= visits).all()
    only_pass = np.zeros(26, np.uint8)
    assert uct_search(board, 20, Random(1), root_mask=only_pass)[0] == 25


def test_captures_a_group_in_atari():
    board = Board.from_ascii("""
        .....
        .XX..
        .OOX.
        .XX..
        .....""", komi=0.5)
    assert uct_search(board, 1000, Random(2))[0] == 10


def test_beats_the_random_player_on_9x9():
    wins = 0
    for i in range(6):
        uct, rnd = UctPlayer(100, seed=i), RandomPlayer(seed=100 + i)
        uct_color = BLACK if i % 2 == 0 else WHITE
        game = play_game(*((uct, rnd) if uct_color == BLACK else (rnd, uct)))
        wins += game.winner == uct_color
    assert wins >= 5


def test_player_spec_and_bad_input():
    player = make_player("mcts:50", seed=1)
    assert isinstance(player, UctPlayer) and player.name == "mcts:50"
    with pytest.raises(ValueError):
        UctPlayer(0)
    game = Game(5)
    game.play(25)
    game.play(25)
    assert UctPlayer(10, seed=1).genmove(game) == 25     # game over: pass
