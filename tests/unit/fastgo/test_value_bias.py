"""The subtree value-bias correction (fastgo.value_bias, SearchSettings.value_bias): the contexts'
key, and the books of a corrected search: every node's value sum is its own (corrected) value
plus its children's, its share of its context is its error against its children, and a search
whose network shows no error is the uncorrected search."""
import numpy as np
import pytest

from fastgo.board import Board
from fastgo.mcts import FLAG_TERMINAL, UNEXPANDED, BatchedSearch
from fastgo.search_settings import SearchSettings
from fastgo.value_bias import context_key

ALPHA = 0.8


def _play(size, moves):
    board = Board(size)
    for move in moves:
        board.play(move)          # raises on an illegal move
    return board


def test_context_key_reads_the_last_move_its_square_and_the_move_before():
    n = 9
    at = lambda r, c: r * n + c            # noqa: E731
    base = [at(4, 4), at(0, 0), at(4, 5)]          # the last move at (4, 5), (0, 0) far from it
    assert context_key(_play(n, base)) == context_key(_play(n, base))
    # a stone outside the 5x5 square around the last move, same last two moves: the same context
    far = [at(4, 4), at(0, 8), at(4, 5)]
    assert context_key(_play(n, far)) != context_key(_play(n, base))   # the move before differs
    far_same_tail = [at(8, 8), at(4, 4), at(0, 0), at(4, 5)]
    tail = [at(8, 0), at(4, 4), at(0, 0), at(4, 5)]
    assert context_key(_play(n, far_same_tail)) == context_key(_play(n, tail))
    # a stone inside the square: another context
    near = [at(3, 3), at(4, 4), at(0, 0), at(4, 5)]
    assert context_key(_play(n, near)) != context_key(_play(n, tail))
    # the same shape elsewhere: another context (the last move's point is in the key)
    shifted = [at(8, 0), at(4, 3), at(0, 0), at(4, 4)]
    assert context_key(_play(n, shifted)) != context_key(_play(n, tail))
    # the same colours in the square, a group in it put in atari from outside: another context.
    # White's (3, 7)-(3, 8) is surrounded inside the square; its last liberties, (2, 8) and
    # (4, 8), are outside it; Black's seventh move fills (2, 8) or plays far away.
    shape = [at(2, 7), at(3, 7), at(4, 7), at(3, 8), at(3, 6), at(8, 0)]
    two_liberties = _play(n, shape + [at(8, 8), at(0, 0), at(4, 5)])
    in_atari = _play(n, shape + [at(2, 8), at(0, 0), at(4, 5)])
    assert two_liberties.liberties()[3, 7] == 2 and in_atari.liberties()[3, 7] == 1
    assert context_key(two_liberties) != context_key(in_atari)
    assert context_key(Board(n)) != 0


def _evaluator(size, seed, value_fn=None):
    # Deterministic evaluations of the planes: logits and values from a hash of the row, the
    # pass held back so that no game ends inside the tree unless asked.
    nn = size * size

    def evaluate(planes):
        logits = np.empty((len(planes), nn + 1), np.float32)
        values = np.empty(len(planes), np.float32)
        for i, row in enumerate(planes):
            rng = np.random.default_rng([seed, int.from_bytes(row.tobytes()[:4096:7], "little") % (1 << 62)])
            logits[i] = rng.normal(size=nn + 1)
            logits[i, nn] = -30.0
            values[i] = rng.uniform(-0.9, 0.9) if value_fn is None else value_fn(row)
        return logits, values
    return evaluate


def _search(size, value_bias, visits, seed=3, evaluator=None, search="puct"):
    settings = SearchSettings(search=search, value_bias=value_bias, random_symmetry=False,
                              noise_weight=0.0)
    s = BatchedSearch(games=1, size=size, seed=seed, settings=settings)
    s.set_position(0, Board(size))
    s.run(evaluator or _evaluator(size, seed), visits)
    return s


