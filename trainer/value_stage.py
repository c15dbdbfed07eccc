"""The value stage (`fastgo train` with trainer.algorithm = "value", AlphaGo's value network):
from each game in the replay window `positions_per_game` positions are drawn once (seeded by
trainer.seed and the shard's name, so a restart draws the same ones; 1 = AlphaGo's
decorrelation), and training batches are drawn uniformly from those positions under a random
symmetry. The target is the game's result from the side to move's view (MSE, value_weight).

freeze_policy = true trains the value head only (value_conv, value_bn, value_fc1, value_fc2);
the stem, the residual tower, the policy head and the ownership head keep their parameters and,
with the whole network in eval mode, their BatchNorm statistics bit for bit. false trains
everything, the policy toward the move played (cross-entropy on the positions whose move is a
policy target) as well, in train mode like the AlphaZero trainer.
"""
from __future__ import annotations

import zlib

import numpy as np
import torch
import torch.nn.functional as F

from trainer.alphazero import policy_terms
from trainer.metrics import VALUE_FIELDS, VALUE_TERMS
from trainer.training_core import autocast

VALUE_HEAD = ("value_conv.", "value_bn.", "value_fc1.", "value_fc2.")


def is_value_head(name: str) -> bool:
    return name.startswith(VALUE_HEAD)


def chosen_positions(block, per_game: int, seed: int):
    """(game, move) int32 arrays: `per_game` distinct positions of each of the block's games
    (all of a shorter game), drawn from a stream seeded by (seed, crc32 of the block's name)."""
    rng = np.random.default_rng([int(seed), zlib.crc32(block.name.encode())])
    games, moves = [], []
    for g, length in enumerate(block.game_len.tolist()):
        if length == 0:
            continue
        pick = np.sort(rng.choice(length, size=min(per_game, length), replace=False))
        games.append(np.full(len(pick), g, np.int32))
        moves.append(pick.astype(np.int32))
    if not games:
        return np.zeros(0, np.int32), np.zeros(0, np.int32)
    return np.concatenate(games), np.concatenate(moves)


class ValueObjective:
    """The loss step of the value stage over the replay window (trainer.window_trainer):

        loss = value_weight * mean_i (v_i - z_i)^2  [+ policy_loss when freeze_policy is false]
        policy_loss = -sum_i w_i sum_a pi_i(a) log p_i(a) / max(1, sum_i w_i)

    over a batch of trainer.batch_size positions drawn uniformly (self.rng of the trainer) from
    the chosen positions of the window's games, each under a random symmetry; pi and w are the
    window's policy target and its weight, as in trainer.alphazero. policy_loss and policy_acc are
    reported either way; value_abs_error is mean_i |v_i - z_i|; ownership_loss is 0 (the
    ownership head is not trained). Samples are allowed from trainer.min_positions chosen
    positions on (games ever added x positions_per_game): samples_per_position per chosen
    position."""

    algorithm = "value"
    fields = VALUE_FIELDS
    terms = VALUE_TERMS

    def __init__(self, tc):
        self.tc = tc
        self._choice_cache = {}

    def trainable(self, name: str) -> bool:
        return is_value_head(name) or not self.tc.freeze_policy

    def _chosen(self, window):
        """Window game and move of every chosen position, in window order."""
        cache = self._choice_cache
        games, moves, offset = [], [], 0
        fresh = {}
        for block in window.blocks:
            key = (block.name, block.games)
            pair = cache.get(key)
            if pair is None:
                pair = chosen_positions(block, self.tc.positions_per_game, self.tc.seed)
            fresh[key] = pair
            games.append(pair[0] + offset)
            moves.append(pair[1])
            offset += block.games
        self._choice_cache = fresh
        if not games:
            return np.zeros(0, np.int32), np.zeros(0, np.int32)
        return np.concatenate(games), np.concatenate(moves)

    def allowed_samples(self, window) -> float:
        chosen = window.total_games * self.tc.positions_per_game
        if chosen < self.tc.min_positions:
            return 0
        return self.tc.samples_per_position * chosen

    def loss(self, model, window, rng, buffers, device):
        game, move = self._chosen(window)
        if len(game) == 0:
            raise ValueError("no positions to train on")
        batch_size = buffers["planes"].shape[0]
        pick = rng.integers(0, len(game), size=batch_size)
        symmetry = rng.integers(0, 8, size=batch_size).astype(np.uint8)
        batch = window.encode(game[pick], move[pick], symmetry, buffers)
        x = torch.from_numpy(batch["planes"]).to(device).float()
        z = torch.from_numpy(batch["value"]).to(device)
        target = torch.from_numpy(batch["policy"]).to(device)
        weight = torch.from_numpy(batch["policy_weight"]).to(device)
        frozen = self.tc.freeze_policy
        model.eval() if frozen else model.train()
        with autocast(device, self.tc.precision):
            logits, value = model(x)
        logits, value = logits.float(), value.float()
        value_loss = F.mse_loss(value, z)
        loss = self.tc.value_weight * value_loss
        policy_loss, acc = policy_terms(logits, target, weight)
        if not frozen:
            loss = loss + policy_loss
        with torch.no_grad():
            abs_error = (value - z).abs().mean()
        return batch_size, loss, {"policy_loss": policy_loss, "value_loss": value_loss,
                                  "policy_acc": acc, "value_abs_error": abs_error}
