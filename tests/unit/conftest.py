"""Fixtures for the unit tests of every package: the peak of what a call allocates, and of what
it allocates before it refuses (the readers' bounds are checked this way)."""
import tracemalloc

import pytest


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


def _board_copies(board):
    """The 8 symmetric copies of board [..., N, N] as numpy makes them (rotations, then the
    transpose's rotations), independent of the kernel's own numbering of the symmetries."""
    import numpy as np

    out = []
    for flip in (False, True):
        b = np.swapaxes(board, -1, -2) if flip else board
        for k in range(4):
            out.append(np.ascontiguousarray(np.rot90(b, k, axes=(-2, -1))))
    return out


@pytest.fixture(scope="session")
def board_copies():
    return _board_copies
