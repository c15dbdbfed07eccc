"""REINFORCE learns: a real server, a real policy-only worker (`fastgo selfplay` with
trainer.algorithm = "reinforce") and a real trainer on 5x5 with a tiny network, seeded, for
TRAIN_UPDATES updates of 32 games each (TIMEOUT_S seconds only stop a run that hangs). The last
checkpoint's policy (moves sampled from it, no search, as the workers
play) must beat the random player far more often than chance and than the untrained policy."""
from __future__ import annotations

import csv
import glob
import os
import time

import numpy as np
import torch

from fastgo.policy_play import distribution
from network.checkpoint import load_checkpoint
from play.match import play_match
from play.players import MatchSide, RandomPlayer
from rundata.config import load_config
from rundata.match_stats import wilson_interval
from rundata.shards import list_shards, read_shard

TRAIN_UPDATES = 100
TIMEOUT_S = 600
EVAL_GAMES = 200

CONFIG = """
[model]
board_size = 5
blocks = 1
channels = 16
value_hidden = 16
ownership_head = false

[server]
endpoint = "tcp://127.0.0.1:5555"
max_batch = 64
max_wait_us = 500
device = "cpu"
threads = 1
backend = "torch"
slots = ["current"]

[selfplay]
games = 32
komi = 0.5
shard_games = 32
shard_seconds = 5.0
seed = 7
policy_floor = 0.001

[trainer]
algorithm = "reinforce"
minibatch_games = 32
pool_every = 5
baseline = "value"
value_weight = 0.5
checkpoint_every = 1
optimizer = "adamw"
lr = 0.005
weight_decay = 0.0
batch_size = 512
device = "cpu"
seed = 1
poll_s = 0.1
"""


class PolicySide(MatchSide):
    """Moves sampled from a checkpoint's policy with the workers' rules (fastgo.policy_play's
    distribution: no own-eye fills, pass only when nothing else is left), all games batched."""

    def __init__(self, path, seed, name):
        self.model = load_checkpoint(path).model.eval()
        self.rng = np.random.default_rng(seed)
        self.name = name

    def moves(self, turn, boards):
        planes = np.stack([boards[g].board.features("alphazero") for g in turn]).astype(np.float32)
        with torch.no_grad():
            logits, _ = self.model(torch.from_numpy(planes))
        chosen = []
        for row, g in enumerate(turn):
            game = boards[g]
            p = distribution(game.board, logits[row].numpy(), floor=0.001) * game.legal_moves()
            if p.sum() <= 0:
                chosen.append(game.board.pass_move)
                continue
            chosen.append(int(self.rng.choice(len(p), p=p / p.sum())))
        return chosen


def win_rate(path, seed):
    result = play_match(PolicySide(path, seed, "policy"), RandomPlayer(seed=seed + 1), EVAL_GAMES,
                        size=5, komi=0.5)
    score = result.wins_a + 0.5 * result.draws
    return score / result.games, wilson_interval(score, result.games)


def test_reinforce_beats_random_well_beyond_chance(tmp_path, run_learning_loop):
    torch.set_num_threads(1)
    started = time.monotonic()
    config_path = tmp_path / "reinforce.toml"
    config_path.write_text(CONFIG)
    load_config(str(config_path))
    run = tmp_path / "run"
    run_learning_loop(config_path, run, tmp_path, max_steps=TRAIN_UPDATES, timeout_s=TIMEOUT_S)
    loop_seconds = time.monotonic() - started

    with open(run / "metrics.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    checkpoints = sorted(glob.glob(str(run / "checkpoints" / "ckpt-*.ckpt")))
    first, last = checkpoints[0], checkpoints[-1]
    assert os.path.basename(first) == "ckpt-000000000.ckpt"
    assert os.path.basename(last) == f"ckpt-{TRAIN_UPDATES:09d}.ckpt"
    assert int(rows[-1]["step"]) == TRAIN_UPDATES
    # The learner played against pool opponents, and its later games came from later versions.
    games = [g for name in list_shards(run / "shards") for g in read_shard(run / "shards" / name).games]
    assert max(g.versions[0] for g in games) > 0
    assert {g.players["learner"] for g in games} == {1, -1}
    pool = (run / "pool.json").read_text()
    assert int(rows[-1]["pool"]) >= 2 and '"ckpt-0"' in pool

    before, (low0, high0) = win_rate(first, 21)
    after, (low, high) = win_rate(last, 31)
    print(f"\nreinforce: {loop_seconds:.0f} s loop, {rows[-1]['step']} updates, "
          f"{rows[-1]['games']} games; vs random: untrained {before:.3f} ({low0:.3f}..{high0:.3f}), "
          f"trained {after:.3f} ({low:.3f}..{high:.3f}); total {time.monotonic() - started:.0f} s")
    assert low > 0.65, "the trained policy does not beat random well beyond chance"
    assert low > high0, "the trained policy is not clearly stronger than the untrained one"
