"""The pure-Python yardstick of `fastgo bench board` plays by fastgo's rules: over random
playouts its stones, legality and eye test agree with fastgo.board.Board after every move, so
the benchmark compares the same work."""
import random

import numpy as np

from fastgo.board import BLACK, WHITE, Board
from fastgo_cli.bench.python_board import EMPTY, PythonBoard, playouts_per_second


def to_move_index(py, p):
    r, c = divmod(p, py.stride)
    return (r - 1) * py.size + (c - 1)


def stones(py):
    out = np.zeros((py.size, py.size), dtype=np.int64)
    for p in py.points:
        m = to_move_index(py, p)
        out[m // py.size, m % py.size] = py.cells[p]
    return out


def test_random_playouts_agree_with_fastgo_board():
    rng = random.Random(7)
    for size in (5, 9, 13):
        for _ in range(4 if size < 13 else 2):
            py, board = PythonBoard(size), Board(size)
            cap, moves = 2 * size * size, 0
            while py.passes < 2 and moves < cap:
                empties = [p for p in py.points if py.cells[p] == EMPTY]
                for p in empties:
                    m = to_move_index(py, p)
                    assert py.is_eye(p, py.to_move) == board.is_eye(m, board.to_move)
                rng.shuffle(empties)
                for p in empties:
                    if not py.is_eye(p, py.to_move) and py.try_play(p):
                        board.play(to_move_index(py, p))
                        break
                else:
                    py.play_pass()
                    board.play(board.pass_move)
                moves += 1
                assert np.array_equal(stones(py), board.stones())
                assert {BLACK: 1, WHITE: 2}[board.to_move] == py.to_move
                legal = board.legal_moves()
                for p in py.points:
                    if py.cells[p] != EMPTY:
                        continue
                    m = to_move_index(py, p)
                    snapshot = (list(py.cells), py.to_move, py.ko, py.passes)
                    ok = py.try_play(p)
                    py.cells, py.to_move, py.ko, py.passes = snapshot
                    assert ok == bool(legal[m]), (size, m)


def test_playouts_per_second_counts_whole_games():
    playouts, moves = playouts_per_second(9, 0.05, seed=3)
    assert playouts > 0 and 50 < moves / playouts <= 2 * 81
