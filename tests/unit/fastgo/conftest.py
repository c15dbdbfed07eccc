"""Fixtures for the fastgo tests: walking a search tree's live nodes (the peak of what a call
allocates is the unit tests' conftest's)."""
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
