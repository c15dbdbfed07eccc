"""Property tests of fastgo.board over random games: the incremental state (liberties, hash,
empty list) always equals a recomputation from the stones alone, and the Board API keeps its
invariants (copies independent, illegal moves harmless, games end within the cap)."""
import random

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastgo.board import BLACK, EMPTY, WHITE, Board, Random

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
sizes = st.sampled_from([2, 3, 4, 5, 6, 7, 9, 13, 19, 25])
seeds = st.integers(0, 2 ** 32 - 1)


def flood_liberties(stones):
    """Liberties of the group at each stone by flood fill, 0 on empty points (pure Python)."""
    n = len(stones)
    libs = [[0] * n for _ in range(n)]
    done = set()
    for r in range(n):
        for c in range(n):
            if stones[r][c] == EMPTY or (r, c) in done:
                continue
            color = stones[r][c]
            group, frontier, liberties = {(r, c)}, [(r, c)], set()
            while frontier:
                y, x = frontier.pop()
                for yy, xx in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)):
                    if 0 <= yy < n and 0 <= xx < n:
                        if stones[yy][xx] == EMPTY:
                            liberties.add((yy, xx))
                        elif stones[yy][xx] == color and (yy, xx) not in group:
                            group.add((yy, xx))
                            frontier.append((yy, xx))
            for y, x in group:
                libs[y][x] = len(liberties)
            done |= group
    return libs


def random_game(size, seed, max_moves=None, pass_rate=0.03):
    """A board after uniformly random legal moves (eye filling included, so groups die and ko
    happens); yields the board after every move."""
    rnd = random.Random(seed)
    board = Board(size, komi=7.5)
    limit = board.max_moves if max_moves is None else max_moves
    yield board
    while not board.is_over() and board.num_moves < limit:
        legal = np.flatnonzero(board.legal_moves()[:-1])
        if len(legal) == 0 or rnd.random() < pass_rate:
            move = board.pass_move
        else:
            move = int(rnd.choice(legal))
        board.play(move)
        yield board


def recomputed(board):
    """A fresh board with the same stones and side to move, built by setup()."""
    stones = board.stones().ravel()
    fresh = Board(board.size, board.komi)
    fresh.setup(black=np.flatnonzero(stones == BLACK).tolist(),
                white=np.flatnonzero(stones == WHITE).tolist())
    fresh.to_move = board.to_move
    return fresh


@SETTINGS
@given(size=sizes, seed=seeds)
def test_incremental_liberties_and_hash_equal_recomputation(size, seed):
    for board in random_game(size, seed, max_moves=3 * size * size):
        if board.num_moves % 3:
            continue
        stones = board.stones().tolist()
        assert board.liberties().tolist() == flood_liberties(stones)
        fresh = recomputed(board)
        assert fresh.hash == board.hash
        assert fresh.position_hash == board.position_hash
        assert fresh.liberties().tolist() == board.liberties().tolist()
        # the same empty points are playable (ko aside) on both
        if board.ko_move < 0:
            assert np.array_equal(fresh.legal_moves(), board.legal_moves())


