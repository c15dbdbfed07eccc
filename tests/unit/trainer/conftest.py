"""Fixtures for the trainer tests: the policy-only sampler's acceptable moves, in Python from the
board's rules (the reference the REINFORCE mask is checked against); a small window trainer's
config and a run directory holding 20 random 5x5 games."""
import numpy as np
import pytest

from rundata.rundir import open_run_dir

SMALL_SIZE, SMALL_KOMI = 5, 0.5


def small_config_text(keep_checkpoints=2):
    """TOML of a b1c8 5x5 window trainer (fp32: tests recompute its formulas); append trainer
    keys to it."""
    return f"""
[model]
board_size = {SMALL_SIZE}
blocks = 1
channels = 8
value_hidden = 8
[selfplay]
komi = {SMALL_KOMI}
[trainer]
batch_size = 16
min_positions = 1
samples_per_position = 1000
checkpoint_every = 2
keep_checkpoints = {keep_checkpoints}
optimizer = "sgd"
lr = 0.01
device = "cpu"
precision = "fp32"
poll_s = 0.01
"""


@pytest.fixture(scope="session")
def small_trainer_config():
    return small_config_text


@pytest.fixture
def run_with_games(tmp_path, game_record, random_moves, write_shard):
    run = open_run_dir(tmp_path / "run")
    rng = np.random.default_rng(4)
    games = [game_record(SMALL_SIZE, SMALL_KOMI,
                         random_moves(SMALL_SIZE, SMALL_KOMI, rng, length=int(rng.integers(4, 14))),
                         0, seed=i) for i in range(20)]
    write_shard(run.shards, games, "w0-000001.shard", size=SMALL_SIZE, komi=SMALL_KOMI)
    return run


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
