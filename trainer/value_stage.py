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

from trainer.loop import Trainer, _Null

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


class ValueTrainer(Trainer):

    algorithm = "value"
    def _make_optimizer(self):
        freeze = self.tc.freeze_policy
        for name, param in self.model.named_parameters():
            param.requires_grad_(is_value_head(name) or not freeze)
        params = [p for p in self.model.parameters() if p.requires_grad]
        if self.tc.optimizer == "adamw":
            return torch.optim.AdamW(params, lr=self.tc.lr, weight_decay=self.tc.weight_decay)
        return torch.optim.SGD(params, lr=self.tc.lr, momentum=self.tc.momentum,
                               weight_decay=self.tc.weight_decay, nesterov=self.tc.momentum > 0)

    def _chosen(self):
        """Window game and move of every chosen position, in window order."""
        cache = getattr(self, "_choice_cache", {})
        games, moves, offset = [], [], 0
        fresh = {}
        for block in self.window.blocks:
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

    def allowed_samples(self) -> float:
        chosen = self.window.total_games * self.tc.positions_per_game
        if chosen < self.tc.min_positions:
            return 0
        return self.tc.samples_per_position * chosen

    def train_step(self):
        game, move = self._chosen()
        if len(game) == 0:
            raise ValueError("no positions to train on")
        batch_size = self.buffers["planes"].shape[0]
        pick = self.rng.integers(0, len(game), size=batch_size)
        symmetry = self.rng.integers(0, 8, size=batch_size).astype(np.uint8)
        batch = self.window.encode(game[pick], move[pick], symmetry, self.buffers)
        dev = self.device
        x = torch.from_numpy(batch["planes"]).to(dev).float()
        z = torch.from_numpy(batch["value"]).to(dev)
        target = torch.from_numpy(batch["policy"]).to(dev)
        weight = torch.from_numpy(batch["policy_weight"]).to(dev)
        frozen = self.tc.freeze_policy
        self.model.eval() if frozen else self.model.train()
        autocast = torch.autocast("cuda", dtype=torch.bfloat16) if dev.type == "cuda" else _Null()
        with autocast:
            logits, value = self.model(x)
        logits, value = logits.float(), value.float()
        value_loss = F.mse_loss(value, z)
        loss = self.tc.value_weight * value_loss
        log_p = F.log_softmax(logits, dim=1)
        wsum = weight.sum().clamp_min(1.0)
        policy_loss = -((target * log_p).sum(1) * weight).sum() / wsum
        if not frozen:
            loss = loss + policy_loss
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        self.step += 1
        self.samples += batch_size
        with torch.no_grad():
            hit = (logits.argmax(1) == target.argmax(1)).float()
            s = self._sums
            s["loss"] += float(loss)
            s["policy_loss"] += float(policy_loss)
            s["value_loss"] += float(value_loss)
            s["policy_acc"] += float((hit * weight).sum() / wsum)
            s["value_error"] += float((value - z).abs().mean())
            s["steps"] += 1
            s["samples"] += batch_size
        return float(loss.detach())
