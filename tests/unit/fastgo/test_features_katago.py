"""The "katago" feature planes (fastgo.features, Wu 2019 Table 2) against a pure-Python replay of
the same moves: stones, liberties by flood fill, the simple-ko point, the last five moves."""
import pickle
import random

import numpy as np
import pytest

from fastgo import features, symmetry
from fastgo.board import BLACK, Board
from fastgo.replay import encode_samples
from fastgo.search_settings import SearchSettings

PLANES = 16


def random_moves(size, seed, count, pass_rate=0.05):
    """Legal moves of a random game (eye filling and passes included), chosen on the C board."""
    rnd = random.Random(seed)
    board = Board(size)
    moves = []
    while len(moves) < count and not board.is_over():
        legal = np.flatnonzero(board.legal_moves()[:-1])
        move = (board.pass_move if len(legal) == 0 or rnd.random() < pass_rate
                else int(rnd.choice(legal)))
        board.play(move)
        moves.append(move)
    return moves


# --- the reference: a few lines of Go in Python ---------------------------------------------------

def neighbours(point, n):
    r, c = divmod(point, n)
    return [(r + dr) * n + c + dc for dr, dc in ((-1, 0), (0, -1), (0, 1), (1, 0))
            if 0 <= r + dr < n and 0 <= c + dc < n]


def group_and_liberties(stones, point, n):
    """The stones connected to `point` and their distinct empty neighbours (flood fill)."""
    color, group, libs, stack = stones[point], {point}, set(), [point]
    while stack:
        for q in neighbours(stack.pop(), n):
            if stones[q] == 0:
                libs.add(q)
            elif stones[q] == color and q not in group:
                group.add(q)
                stack.append(q)
    return group, libs


def python_replay(moves, n):
    """(stones [N*N] 0/1/2, side to move, simple-ko point or None) after `moves` from the empty
    board: a stone captures the opponent groups it leaves without liberty; the ko point is the
    one captured stone when a single stone took exactly one stone and has one liberty."""
    stones, to_move, ko = [0] * (n * n), BLACK, None
    for move in moves:
        ko = None
        if move != n * n:
            stones[move] = to_move
            taken = []
            for q in neighbours(move, n):
                if stones[q] == 3 - to_move:
                    group, libs = group_and_liberties(stones, q, n)
                    if not libs:
                        taken.extend(group)
                        for s in group:
                            stones[s] = 0
            taken = sorted(set(taken))
            group, libs = group_and_liberties(stones, move, n)
            if len(taken) == 1 and len(group) == 1 and len(libs) == 1:
                ko = taken[0]
        to_move = 3 - to_move
    return stones, to_move, ko


def expected_planes(moves, n):
    """The 16 katago planes, computed from the move list alone."""
    stones, me, ko = python_replay(moves, n)
    out = np.zeros((PLANES, n * n), np.uint8)
    out[2] = 1
    for p, color in enumerate(stones):
        if color == 0:
            continue
        libs = len(group_and_liberties(stones, p, n)[1])
        own = color == me
        out[0 if own else 1, p] = 1
        out[(3 if own else 6) + min(libs, 3) - 1, p] = 1
    if ko is not None:
        out[9, ko] = 1
    for k, move in enumerate(reversed(moves[-5:])):
        if move != n * n:
            out[10 + k, move] = 1
    out[15] = 1 if me == BLACK else 0
    return out.reshape(PLANES, n, n)


# --- tests ------------------------------------------------------------------------------------------

def test_num_planes_and_name():
    assert features.num_planes("katago") == PLANES == features.num_planes(features.KATAGO)
    assert features.ENCODING_IDS["katago"] not in (features.ENCODING_IDS["alphazero"],
                                                   features.ENCODING_IDS["liberty"])
    from rundata.config import ENCODING_PLANES, ModelConfig
    assert ENCODING_PLANES["katago"] == PLANES == ModelConfig(encoding="katago").planes


def test_empty_board_and_first_moves():
    board = Board(5)
    planes = board.features("katago")
    assert planes.shape == (PLANES, 5, 5) and planes.dtype == np.uint8
    # empty board, Black to move: only the ones plane and the Black-to-move plane
    assert planes[2].sum() == 25 and planes[15].sum() == 25
    assert planes.sum() == 50
    for move in (12, 25, 6):              # black centre, white pass, black (1, 1)
        board.play(move)
    planes = board.features("katago").reshape(PLANES, 25)
    # White to move: the two black stones are the opponent's, each alone with 4 liberties
    assert planes[0].sum() == 0 and sorted(np.flatnonzero(planes[1])) == [6, 12]
    assert sorted(np.flatnonzero(planes[8])) == [6, 12] and planes[3:8].sum() == 0
    assert np.flatnonzero(planes[10]).tolist() == [6]      # 1 ply ago
    assert planes[11].sum() == 0                            # 2 plies ago: the pass
    assert np.flatnonzero(planes[12]).tolist() == [12]     # 3 plies ago
    assert planes[13:15].sum() == 0 and planes[15].sum() == 0
    assert board.recent_moves == (6, 25, 12, -1, -1)


