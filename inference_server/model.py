"""The policy/value network: a residual tower named by blocks x channels (b6c64), a policy head
over every point plus pass, a value head in [-1, 1]. `build_model(config)` is the one
constructor.

Shapes: input float [B, planes, N, N] (0/1 feature planes); policy logits [B, N*N+1] (pass last);
value [B] in [-1, 1] from the side to move's point of view.
"""
from __future__ import annotations

import copy

import torch
from torch import nn
from torch.nn import functional as F

from fastgo.config import ModelConfig


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
    def __init__(self, channels, global_pool=False):
        super().__init__()
        self.conv1 = conv3x3(channels, channels)
        self.bn1 = nn.BatchNorm2d(channels)
        self.pool = GlobalPoolBias(channels) if global_pool else nn.Identity()
        self.conv2 = conv3x3(channels, channels)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.pool(y)
        y = self.bn2(self.conv2(y))
        return F.relu(x + y)


class PolicyValueNet(nn.Module):
    def __init__(self, config: ModelConfig):
        super().__init__()
        self.config = config
        n, c = config.board_size, config.channels
        self.stem = conv3x3(config.planes, c)
        self.stem_bn = nn.BatchNorm2d(c)
        every = config.global_pool_every
        self.blocks = nn.Sequential(*[
            ResidualBlock(c, global_pool=bool(every) and (i + 1) % every == 0)
            for i in range(config.blocks)])
        self.policy_conv = nn.Conv2d(c, config.policy_channels, 1, bias=False)
        self.policy_bn = nn.BatchNorm2d(config.policy_channels)
        self.policy_fc = nn.Linear(config.policy_channels * n * n, config.moves)
        self.value_conv = nn.Conv2d(c, config.value_channels, 1, bias=False)
        self.value_bn = nn.BatchNorm2d(config.value_channels)
        self.value_fc1 = nn.Linear(config.value_channels * n * n, config.value_hidden)
        self.value_fc2 = nn.Linear(config.value_hidden, 1)
        # Ownership (KataGo's auxiliary target): one 1x1 conv, tanh per point, side to move's view.
        self.ownership_conv = nn.Conv2d(c, 1, 1) if config.ownership_head else None

    def _heads(self, planes):
        x = F.relu(self.stem_bn(self.stem(planes)))
        x = self.blocks(x)
        p = F.relu(self.policy_bn(self.policy_conv(x)))
        logits = self.policy_fc(torch.flatten(p, 1))
        v = F.relu(self.value_bn(self.value_conv(x)))
        v = F.relu(self.value_fc1(torch.flatten(v, 1)))
        value = torch.tanh(self.value_fc2(v)).squeeze(1)
        return x, logits, value

    def forward(self, planes):
        """planes: float [B, P, N, N] -> (logits [B, N*N+1], value [B])."""
        _, logits, value = self._heads(planes)
        return logits, value

    def forward_train(self, planes):
        """-> (logits [B, N*N+1], value [B], ownership [B, N*N] in [-1, 1] or None)."""
        x, logits, value = self._heads(planes)
        ownership = None
        if self.ownership_conv is not None:
            ownership = torch.tanh(torch.flatten(self.ownership_conv(x), 1))
        return logits, value, ownership


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
        block.conv1, block.bn1 = fold(block.conv1, block.bn1), nn.Identity()
        block.conv2, block.bn2 = fold(block.conv2, block.bn2), nn.Identity()
    fused.policy_conv, fused.policy_bn = fold(fused.policy_conv, fused.policy_bn), nn.Identity()
    fused.value_conv, fused.value_bn = fold(fused.value_conv, fused.value_bn), nn.Identity()
    return fused


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
