"""Fixtures for the fastgo tests: walking a search tree's live nodes, and the peak of what a
call allocates."""
import tracemalloc

import pytest


def _reachable(t):
    """Node indices of a search tree dict (fastgo.mcts tree arrays) below and including the
    root, depth first; the other nodes are garbage of earlier roots."""
    from fastgo.mcts import UNEXPANDED

    stack, out = [t["root"]], []
    while stack:
        i = stack.pop()
        out.append(i)
        first = t["first_child"][i]
        if first != UNEXPANDED:
            stack.extend(range(first, first + t["num_children"][i]))
    return out


@pytest.fixture(scope="session")
def reachable():
    """reachable(tree_arrays) -> the live node indices (see _reachable)."""
    return _reachable


def _allocation_peak(call):
    """(call(), the peak bytes Python allocated while it ran), traced by tracemalloc; an
    exception of call() passes through once tracing has stopped."""
    tracemalloc.start()
    try:
        result = call()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _refusal_peak(call, error, match):
    """The peak bytes allocated while call() raised `error` with a message matching `match`
    (it must: pytest.raises)."""
    def refuse():
        with pytest.raises(error, match=match):
            call()
    return _allocation_peak(refuse)[1]


@pytest.fixture(scope="session")
def allocation_peak():
    """allocation_peak(call) -> (call(), peak bytes allocated while it ran)."""
    return _allocation_peak


@pytest.fixture(scope="session")
def refusal_peak():
    """refusal_peak(call, error, match) -> peak bytes allocated while call() refused."""
    return _refusal_peak
