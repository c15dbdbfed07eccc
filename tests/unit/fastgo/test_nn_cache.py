"""fastgo.nn_cache.NetworkCache: keys shared by a position's symmetric copies and by no other
position, answers read back in the asker's own frame, replacement, clear and bad shapes."""
import numpy as np
import pytest

from fastgo.nn_cache import NetworkCache

N = 5
P = 3


def random_planes(rng, rows, values=(0, 1)):
    return rng.choice(np.array(values, np.uint8), size=(rows, P, N, N)).astype(np.uint8)


def test_keys_are_shared_by_the_symmetric_copies_and_only_by_them(board_copies):
    rng = np.random.default_rng(1)
    cache = NetworkCache(64, N, P)
    planes = random_planes(rng, 40, values=(0, 1, 2))
    keys = []
    for x in planes:
        copies = np.stack(board_copies(x))
        k, _ = cache.keys(copies)
        assert len(set(k.tolist())) == 1, "a position's 8 copies must share one key"
        keys.append(int(k[0]))
    assert len(set(keys)) == len(keys), "different random positions must have different keys"
    # one stone moved, or one value changed from 1 to 2: another key
    x = np.zeros((1, P, N, N), np.uint8)
    x[0, 0, 1, 2] = 1
    y = x.copy()
    y[0, 0, 1, 2] = 2
    z = np.zeros_like(x)
    z[0, 1, 1, 2] = 1
    k = [int(cache.keys(a)[0][0]) for a in (x, y, z)]
    assert len(set(k)) == 3


def test_an_answer_comes_back_in_the_frame_of_the_copy_that_asks(board_copies):
    rng = np.random.default_rng(2)
    cache = NetworkCache(1024, N, P)
    x = random_planes(rng, 1)[0]
    board_logits = rng.standard_normal((N, N)).astype(np.float32)
    pass_logit = np.float32(0.75)
    keys, syms = cache.keys(x[None])
    cache.store(keys, syms, np.append(board_logits.ravel(), pass_logit)[None],
                np.array([0.25], np.float32))
    # each copy of x asks: the answer is the stored logits moved as its planes were moved
    plane_copies = board_copies(x)
    logit_copies = board_copies(board_logits)
    asked = np.stack(plane_copies)
    keys, syms = cache.keys(asked)
    logits = np.full((8, N * N + 1), np.nan, np.float32)
    values = np.full(8, np.nan, np.float32)
    hits = cache.lookup(keys, syms, logits, values)
    assert hits.tolist() == [1] * 8
    for i in range(8):
        np.testing.assert_array_equal(logits[i, :N * N], logit_copies[i].ravel())
    assert (logits[:, N * N] == pass_logit).all() and (values == np.float32(0.25)).all()
    assert (cache.lookups, cache.hits) == (8, 8)


def test_a_miss_is_not_written_and_clear_forgets():
    rng = np.random.default_rng(3)
    cache = NetworkCache(4096, N, P)
    stored, other = random_planes(rng, 1), random_planes(rng, 1)
    keys, syms = cache.keys(stored)
    cache.store(keys, syms, np.ones((1, N * N + 1), np.float32), np.ones(1, np.float32))
    both = np.concatenate([other, stored])
    keys, syms = cache.keys(both)
    logits = np.full((2, N * N + 1), -7.0, np.float32)
    values = np.full(2, -7.0, np.float32)
    assert cache.lookup(keys, syms, logits, values).tolist() == [0, 1]
    assert (logits[0] == -7.0).all() and values[0] == -7.0
    cache.clear()
    assert cache.lookup(keys, syms, logits, values).tolist() == [0, 0]


def test_a_slot_holds_the_newer_of_two_positions():
    rng = np.random.default_rng(4)
    cache = NetworkCache(1, N, P)           # one slot: every position shares it
    a, b = random_planes(rng, 1), random_planes(rng, 1)
    for planes, value in ((a, 1.0), (b, 2.0)):
        keys, syms = cache.keys(planes)
        cache.store(keys, syms, np.zeros((1, N * N + 1), np.float32), np.array([value], np.float32))
    out_l, out_v = np.zeros((1, N * N + 1), np.float32), np.zeros(1, np.float32)
    assert cache.lookup(*cache.keys(a), out_l, out_v).tolist() == [0]
    assert cache.lookup(*cache.keys(b), out_l, out_v).tolist() == [1] and out_v[0] == 2.0


@pytest.mark.parametrize("capacity", [0, 3, 1 << 25, -1])
def test_capacity_must_be_a_power_of_two_in_range(capacity):
    with pytest.raises(ValueError, match="capacity"):
        NetworkCache(capacity, N, P)


def test_wrong_shapes_and_symmetries_are_refused():
    cache = NetworkCache(16, N, P)
    with pytest.raises(ValueError, match="planes have shape"):
        cache.keys(np.zeros((2, P + 1, N, N), np.uint8))
    keys, syms = cache.keys(np.zeros((2, P, N, N), np.uint8))
    with pytest.raises(ValueError, match="logits"):
        cache.lookup(keys, syms, np.zeros((2, N * N), np.float32), np.zeros(2, np.float32))
    with pytest.raises(ValueError, match="symmetry"):
        cache.store(keys, np.array([0, 8], np.uint8), np.zeros((2, N * N + 1), np.float32),
                    np.zeros(2, np.float32))
    empty = np.zeros((0, P, N, N), np.uint8)
    k, s = cache.keys(empty)
    assert len(k) == 0 and len(s) == 0
