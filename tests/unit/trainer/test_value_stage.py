"""The value stage on hand-built games: positions drawn once per game (seeded), the value loss
falls, and with freeze_policy every parameter and BatchNorm statistic outside the value head
stays bit-identical; without it the policy trains too."""
from __future__ import annotations

import csv

import numpy as np
import pytest
import torch

from rundata.config import loads_config
from rundata.rundir import open_run_dir
from trainer.factory import make_trainer
from trainer.value_stage import chosen_positions, is_value_head
from trainer.window import block_from_games

SIZE, KOMI = 5, 0.5


def config(freeze, per_game=1):
    return loads_config(f"""
[model]
board_size = {SIZE}
blocks = 1
channels = 8
value_hidden = 16
[selfplay]
komi = {KOMI}
[trainer]
algorithm = "value"
freeze_policy = {"true" if freeze else "false"}
positions_per_game = {per_game}
batch_size = 32
min_positions = 1
samples_per_position = 1000
checkpoint_every = 50
optimizer = "adamw"
lr = 0.01
weight_decay = 0.0
device = "cpu"
poll_s = 0.05
""")


@pytest.fixture
def make_games(game_record, random_moves):
    """make_games(seed, count=40) -> `count` random 5x5 games of 3 to 13 moves before two
    passes, both colours the learner's."""
    def games(seed, count=40):
        rng = np.random.default_rng(seed)
        return [game_record(SIZE, KOMI, random_moves(SIZE, KOMI, rng, length=int(rng.integers(3, 14))),
                            0, seed=i) for i in range(count)]
    return games


def test_positions_drawn_once_per_game_and_seeded(make_games):
    block = block_from_games(make_games(1, 10), SIZE, "w0-000001.shard")
    game, move = chosen_positions(block, 1, seed=3)
    assert game.tolist() == list(range(10))
    assert np.all((move >= 0) & (move < block.game_len[game]))
    again = chosen_positions(block, 1, seed=3)
    assert np.array_equal(again[1], move)
    other = chosen_positions(block, 1, seed=4)
    assert not np.array_equal(other[1], move)
    game3, move3 = chosen_positions(block, 3, seed=3)
    for g in range(10):
        picked = move3[game3 == g]
        assert len(picked) == min(3, block.game_len[g]) and len(set(picked.tolist())) == len(picked)


def value_losses(run):
    with open(run.metrics, newline="") as handle:
        return [float(r["value_loss"]) for r in csv.DictReader(handle)]


def test_frozen_policy_stays_bit_identical_and_value_loss_falls(tmp_path, make_games, write_shard):
    run = open_run_dir(tmp_path / "run")
    write_shard(run.shards, make_games(2), "w0-000001.shard", size=SIZE, komi=KOMI)
    trainer = make_trainer(config(freeze=True), run)
    before = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    trainer.run(max_steps=300)
    after = trainer.model.state_dict()
    frozen = [k for k in before if not is_value_head(k)]
    assert any(k.startswith("blocks.") for k in frozen) and "policy_fc.weight" in frozen
    assert all(torch.equal(before[k], after[k]) for k in frozen)
    assert not torch.equal(before["value_fc2.weight"], after["value_fc2.weight"])
    losses = value_losses(run)
    assert len(losses) == 6
    assert losses[-1] < 0.8 * losses[0], losses


def test_unfrozen_trains_the_policy_too(tmp_path, make_games, write_shard):
    run = open_run_dir(tmp_path / "run")
    write_shard(run.shards, make_games(3), "w0-000001.shard", size=SIZE, komi=KOMI)
    trainer = make_trainer(config(freeze=False, per_game=2), run)
    before = trainer.model.state_dict()["policy_fc.weight"].clone()
    trainer.run(max_steps=50)
    assert not torch.equal(before, trainer.model.state_dict()["policy_fc.weight"])