def _check_books(t, nodes, lam, fresh=True):
    """The corrected search's invariants over the live `nodes` of tree arrays `t`. `fresh`:
    every node was built by the last search (no node kept from an earlier one, whose share of
    the table was given up when the search began and whose value may hold an older context's)."""
    errors = []
    for i in nodes:
        first, k = t["first_child"][i], t["num_children"][i]
        if t["visits"][i] == 0 or t["flags"][i] & FLAG_TERMINAL:
            continue
        kids = range(first, first + k) if first != UNEXPANDED else range(0)
        child_visits = sum(int(t["visits"][c]) for c in kids)
        assert t["visits"][i] == 1 + child_visits
        children_sum = -sum(float(t["value_sum"][c]) for c in kids)
        # the node's sum: its own (corrected) value once and its children's, each from its side
        # (float32 sums: their rounding grows with the visits)
        assert t["value_sum"][i] == pytest.approx(t["own_value"][i] + children_sum,
                                                  abs=2e-4 + 4e-6 * t["visits"][i])
        if not fresh and t["bias_den"][i] == 0:
            continue            # kept from the earlier search and not passed in this one
        if child_visits:
            err = t["raw_value"][i] - children_sum / child_visits
            weight = child_visits ** ALPHA
            assert t["bias_den"][i] == pytest.approx(weight, rel=1e-5)
            assert t["bias_num"][i] == pytest.approx(err * weight, abs=1e-4 * weight)
            errors.append(abs(err))
        else:
            assert t["bias_den"][i] == 0 and t["bias_num"][i] == 0
    largest = max(errors, default=0.0)
    for i in nodes if fresh else ():
        if t["visits"][i] and not t["flags"][i] & FLAG_TERMINAL:
            # a context's mean error is within its nodes' errors (all of them live here)
            assert abs(t["own_value"][i] - t["raw_value"][i]) <= lam * largest + 1e-5
            assert -1.0 <= t["own_value"][i] <= 1.0
    return errors


@pytest.mark.parametrize("search", ["puct", "gumbel"])
def test_corrected_books_balance(reachable, search):
    lam = 0.35
    s = _search(5, lam, 300, search=search)
    t = s.tree_arrays(0)
    nodes = reachable(t)
    errors = _check_books(t, nodes, lam)
    assert len(errors) > 20
    moved = [i for i in nodes if t["visits"][i] and t["own_value"][i] != t["raw_value"][i]]
    assert len(moved) > 10          # the correction reached nodes whose context had a history
    assert all(t["bias_key"][i] != 0 for i in nodes
               if t["visits"][i] and not t["flags"][i] & FLAG_TERMINAL)


def test_a_network_without_error_searches_as_without_the_correction():
    # Every position valued 0 and no game over in the tree: no node shows an error, so the
    # corrected search must be the plain one, visit for visit.
    size = 5
    flat = _evaluator(size, 7, value_fn=lambda row: 0.0)
    plain = _search(size, 0.0, 200, seed=7, evaluator=flat).tree_arrays(0)
    corrected = _search(size, 0.5, 200, seed=7, evaluator=flat).tree_arrays(0)
    assert np.array_equal(plain["visits"], corrected["visits"])
    assert np.array_equal(plain["value_sum"], corrected["value_sum"])
    assert not plain["bias_key"].any() and corrected["bias_key"].any()


def test_a_biased_network_is_corrected_towards_its_subtrees():
    # The network calls every position won for the side to move: each node's children then say
    # the opposite, every error is positive, and the corrected values fall below the network's.
    size = 5
    s = _search(size, 0.35, 400, seed=5, evaluator=_evaluator(size, 5, value_fn=lambda row: 0.5))
    t = s.tree_arrays(0)
    evaluated = [i for i in range(t["used"]) if t["visits"][i] and not t["flags"][i] & FLAG_TERMINAL]
    assert all(t["raw_value"][i] == 0.5 for i in evaluated)
    # every value in the tree lies in [-0.5, 0.5] from either side, so no error is negative ...
    assert all(t["bias_num"][i] >= -1e-6 for i in evaluated)
    assert sum(t["bias_num"][i] > 0.1 for i in evaluated) > 50
    # ... a node is corrected by the other nodes of its context, never by its own error alone:
    # alone in its context it keeps the network's value, with company it falls below it
    assert all(0.5 - 0.35 * 1.0 - 1e-6 <= t["own_value"][i] <= 0.5 for i in evaluated)
    members = {}
    for i in evaluated:
        members.setdefault(int(t["bias_key"][i]), []).append(i)
    alone = [m[0] for m in members.values() if len(m) == 1]
    shared = [i for m in members.values() if len(m) > 1 for i in m]
    assert len(alone) > 50 and len(shared) > 20
    assert all(t["own_value"][i] == 0.5 for i in alone)
    assert sum(t["own_value"][i] < 0.45 for i in shared) > 10


def test_the_table_grows_past_its_first_size_and_a_reused_tree_keeps_its_books(reachable):
    lam = 0.35
    s = _search(7, lam, 2500, seed=11)
    t = s.tree_arrays(0)
    keys = {int(t["bias_key"][i]) for i in reachable(t) if t["visits"][i]}
    assert len(keys) > 1024           # more contexts than the table's first capacity
    _check_books(t, reachable(t), lam)
    # the next move on the kept subtree: the books still balance after a second search
    s.advance(0, s.choose_move(0, 0.0))
    s.run(_evaluator(7, 11), 600)
    t = s.tree_arrays(0)
    _check_books(t, reachable(t), lam, fresh=False)


def test_settings_refuse_values_out_of_range():
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="value_bias"):
            SearchSettings(value_bias=bad)
    with pytest.raises(ValueError, match="value_bias_alpha"):
        SearchSettings(value_bias_alpha=3.0)
