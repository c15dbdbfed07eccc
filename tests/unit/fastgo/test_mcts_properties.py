"""Property tests of the batched search: any interleaving of collect / apply with random
evaluations, leaves per game and batches in flight keeps the tree's books straight."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fastgo.board import Board
from fastgo.mcts import FLAG_PENDING, UNEXPANDED, BatchedSearch
from fastgo.search_settings import SearchSettings


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), size=st.integers(2, 6), games=st.integers(1, 4),
       leaves=st.integers(1, 4), max_batches=st.integers(1, 3), visits=st.integers(1, 80),
       moves=st.integers(0, 6))
def test_books_balance_under_any_schedule(reachable, seed, size, games, leaves, max_batches, visits,
                                          moves):
    rng = np.random.default_rng(seed)
    search = BatchedSearch(games=games, size=size, seed=seed,
                           settings=SearchSettings(leaves_per_game=leaves, max_batches=max_batches))
    for g in range(games):
        search.set_position(g, Board(size))
    nn = size * size
    buffers = [np.zeros((games * leaves, search.planes, size, size), np.uint8)
               for _ in range(max_batches)]
    for _ in range(moves + 1):
        search.start(visits)
        pending = []
        while not search.done:
            if len(pending) < max_batches and (not pending or rng.random() < 0.5):
                buf = buffers[len(pending)]
                count = search.collect(buf)
                if count:
                    pending.append(count)
                    continue
            if not pending:
                continue
            count = pending.pop(0)
            logits = rng.normal(size=(count, nn + 1)).astype(np.float32)
            values = rng.uniform(-1, 1, size=count).astype(np.float32)
            search.apply(logits, values)
        for g in range(games):
            t = search.tree_arrays(g)
            assert (t["virtual_loss"][reachable(t)] == 0).all()
            assert not (t["flags"] & FLAG_PENDING).any()
            visits_now = search.root_visits(g)
            if not search.root_board(g).is_over():
                assert visits_now.sum() >= visits
                assert visits_now.sum() <= visits + leaves * max_batches
            for i in reachable(t):
                first = t["first_child"][i]
                if first != UNEXPANDED and t["visits"][i] > 0:
                    assert t["visits"][i] == 1 + t["visits"][first:first + t["num_children"][i]].sum()
                    assert abs(t["value_sum"][i]) <= t["visits"][i] + 1e-3
            legal = search.root_board(g).legal_moves()
            assert (visits_now[legal == 0] == 0).all()
        for g in range(games):
            if not search.root_board(g).is_over():
                search.advance(g, search.choose_move(g, 1.0))
