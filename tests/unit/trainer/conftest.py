"""Fixtures for the trainer tests: the policy-only sampler's acceptable moves, in Python from the
board's rules (the reference the REINFORCE mask is checked against)."""
import numpy as np
import pytest


def _rule_mask(board, allow_pass):
    """uint8 [N*N+1]: 1 where the sampler may play on `board` (a fastgo.board.Board): legal, not
    the mover's own eye; the pass only when allow_pass or nothing else is acceptable."""
    nn = board.size * board.size
    legal = board.legal_moves()
    mask = np.zeros(nn + 1, np.uint8)
    for m in range(nn):
        mask[m] = legal[m] and not board.is_eye(m, board.to_move)
    mask[nn] = 1 if (allow_pass or not mask[:nn].any()) else 0
    return mask


@pytest.fixture(scope="session")
def rule_mask():
    return _rule_mask
