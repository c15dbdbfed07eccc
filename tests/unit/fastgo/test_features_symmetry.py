"""Feature planes (fastgo.features) and board symmetries (fastgo.symmetry)."""
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastgo import features, symmetry
from fastgo.board import BLACK, WHITE, Board

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
sizes = st.sampled_from([2, 3, 5, 7, 9, 19])
syms = st.integers(0, 7)


def random_moves(size, seed, count):
    """Legal moves of a random game (eye filling and passes included)."""
    rnd = random.Random(seed)
    board = Board(size)
    moves = []
    while len(moves) < count and not board.is_over():
        legal = np.flatnonzero(board.legal_moves()[:-1])
        move = board.pass_move if len(legal) == 0 or rnd.random() < 0.05 else int(rnd.choice(legal))
        board.play(move)
        moves.append(move)
    return moves


# --- features ------------------------------------------------------------------------------------

def test_num_planes():
    assert features.num_planes("alphazero") == 17 == features.num_planes(features.ALPHAZERO)
    assert features.num_planes("liberty") == 11 == features.num_planes(features.LIBERTY)
    with pytest.raises(ValueError):
        features.num_planes("nope")


def test_alphazero_planes_with_history():
    board = Board(5)
    for move in (0, 1, 2):
        board.play(move)
    planes = features.encode(board, "alphazero")
    assert planes.shape == (17, 5, 5) and planes.dtype == np.uint8
    flat = planes.reshape(17, 25)
    on = [sorted(np.flatnonzero(flat[p]).tolist()) for p in range(16)]
    # White to move: own = white, opponent = black, at t, t-1, t-2, t-3 (empty board)
    assert on[:8] == [[1], [0, 2], [1], [0], [], [0], [], []]
    assert on[8:] == [[]] * 8
    assert flat[16].sum() == 0
    board.play(board.pass_move)
    assert board.features()[16].sum() == 25                  # Black to move: all ones


def test_alphazero_history_ring_wraps():
    board = Board(7)
    positions = [board.stones().copy()]
    for move in random_moves(7, 3, 30):
        board.play(move)
        positions.append(board.stones().copy())
    planes = board.features("alphazero")
    me, opp = board.to_move, 3 - board.to_move
    for k in range(8):
        past = positions[-1 - k]
        assert np.array_equal(planes[2 * k], (past == me).astype(np.uint8)), k
        assert np.array_equal(planes[2 * k + 1], (past == opp).astype(np.uint8)), k


def test_history_off_gives_zero_history_planes():
    board = Board(5)
    board.track_history = False
    for move in (6, 7, 8, 12):
        board.play(move)
    planes = board.features()
    assert planes[2:16].sum() == 0 and planes[:2].sum() == 4


def test_liberty_planes():
    board = Board.from_ascii("""
        XO...
        X....
        ..OO.
        .....
        ...X.
        """, to_move=WHITE)
    planes = board.features("liberty")
    assert planes.shape == (11, 5, 5)
    # own = white: (0,1) has 2 libs, the pair at row 2 has 6 -> 4+
    assert planes[1, 0, 1] == 1 and planes[3, 2, 2] == planes[3, 2, 3] == 1
    # opponent = black: the corner pair has 2 libs, (2,0) and (1,1); (4,3) on the edge has 3
    assert planes[5, 0, 0] == planes[5, 1, 0] == 1 and planes[6, 4, 3] == 1
    assert planes[:8].sum() == 6
    assert planes[8].sum() == 0 and planes[9].sum() == 25 and planes[10].sum() == 0


def test_encode_into_checks_shape_and_writes_in_place():
    board = Board(9)
    board.play(40)
    out = np.full((17, 9, 9), 7, dtype=np.uint8)
    features.encode_into(board, "alphazero", out)
    assert np.array_equal(out, board.features("alphazero"))
    with pytest.raises(ValueError):
        features.encode_into(board, "liberty", out)
    with pytest.raises(ValueError):
        board.features("bogus")


# --- symmetry ------------------------------------------------------------------------------------

def test_symmetries_are_the_eight_distinct_maps():
    base = np.arange(16, dtype=np.uint8).reshape(4, 4)
    images = {symmetry.transform_planes(base, s).tobytes() for s in range(8)}
    assert len(images) == 8 and symmetry.NUM_SYMMETRIES == 8
    assert np.array_equal(symmetry.transform_planes(base, 0), base)
    assert [symmetry.inverse(s) for s in range(8)] == [0, 1, 2, 3, 4, 6, 5, 7]
    with pytest.raises(ValueError):
        symmetry.inverse(8)


@SETTINGS
@given(n=sizes, sym=syms, planes=st.integers(1, 4), seed=st.integers(0, 2 ** 31))
def test_transform_then_inverse_is_identity(n, sym, planes, seed):
    rng = np.random.default_rng(seed)
    arr = rng.integers(0, 2, size=(planes, n, n), dtype=np.uint8)
    inv = symmetry.inverse(sym)
    out = symmetry.transform_planes(arr, sym)
    assert np.array_equal(symmetry.transform_planes(out, inv), arr)
    # the C kernel (uint8) and the numpy path (other dtypes) agree
    assert np.array_equal(symmetry.transform_planes(arr.astype(np.int64), sym), out)
    assert np.array_equal(symmetry.transform_planes(arr[0], sym), out[0])
    policy = rng.random(n * n + 1).astype(np.float32)
    moved = symmetry.transform_policy(policy, n, sym)
    assert moved[-1] == policy[-1]
    assert np.array_equal(symmetry.transform_policy(moved, n, inv), policy)
    assert np.array_equal(moved[:-1].reshape(n, n),
                          symmetry.transform_planes(policy[:-1].reshape(n, n), sym))
    assert np.array_equal(symmetry.transform_policy(policy.astype(np.float64), n, sym),
                          moved.astype(np.float64))


@SETTINGS
@given(n=st.sampled_from([3, 5, 7, 9]), sym=syms, seed=st.integers(0, 2 ** 31),
       count=st.integers(0, 60))
def test_features_of_transformed_game_equal_transformed_features(n, sym, seed, count):
    # The rules commute with the symmetries, so replaying the transformed moves gives the
    # transformed positions, history and ko included.
    moves = random_moves(n, seed, count)
    board, image = Board(n), Board(n)
    for move in moves:
        board.play(move)
        image.play(symmetry.transform_move(move, n, sym))
    assert image.hash is not None and image.num_moves == board.num_moves
    for encoding in ("alphazero", "liberty", "katago"):
        assert np.array_equal(image.features(encoding),
                              symmetry.transform_planes(board.features(encoding), sym))
    # and a transformed position set up from scratch (no history, no ko) agrees on its planes
    stones = symmetry.transform_planes(board.stones().astype(np.uint8), sym).ravel()
    setup = Board(n)
    setup.setup(black=np.flatnonzero(stones == BLACK).tolist(),
                white=np.flatnonzero(stones == WHITE).tolist())
    setup.to_move = board.to_move
    assert np.array_equal(setup.features("liberty")[:10], image.features("liberty")[:10])
    az_setup, az_image = setup.features("alphazero"), image.features("alphazero")
    assert np.array_equal(az_setup[[0, 1, 16]], az_image[[0, 1, 16]])
    assert setup.position_hash == image.position_hash
