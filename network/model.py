"""The policy/value network: a residual tower named by blocks x channels (b6c64; b6c64nbt with
nested bottleneck blocks), a policy head over every point plus pass, a value head in [-1, 1].
`build_model(config)` is the one constructor.

Shapes: input float [B, planes, N, N] (0/1 feature planes); policy logits [B, N*N+1] (pass last);
value [B] in [-1, 1] from the side to move's point of view. The training-only auxiliary heads
(ownership, score, opponent's reply, soft policy) run in `forward_train` alone; `forward` is what
is served.
"""
from __future__ import annotations

import copy
from typing import NamedTuple

import torch
from torch import nn
from torch.nn import functional as F

from rundata.config import ModelConfig

SCORE_CHANNELS = 32    # channels of the score head's 1x1 convolution, pooled over the board


def conv3x3(cin, cout):
    return nn.Conv2d(cin, cout, 3, padding=1, bias=False)


class GlobalPoolBias(nn.Module):
    """KataGo-style global pooling: per-channel mean and max over the board -> a channel bias."""

    def __init__(self, channels):
        super().__init__()
        self.linear = nn.Linear(2 * channels, channels)

    def forward(self, x):
        pooled = torch.cat([x.mean(dim=(2, 3)), x.amax(dim=(2, 3))], dim=1)  # [B, 2C]
        return x + self.linear(pooled)[:, :, None, None]


class ResidualBlock(nn.Module):
    def __init__(self, channels: int, global_pool: bool = False) -> None:
        super().__init__()
        self.conv1 = conv3x3(channels, channels)
        self.bn1: nn.Module = nn.BatchNorm2d(channels)     # nn.Identity once folded (fuse_bn)
        self.pool = GlobalPoolBias(channels) if global_pool else nn.Identity()
        self.conv2 = conv3x3(channels, channels)
        self.bn2: nn.Module = nn.BatchNorm2d(channels)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.pool(y)
        y = self.bn2(self.conv2(y))
        return F.relu(x + y)

    def fold_batch_norms(self, fold):
        self.conv1, self.bn1 = fold(self.conv1, self.bn1), nn.Identity()
        self.conv2, self.bn2 = fold(self.conv2, self.bn2), nn.Identity()