def test_ko_plane_and_liberty_counts_on_a_ko():
    board = Board.from_ascii("""
        .XO..
        XO.O.
        .XO..
        .....
        .....
        """)
    board.play(5 * 1 + 2)                  # black (1, 2) captures the white stone at (1, 1)
    assert board.ko_move == 6              # ... which White may not retake at once
    planes = board.features("katago")
    assert planes[9].sum() == 1 and planes[9, 1, 1] == 1
    # own (White): (0, 2) 1 liberty, (1, 3) 3, (2, 2) 2; opponent (Black): (1, 2) 1 liberty
    assert planes[3, 0, 2] == planes[5, 1, 3] == planes[4, 2, 2] == planes[6, 1, 2] == 1
    assert np.array_equal(planes, expected_planes_from_board(board, [5 * 1 + 2]))
    board.play(board.pass_move)           # the ko is over after any move
    assert board.features("katago")[9].sum() == 0


def expected_planes_from_board(board, last_moves):
    """Planes of a set-up board (no replay) plus the given last moves (latest last)."""
    n = board.size
    stones = board.stones().ravel().tolist()
    me = board.to_move
    out = np.zeros((PLANES, n * n), np.uint8)
    out[2] = 1
    for p, color in enumerate(stones):
        if color:
            libs = len(group_and_liberties(stones, p, n)[1])
            own = color == me
            out[0 if own else 1, p] = 1
            out[(3 if own else 6) + min(libs, 3) - 1, p] = 1
    if board.ko_move >= 0:
        out[9, board.ko_move] = 1
    for k, move in enumerate(reversed(last_moves[-5:])):
        if move != n * n:
            out[10 + k, move] = 1
    out[15] = 1 if me == BLACK else 0
    return out.reshape(PLANES, n, n)


@pytest.mark.parametrize("size", [2, 3, 5, 7, 9])
def test_planes_match_python_replay_along_random_games(size):
    kos = 0
    for seed in range(12):
        moves = random_moves(size, seed, 4 * size * size, pass_rate=0.08)
        board = Board(size)
        plain = Board(size)
        plain.track_history = False          # the last moves do not depend on the history ring
        for i, move in enumerate(moves):
            board.play(move)
            plain.play(move)
            want = expected_planes(moves[:i + 1], size)
            got = board.features("katago")
            assert np.array_equal(got, want), (seed, i, [p for p in range(PLANES)
                                                         if not np.array_equal(got[p], want[p])])
            assert np.array_equal(plain.features("katago"), got)
            kos += int(want[9].any())
    if size >= 5:
        assert kos > 0                        # the ko plane was exercised


def test_copy_and_pickle_keep_the_last_moves():
    board = Board(9)
    for move in random_moves(9, 7, 23):
        board.play(move)
    planes = board.features("katago")
    assert np.array_equal(board.copy().features("katago"), planes)
    assert np.array_equal(pickle.loads(pickle.dumps(board)).features("katago"), planes)
    other = board.copy()
    other.play(other.pass_move)
    assert board.recent_moves != other.recent_moves
    assert other.recent_moves[1:] == board.recent_moves[:4]


def test_replay_encodes_the_same_planes_under_every_symmetry():
    size, komi = 7, 0.5
    games = [random_moves(size, seed, 60) for seed in (1, 2)]
    lengths = [len(g) for g in games]
    moves = np.concatenate([np.array(g, np.int16) for g in games])
    game_start = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    count = 2 * 8
    sample_game = np.repeat(np.array([0, 1], np.int32), 8)
    sample_move = np.array([17] * 8 + [lengths[1] - 1] * 8, np.int32)
    sample_sym = np.tile(np.arange(8, dtype=np.uint8), 2)
    total = int(game_start[-1])
    out_planes = np.zeros((count, PLANES, size, size), np.uint8)
    encode_samples(size, komi, "katago", moves, game_start, np.zeros(2, np.int8),
                   np.zeros((2, size * size), np.int8), np.zeros(total + 1, np.int64),
                   np.zeros(0, np.int16), np.zeros(0, np.float32), np.zeros(total, np.uint8),
                   sample_game, sample_move, sample_sym, out_planes,
                   np.zeros((count, size * size + 1), np.float32), np.zeros(count, np.float32),
                   np.zeros(count, np.float32), np.zeros((count, size * size), np.float32))
    for i in range(count):
        g, m = sample_game[i], sample_move[i]
        want = expected_planes(games[g][:m], size)
        assert np.array_equal(out_planes[i], symmetry.transform_planes(want, int(sample_sym[i]))), i


def test_the_search_encodes_its_leaves_with_katago_planes():
    from fastgo.mcts import BatchedSearch
    size = 7
    moves = random_moves(size, 11, 20)
    board = Board(size)
    for move in moves:
        board.play(move)
    seen = []

    def evaluator(planes):
        seen.append(planes.copy())
        count = planes.shape[0]
        return np.zeros((count, size * size + 1), np.float32), np.zeros(count, np.float32)

    search = BatchedSearch(games=1, size=size, seed=1,
                           settings=SearchSettings(encoding="katago", random_symmetry=False,
                                                   noise_weight=0.0))
    search.set_position(0, board)
    search.run(evaluator, 16)
    assert seen and seen[0].shape[1:] == (PLANES, size, size)
    assert np.array_equal(seen[0][0], expected_planes(moves, size))      # the root
    for batch in seen:                          # every leaf: a legal katago encoding
        assert (batch[:, 2] == 1).all()
        assert (batch[:, 15] == batch[:, 15, :1, :1]).all()
        assert (batch[:, 0] + batch[:, 1] == batch[:, 3:9].sum(1)).all()
        assert (batch[:, 10:15].reshape(len(batch), 5, -1).sum(2) <= 1).all()
