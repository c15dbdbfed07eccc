"""Gumbel root search: every formula against a plain-Python reference written from the paper
(Danihelka et al., ICLR 2022), then the Cython tree's choices step by step against the same
reference on real searches."""
import math
import zlib

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fastgo import gumbel
from fastgo.board import Board
from fastgo.mcts import BatchedSearch
from fastgo.search_settings import GumbelSettings, SearchSettings

# ---------------------------------------------------------------------------------------------
# The reference, in plain Python.


def ref_schedule(m, n):
    """Sequential halving written as rounds: each round gives every surviving action one visit;
    a phase is `extra` rounds; the survivors halve (never below 2) after each phase."""
    if m <= 1:
        return list(range(n))
    phases = math.ceil(math.log2(m))
    seq, count, alive = [], 0, m
    while len(seq) < n:
        extra = max(1, int(n / (phases * alive)))
        for _ in range(extra):
            seq.extend([count] * alive)
            count += 1
        alive = max(2, alive // 2)
    return seq[:n]


def ref_vmix(prior, visits, q, raw):
    total = sum(visits)
    if total == 0:
        return raw
    p = [max(x, 1e-30) for x in prior]
    seen = [i for i in range(len(p)) if visits[i] > 0]
    mean_q = sum(p[i] * q[i] for i in seen) / sum(p[i] for i in seen)
    return (raw + total * mean_q) / (total + 1)


def ref_sigma(prior, visits, q, raw, c_visit=50.0, c_scale=1.0, rescale=False):
    vmix = ref_vmix(prior, visits, q, raw)
    completed = [q[i] if visits[i] > 0 else vmix for i in range(len(prior))]
    if rescale:
        lo, hi = min(completed), max(completed)
        completed = [(c - lo) / max(hi - lo, 1e-8) for c in completed]
    else:
        completed = [(c + 1) / 2 for c in completed]        # a win probability
    scale = (c_visit + max(visits)) * c_scale
    return [scale * c for c in completed]


def ref_improved(prior, visits, q, raw, **kw):
    s = ref_sigma(prior, visits, q, raw, **kw)
    x = [math.log(max(p, 1e-30)) + si for p, si in zip(prior, s)]
    mx = max(x)
    e = [math.exp(v - mx) for v in x]
    return [v / sum(e) for v in e]


def ref_select(base, sigma, count, want):
    eligible = [i for i in range(len(base)) if count[i] == want] or list(range(len(base)))
    return max(eligible, key=lambda i: (base[i] + sigma[i], -i))


def children(draw_k=st.integers(1, 12)):
    @st.composite
    def build(draw):
        k = draw(draw_k)
        logits = draw(st.lists(st.floats(-6, 6), min_size=k, max_size=k))
        e = np.exp(np.array(logits) - max(logits))
        prior = (e / e.sum()).astype(np.float32)
        visits = draw(st.lists(st.integers(0, 40), min_size=k, max_size=k))
        q = draw(st.lists(st.floats(-1, 1), min_size=k, max_size=k))
        # the raw value as the float32 the search holds: a float64 one a hair off a child's
        # float32 Q made the reference rescale a spread of 1e-8 that the kernel sees as none
        raw = float(np.float32(draw(st.floats(-1, 1))))
        return prior, np.array(visits, np.int32), np.array(q, np.float32), raw
    return build()


# ---------------------------------------------------------------------------------------------
# The formulas.


def test_schedule_by_hand():
    # m = 4, n = 8: two phases; 4 actions once each, then the best 2 get 2 more each.
    assert gumbel.schedule(4, 8).tolist() == [0, 0, 0, 0, 1, 1, 2, 2]
    # m = 16, n = 64: 16 x 1, then 8 x 2, 4 x 4, 2 x 8 (16 simulations per phase).
    expected = [0] * 16 + [1] * 8 + [2] * 8 + sum(([v] * 4 for v in range(3, 7)), []) \
        + sum(([v] * 2 for v in range(7, 15)), [])
    assert gumbel.schedule(16, 64).tolist() == expected
    assert gumbel.schedule(1, 5).tolist() == [0, 1, 2, 3, 4]
    assert gumbel.schedule(16, 4).tolist() == [0, 0, 0, 0]     # fewer simulations than actions


@given(st.integers(1, 40), st.integers(0, 400))
@settings(max_examples=150, deadline=None)
def test_schedule_matches_reference(m, n):
    assert gumbel.schedule(m, n).tolist() == ref_schedule(m, n)


@given(children())
@settings(max_examples=150, deadline=None)
def test_mixed_value_matches_reference(c):
    prior, visits, q, raw = c
    assert gumbel.mixed(prior, visits, q, raw) == pytest.approx(
        ref_vmix(prior.tolist(), visits.tolist(), q.tolist(), raw), abs=1e-5)


def test_mixed_value_by_hand():
    # raw 0.5; two visited actions (priors 0.2, 0.6; q 1.0, -0.2; 3 and 1 visits), one not:
    # (0.5 + 4 * (0.2 * 1.0 + 0.6 * -0.2) / 0.8) / 5 = (0.5 + 4 * 0.1) / 5 = 0.18.
    prior = [0.2, 0.6, 0.2]
    assert gumbel.mixed(prior, [3, 1, 0], [1.0, -0.2, 0.0], 0.5) == pytest.approx(0.18, abs=1e-6)
    assert gumbel.mixed(prior, [0, 0, 0], [0.3, 0.1, 0.0], -0.25) == pytest.approx(-0.25)


@given(children(), st.floats(0, 100), st.floats(0.01, 2), st.booleans())
@example((np.array([0.5, 0.5], np.float32), np.array([0, 1], np.int32),
          np.array([0.0, 0.23055495], np.float32), float(np.float32(0.23055495569195705))),
         0.0, 1.0, True)
@settings(max_examples=150, deadline=None)
def test_sigma_and_policy_match_reference(c, c_visit, c_scale, rescale):
    prior, visits, q, raw = c
    kw = dict(c_visit=c_visit, c_scale=c_scale, rescale=rescale)
    want = ref_sigma(prior.tolist(), visits.tolist(), q.tolist(), raw, **kw)
    got = gumbel.sigma(prior, visits, q, raw, **kw)
    assert got.tolist() == pytest.approx(want, rel=1e-4, abs=1e-3)
    policy = gumbel.improved(prior, visits, q, raw, **kw)
    assert policy.tolist() == pytest.approx(
        ref_improved(prior.tolist(), visits.tolist(), q.tolist(), raw, **kw), abs=1e-4)
    assert policy.sum() == pytest.approx(1.0, abs=1e-5)


def test_sigma_by_hand():
    # visits [2, 0], q(0) = 0.4, raw 0: v_mix = (0 + 2 * 0.4) / 3; rescaled to [1, 0]; the scale is
    # (50 + 2) * 1.
    assert gumbel.sigma([0.5, 0.5], [2, 0], [0.4, 0.0], 0.0, rescale=True).tolist() \
        == pytest.approx([52.0, 0.0])
    # Without rescaling: (q + 1) / 2 times the scale; c_scale 0.1.
    got = gumbel.sigma([0.5, 0.5], [2, 0], [0.4, 0.0], 0.0, c_scale=0.1, rescale=False)
    assert got.tolist() == pytest.approx([5.2 * 0.7, 5.2 * (1 + 0.8 / 3) / 2])


def test_illegal_children_take_no_part():
    prior, visits, q = [0.3, 0.3, 0.4], [1, 0, 5], [0.9, 0.0, -0.9]
    legal = [True, True, False]
    policy = gumbel.improved(prior, visits, q, 0.0, legal=legal)
    assert policy[2] == 0.0
    assert policy.tolist()[:2] == pytest.approx(ref_improved(prior[:2], visits[:2], q[:2], 0.0), abs=1e-5)
    assert gumbel.mixed(prior, visits, q, 0.0, legal=legal) == pytest.approx((0.0 + 0.9) / 2)
    assert gumbel.select([0, 0, 9], [0, 1, 0], [0, 0, 0], 0, legal=legal) == 1


@given(st.lists(st.tuples(st.floats(-5, 5), st.floats(0, 60), st.integers(0, 3)), min_size=1,
                max_size=20), st.integers(0, 3))
@settings(max_examples=150, deadline=None)
def test_select_matches_reference(rows, want):
    base, sigma, count = zip(*rows)
    got = gumbel.select(base, sigma, count, want)
    # float32 rounding may tie values the reference sees apart: compare scores, not indices.
    b32 = np.float32(base) + np.float32(sigma)
    ref = ref_select([float(x) for x in np.float32(base)], [float(x) for x in np.float32(sigma)],
                     count, want)
    assert b32[got] == b32[ref]
    assert (count[got] == want) == (want in count)


# ---------------------------------------------------------------------------------------------
# The Cython tree, step by step against the reference.

PASS_LOGIT = -12.0


def evaluator(size):
    """Deterministic logits and values from the planes' bytes; the pass is never attractive (no
    terminal descents, so each collect adds exactly one visit)."""
    nn = size * size

    def evaluate(planes):
        logits = np.empty((len(planes), nn + 1), np.float32)
        values = np.empty(len(planes), np.float32)
        for i, p in enumerate(planes):
            rng = np.random.default_rng(zlib.crc32(p.tobytes()))
            logits[i] = rng.normal(0, 1.5, nn + 1)
            logits[i, nn] = PASS_LOGIT
            values[i] = np.tanh(rng.normal(0, 0.6))
        return logits, values
    return evaluate


def root_children(search, g=0):
    a = search.tree_arrays(g)
    root = a["root"]
    first, k = a["first_child"][root], a["num_children"][root]
    sl = slice(first, first + k)
    visits = a["visits"][sl].astype(np.int64)
    q = np.where(visits > 0, -a["value_sum"][sl] / np.maximum(visits, 1), 0.0)
    return dict(moves=a["move"][sl].astype(int), prior=a["prior"][sl].astype(np.float64),
                visits=visits, inflight=a["virtual_loss"][sl].astype(np.int64), q=q)


def expected_choice(ch, info, n, final=False):
    """The reference's child index for the next simulation (or the move played, final=True)."""
    noise = info["noise"][ch["moves"]]
    base = [float(np.float32(g) + np.float32(math.log(max(p, 1e-30))))
            for g, p in zip(noise, ch["prior"])]
    sigma = ref_sigma(ch["prior"].tolist(), ch["visits"].tolist(), ch["q"].tolist(),
                      info["raw_value"])
    if final:
        count, want = ch["visits"].tolist(), int(ch["visits"].max())
    else:
        count = (ch["visits"] + ch["inflight"]).tolist()
        want = ref_schedule(info["considered"], n)[sum(count)]
    return ref_select(base, sigma, count, want), base, sigma


@pytest.mark.parametrize("n,considered,seed", [(16, 16, 1), (32, 8, 2), (64, 16, 3), (7, 4, 4),
                                                (24, 1, 5)])
def test_each_simulation_takes_the_reference_child(n, considered, seed):
    size = 7
    search = BatchedSearch(games=1, size=size, seed=seed,
                           settings=SearchSettings(search="gumbel", leaves_per_game=1,
                                                   max_batches=1, random_symmetry=False,
                                                   gumbel=GumbelSettings(considered=considered)))
    board = Board(size, 7.5)
    for move in (10, 24, 30):
        board.play(move)
    search.set_position(0, board)
    search.start(n)
    evaluate = evaluator(size)
    buf = np.empty((1, search.planes, size, size), np.uint8)
    steps = 0
    while not search.done:
        info = search.root_gumbel(0)
        before = root_children(search) if info["ready"] else None
        count = search.collect(buf)
        assert count == 1
        if before is not None:
            after = root_children(search)
            grew = np.flatnonzero(after["visits"] + after["inflight"]
                                  - before["visits"] - before["inflight"])
            assert len(grew) == 1, "one simulation per collect"
            want, _, _ = expected_choice(before, info, n)
            assert grew[0] == want, f"simulation {steps}: took child {grew[0]}, reference {want}"
            steps += 1
        search.apply(*evaluate(buf[:count]))
    assert steps == n
    info = search.root_gumbel(0)
    ch = root_children(search)
    assert info["considered"] == min(considered, len(ch["moves"]))
    # Visits follow the halving table: actions with more than v visits = entries equal to v.
    table = ref_schedule(info["considered"], n)
    for v in range(max(table) + 1):
        assert int((ch["visits"] > v).sum()) == table.count(v)
    # The move played and the policy target.
    want, _, _ = expected_choice(ch, info, n, final=True)
    assert search.choose_move(0) == ch["moves"][want]
    target = search.improved_policy(0)
    ref = ref_improved(ch["prior"].tolist(), ch["visits"].tolist(), ch["q"].tolist(),
                       info["raw_value"])
    assert target[ch["moves"]].tolist() == pytest.approx(ref, abs=1e-4)
    assert target.sum() == pytest.approx(1.0, abs=1e-5)


def test_batched_games_with_two_batches_in_flight():
    # The worker's shape: many games, two batches in flight (leaves in flight count as visits).
    size, games, n = 9, 12, 32
    search = BatchedSearch(games=games, size=size, seed=7,
                           settings=SearchSettings(search="gumbel", max_batches=2))
    for g in range(games):
        search.set_position(g, Board(size, 7.5))
    search.start(n)
    evaluate = evaluator(size)
    bufs = [np.empty((games, search.planes, size, size), np.uint8) for _ in range(2)]
    pending = []
    while not search.done:
        for b in bufs:
            if len(pending) < 2 and all(b is not p[0] for p in pending):
                count = search.collect(b)
                if count:
                    pending.append((b, count))
        b, count = pending.pop(0)
        search.apply(*evaluate(b[:count]))
    for g in range(games):
        info = search.root_gumbel(g)
        visits = search.root_visits(g)
        assert visits.sum() == n
        table = ref_schedule(info["considered"], n)
        for v in range(max(table) + 1):
            assert int((visits > v).sum()) == table.count(v)
        move = search.choose_move(g)
        assert visits[move] == visits.max()


def test_zero_scale_is_deterministic_and_noise_has_gumbel_statistics():
    size = 5
    moves = set()
    for seed in range(4):
        search = BatchedSearch(games=1, size=size, seed=seed,
                               settings=SearchSettings(search="gumbel", random_symmetry=False,
                                                       gumbel=GumbelSettings(scale=0.0)))
        search.set_position(0, Board(size, 7.5))
        search.run(evaluator(size), 16)
        moves.add(search.choose_move(0))
        assert np.nanmax(np.abs(search.root_gumbel(0)["noise"])) == 0.0
    assert len(moves) == 1
    # Gumbel(0, 1): mean = Euler's gamma (0.5772), variance pi^2 / 6.
    noise = []
    search = BatchedSearch(games=8, size=9, seed=11, settings=SearchSettings(search="gumbel"))
    for g in range(8):
        search.set_position(g, Board(9, 7.5))
    for _ in range(10):
        search.run("uniform", 1)
        for g in range(8):
            noise.extend(search.root_gumbel(g)["noise"].tolist())
    noise = np.array(noise)
    assert abs(noise.mean() - 0.5772) < 0.05
    assert abs(noise.var() - math.pi ** 2 / 6) < 0.15


def test_improved_policy_only_for_gumbel_and_no_reuse():
    search = BatchedSearch(games=1, size=5, settings=SearchSettings(search="puct"))
    with pytest.raises(RuntimeError, match="gumbel"):
        search.improved_policy(0)
    with pytest.raises(ValueError, match="search"):
        BatchedSearch(games=1, size=5, settings=SearchSettings(search="mcts"))
    search = BatchedSearch(games=1, size=5, seed=3, settings=SearchSettings(search="gumbel"))
    search.set_position(0, Board(5, 7.5))
    search.run("uniform", 8)
    move = search.choose_move(0)
    search.advance(0, move)
    assert search.root_visits(0).sum() == 0           # a fresh root for the next search
    search.run("uniform", 8)
    assert search.root_visits(0).sum() == 8


def test_gumbel_scale_per_start():
    # One search object, the noise chosen per start: 0 for a player's move, the constructor's
    # scale by default; out-of-range scales are refused before anything changes.
    size = 5
    search = BatchedSearch(games=2, size=size, seed=5,
                           settings=SearchSettings(search="gumbel", random_symmetry=False))
    for g in range(2):
        search.set_position(g, Board(size, 7.5))
    search.run(evaluator(size), 16, games=[0], gumbel_scale=0.0)
    search.run(evaluator(size), 16, games=[1])
    assert np.nanmax(np.abs(search.root_gumbel(0)["noise"])) == 0.0
    assert np.nanmax(np.abs(search.root_gumbel(1)["noise"])) > 0.0
    # Deterministic at scale 0 whatever the seed: the same move as another seed's search.
    other = BatchedSearch(games=1, size=size, seed=99,
                          settings=SearchSettings(search="gumbel", random_symmetry=False))
    other.set_position(0, Board(size, 7.5))
    other.start(16, gumbel_scale=0.0)
    buf = np.empty((1, other.planes, size, size), np.uint8)
    while (count := other.collect(buf)):
        other.apply(*evaluator(size)(buf[:count]))
    assert other.choose_move(0) == search.choose_move(0)
    np.testing.assert_array_equal(other.root_visits(0), search.root_visits(0))
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="gumbel_scale"):
            search.start(16, gumbel_scale=bad)