class NestedBottleneckBlock(nn.Module):
    """KataGo's nested bottleneck block (its b18c384nbt networks): a 1x1 convolution down to half
    the channels, two residual blocks of two 3x3 convolutions at that width, a 1x1 convolution
    back up, added to the input. Four 3x3 convolutions deep where a ResidualBlock is two, for
    10 C^2 multiply-adds a point against 18 C^2 at the same width C. A global pooling bias, where
    the block has one, sits in the first inner block."""

    def __init__(self, channels: int, global_pool: bool = False) -> None:
        super().__init__()
        inner = max(1, channels // 2)
        self.reduce = nn.Conv2d(channels, inner, 1, bias=False)
        self.reduce_bn: nn.Module = nn.BatchNorm2d(inner)
        self.inner1 = ResidualBlock(inner, global_pool=global_pool)
        self.inner2 = ResidualBlock(inner)
        self.expand = nn.Conv2d(inner, channels, 1, bias=False)
        self.expand_bn: nn.Module = nn.BatchNorm2d(channels)

    def forward(self, x):
        y = F.relu(self.reduce_bn(self.reduce(x)))
        y = self.inner2(self.inner1(y))
        y = self.expand_bn(self.expand(y))
        return F.relu(x + y)

    def fold_batch_norms(self, fold):
        self.reduce, self.reduce_bn = fold(self.reduce, self.reduce_bn), nn.Identity()
        self.inner1.fold_batch_norms(fold)
        self.inner2.fold_batch_norms(fold)
        self.expand, self.expand_bn = fold(self.expand, self.expand_bn), nn.Identity()


BLOCKS = {"residual": ResidualBlock, "nested_bottleneck": NestedBottleneckBlock}


class TrainOutputs(NamedTuple):
    """forward_train's outputs; an auxiliary output is None when its head is off."""
    logits: torch.Tensor                       # [B, N*N+1], pass last
    value: torch.Tensor                        # [B] in [-1, 1], side to move's view
    ownership: torch.Tensor | None             # [B, N*N] in [-1, 1], +1 = the mover's
    score: torch.Tensor | None                 # [B] final score margin in points, mover's view
    opponent_policy: torch.Tensor | None       # [B, N*N+1] logits of the opponent's reply
    lead: torch.Tensor | None = None           # [B] the median final margin in points, mover's
                                               # view: KataGo's scoreLead (model.lead_head)
    soft_policy: torch.Tensor | None = None    # [B, N*N+1] logits of the soft policy target
                                               # (model.soft_policy_head)


class PolicyValueNet(nn.Module):
    def __init__(self, config: ModelConfig):
        super().__init__()
        self.config = config
        n, c = config.board_size, config.channels
        self.stem = conv3x3(config.planes, c)
        self.stem_bn: nn.Module = nn.BatchNorm2d(c)    # each batch norm nn.Identity once folded (fuse_bn)
        every = config.global_pool_every
        block = BLOCKS[config.block]
        self.blocks = nn.Sequential(*[
            block(c, global_pool=bool(every) and (i + 1) % every == 0)
            for i in range(config.blocks)])
        self.policy_conv = nn.Conv2d(c, config.policy_channels, 1, bias=False)
        self.policy_bn: nn.Module = nn.BatchNorm2d(config.policy_channels)
        self.policy_fc = nn.Linear(config.policy_channels * n * n, config.moves)
        self.value_conv = nn.Conv2d(c, config.value_channels, 1, bias=False)
        self.value_bn: nn.Module = nn.BatchNorm2d(config.value_channels)
        self.value_fc1 = nn.Linear(config.value_channels * n * n, config.value_hidden)
        self.value_fc2 = nn.Linear(config.value_hidden, 1)
        # Ownership (KataGo's auxiliary target): one 1x1 conv, tanh per point, side to move's view.
        self.ownership_conv = nn.Conv2d(c, 1, 1) if config.ownership_head else None
        # Score (KataGo's auxiliary target): 1x1 conv + batch norm, mean and max over the board,
        # MLP -> the margin / (N*N). The batch norm keeps the pooled features at unit scale, which
        # the unbounded regression needs to stay stable under SGD; the last layer starts at zero,
        # so an untrained net predicts an even game.
        self.score_conv: nn.Conv2d | None = None
        self.score_bn: nn.BatchNorm2d | None = None
        self.score_fc1: nn.Linear | None = None
        self.score_fc2: nn.Linear | None = None
        if config.score_head:
            self.score_conv = nn.Conv2d(c, SCORE_CHANNELS, 1, bias=False)
            self.score_bn = nn.BatchNorm2d(SCORE_CHANNELS)
            self.score_fc1 = nn.Linear(2 * SCORE_CHANNELS, config.value_hidden)
            self.score_fc2 = nn.Linear(config.value_hidden, 1)
            nn.init.zeros_(self.score_fc2.weight)
            nn.init.zeros_(self.score_fc2.bias)
        # The lead (KataGo's scoreLead, the points that would even the game): a second output on
        # the score head's hidden layer, trained on the absolute error (trainer.alphazero
        # lead_terms), so it learns the median final margin, whose sign is the sign of
        # P(win) - 1/2, where the score above learns the mean.
        self.lead_fc2: nn.Linear | None = None
        if config.score_head and config.lead_head:
            self.lead_fc2 = nn.Linear(config.value_hidden, 1)
            nn.init.zeros_(self.lead_fc2.weight)
            nn.init.zeros_(self.lead_fc2.bias)
        # The opponent's reply (KataGo): a second policy head of the same shape as the first.
        self.opponent_policy_conv: nn.Conv2d | None = None
        self.opponent_policy_bn: nn.BatchNorm2d | None = None
        self.opponent_policy_fc: nn.Linear | None = None
        if config.opponent_policy_head:
            self.opponent_policy_conv = nn.Conv2d(c, config.policy_channels, 1, bias=False)
            self.opponent_policy_bn = nn.BatchNorm2d(config.policy_channels)
            self.opponent_policy_fc = nn.Linear(config.policy_channels * n * n, config.moves)
        # The soft policy (KataGo's auxiliary soft policy target): a second output of the policy
        # head, on the same features as the served policy, trained on the policy target raised
        # to the power 1/4 (trainer.alphazero.soft_policy_target), which asks the shared layers
        # to rank the moves the search gave little weight to as well.
        self.soft_policy_fc: nn.Linear | None = None
        if config.soft_policy_head:
            self.soft_policy_fc = nn.Linear(config.policy_channels * n * n, config.moves)

    def _heads(self, planes):
        x = F.relu(self.stem_bn(self.stem(planes)))
        x = self.blocks(x)
        p = torch.flatten(F.relu(self.policy_bn(self.policy_conv(x))), 1)
        logits = self.policy_fc(p)
        v = F.relu(self.value_bn(self.value_conv(x)))
        v = F.relu(self.value_fc1(torch.flatten(v, 1)))
        value = torch.tanh(self.value_fc2(v)).squeeze(1)
        return x, p, logits, value

    def forward(self, planes):
        """planes: float [B, P, N, N] -> (logits [B, N*N+1], value [B])."""
        _, _, logits, value = self._heads(planes)
        return logits, value

    def forward_train(self, planes) -> TrainOutputs:
        """planes: float [B, P, N, N] -> TrainOutputs: the policy and value of forward() plus
        every auxiliary head the config has (None for the others)."""
        x, p, logits, value = self._heads(planes)
        ownership = score = lead = opponent = soft = None
        if self.ownership_conv is not None:
            ownership = torch.tanh(torch.flatten(self.ownership_conv(x), 1))
        if self.score_conv is not None:
            # the head's layers exist together (__init__)
            assert self.score_bn is not None and self.score_fc1 is not None and self.score_fc2 is not None
            y = F.relu(self.score_bn(self.score_conv(x)))
            pooled = torch.cat([y.mean(dim=(2, 3)), y.amax(dim=(2, 3))], dim=1)   # [B, 2S]
            area = self.config.board_size * self.config.board_size
            hidden = F.relu(self.score_fc1(pooled))
            score = self.score_fc2(hidden).squeeze(1) * area
            if self.lead_fc2 is not None:
                lead = self.lead_fc2(hidden).squeeze(1) * area
        if self.opponent_policy_conv is not None:
            assert self.opponent_policy_bn is not None and self.opponent_policy_fc is not None
            q = F.relu(self.opponent_policy_bn(self.opponent_policy_conv(x)))
            opponent = self.opponent_policy_fc(torch.flatten(q, 1))
        if self.soft_policy_fc is not None:
            soft = self.soft_policy_fc(p)
        return TrainOutputs(logits, value, ownership, score, opponent, lead, soft)


def build_model(config: ModelConfig, seed: int | None = None) -> PolicyValueNet:
    """A freshly initialised network; `seed` makes the weights reproducible."""
    if seed is None:
        return PolicyValueNet(config)
    state = torch.random.get_rng_state()
    try:
        torch.manual_seed(seed)
        return PolicyValueNet(config)
    finally:
        torch.random.set_rng_state(state)


def fuse_for_inference(model: PolicyValueNet) -> PolicyValueNet:
    """An eval-mode copy with each batch norm folded into the convolution before it.

    Outputs equal the eval-mode model's to float rounding (~1e-5 relative)."""
    fused = copy.deepcopy(model).eval()

    def fold(conv, bn):
        return torch.nn.utils.fusion.fuse_conv_bn_eval(conv, bn)

    fused.stem, fused.stem_bn = fold(fused.stem, fused.stem_bn), nn.Identity()
    for block in fused.blocks:
        assert isinstance(block, (ResidualBlock, NestedBottleneckBlock))
        block.fold_batch_norms(fold)
    fused.policy_conv, fused.policy_bn = fold(fused.policy_conv, fused.policy_bn), nn.Identity()
    fused.value_conv, fused.value_bn = fold(fused.value_conv, fused.value_bn), nn.Identity()
    return fused