@SETTINGS
@given(size=st.sampled_from([5, 7, 9]), seed=seeds, data=st.data())
def test_hash_independent_of_move_order(size, seed, data):
    # Non-adjacent moves never capture, so any interleaving gives the same position.
    points = [r * size + c for r in range(0, size, 2) for c in range(0, size, 2)]
    rnd = random.Random(seed)
    rnd.shuffle(points)
    k = data.draw(st.integers(1, len(points) // 2))
    black, white = points[:k], points[k:2 * k]
    orders = []
    for _ in range(2):
        b, w = black[:], white[:]
        rnd.shuffle(b)
        rnd.shuffle(w)
        board = Board(size)
        for mb, mw in zip(b, w):
            board.play(mb)
            board.play(mw)
        orders.append(board)
    assert orders[0].hash == orders[1].hash
    assert orders[0].hash == recomputed(orders[0]).hash
    assert orders[0].to_ascii() == orders[1].to_ascii()


@SETTINGS
@given(size=sizes, seed=seeds, steps=st.integers(0, 60))
def test_copy_is_independent(size, seed, steps):
    for board in random_game(size, seed, max_moves=steps):  # noqa: B007 (the last board is the one wanted)
        pass
    snapshot = (board.to_ascii(), board.hash, board.to_move, board.num_moves, board.ko_move)
    copy = board.copy()
    assert (copy.to_ascii(), copy.hash, copy.to_move, copy.num_moves, copy.ko_move) == snapshot
    copy.playout(Random(seed))
    assert (board.to_ascii(), board.hash, board.to_move, board.num_moves,
            board.ko_move) == snapshot
    assert copy.is_over()
    after_playout = (copy.to_ascii(), copy.hash, copy.num_moves)
    board.play(board.pass_move)
    assert (copy.to_ascii(), copy.hash, copy.num_moves) == after_playout


@SETTINGS
@given(size=sizes, seed=seeds, steps=st.integers(0, 80))
def test_illegal_moves_leave_board_unchanged(size, seed, steps):
    for board in random_game(size, seed, max_moves=steps):  # noqa: B007 (the last board is the one wanted)
        pass
    snapshot = (board.to_ascii(), board.hash, board.to_move, board.num_moves, board.ko_move,
                board.liberties().tolist(), board.captures)
    mask = board.legal_moves()
    illegal = [int(m) for m in np.flatnonzero(mask == 0)] + [-1, size * size + 1, 10 ** 6]
    for move in illegal:
        assert not board.is_legal(move)
        try:
            board.play(move)
        except ValueError as exc:
            assert exc.reason in ("off board", "occupied", "suicide", "ko")
        else:
            raise AssertionError(f"illegal move {move} was played")
    assert (board.to_ascii(), board.hash, board.to_move, board.num_moves, board.ko_move,
            board.liberties().tolist(), board.captures) == snapshot
    # and every move the mask allows is accepted
    for move in np.flatnonzero(mask):
        copy = board.copy()
        copy.play(int(move))


@SETTINGS
@given(size=sizes, seed=seeds)
def test_playouts_end_within_the_cap_and_respect_eyes(size, seed):
    board = Board(size)
    rng = Random(seed)
    while not board.is_over():
        move = board.random_move_fast(rng)
        if move != board.pass_move:
            assert board.is_legal(move)
            assert not board.is_eye(move, board.to_move)
        board.play(move)
    assert board.num_moves <= board.max_moves
    board = Board(size)
    moves = board.playout(Random(seed))
    assert board.is_over() and moves == board.num_moves <= 2 * size * size
    assert board.liberties().tolist() == flood_liberties(board.stones().tolist())


@SETTINGS
@given(size=sizes, seed=seeds)
def test_score_matches_python_tromp_taylor(size, seed):
    board = Board(size, komi=0.5)
    board.playout(Random(seed))
    stones = board.stones().tolist()
    area = {BLACK: 0, WHITE: 0}
    seen = set()
    for r in range(size):
        for c in range(size):
            if stones[r][c] != EMPTY:
                area[stones[r][c]] += 1
            elif (r, c) not in seen:
                region, frontier, reach = {(r, c)}, [(r, c)], set()
                while frontier:
                    y, x = frontier.pop()
                    for yy, xx in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)):
                        if 0 <= yy < size and 0 <= xx < size:
                            if stones[yy][xx] == EMPTY:
                                if (yy, xx) not in region:
                                    region.add((yy, xx))
                                    frontier.append((yy, xx))
                            else:
                                reach.add(stones[yy][xx])
                seen |= region
                if len(reach) == 1:
                    area[reach.pop()] += len(region)
    assert board.score() == area[BLACK] - area[WHITE] - 0.5


def test_nineteen_by_nineteen_long_game_recount():
    # One long full-board game with many captures, checked every 10 moves.
    for board in random_game(19, 2024, max_moves=700, pass_rate=0.0):
        if board.num_moves % 10 == 0:
            assert board.liberties().tolist() == flood_liberties(board.stones().tolist())
            assert recomputed(board).hash == board.hash
