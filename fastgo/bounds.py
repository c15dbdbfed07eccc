"""The range of each quantity that configs, command lines and file readers all bound, defined
once: the config schema's `setting(min=, max=)` and the command line's option types
(fastgo_cli.parser) are built from these. Stdlib only, so that the config and the command
line need no compiled kernel.
"""
from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Bounds:
    """low..high, each end closed unless said open. A value of a float range is a finite float
    (nan and the infinities are outside every range); bool is no number here."""
    low: float
    high: float
    low_open: bool = False
    high_open: bool = False

    def __contains__(self, value) -> bool:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        if isinstance(value, float) and not math.isfinite(value):
            return False
        above = self.low < value if self.low_open else self.low <= value
        below = value < self.high if self.high_open else value <= self.high
        return above and below

    def __str__(self) -> str:
        """'0..2**63-1', '-1000..1000'; an interval with an open end as '[0, 1)'."""
        if self.low_open or self.high_open:
            return (f"{'(' if self.low_open else '['}{_shown(self.low)}, "
                    f"{_shown(self.high)}{')' if self.high_open else ']'}")
        return f"{_shown(self.low)}..{_shown(self.high)}"


def _shown(number) -> str:
    """A bound as people write it: 2**40 and 2**63-1 as powers of two, 1e6 without a '+'."""
    if isinstance(number, int):
        for k in (number, number + 1):
            if number >= 1 << 16 and k & (k - 1) == 0:
                return f"2**{k.bit_length() - 1}" + ("" if k == number else "-1")
        return str(number)
    text = f"{number:g}"
    return text.replace("e+0", "e").replace("e+", "e")


# The komi a game, a config, a shard and a checkpoint may hold: the shard format's bound, the
# tightest any reader needs (a record's score, at most rundata.records.MAX_SCORE points, is a
# board's area plus the komi), so that a game played at any komi a command takes can be recorded,
# imported and trained on.
KOMI = Bounds(-1000.0, 1000.0)
# A random seed: a non-negative int64. Every consumer takes it: the kernels' uint64 generators,
# numpy's default_rng, torch.manual_seed, a game record's int64 seed field; a training step or a
# side's offset added to it stays below 2**64.
SEED = Bounds(0, (1 << 63) - 1)
# Leaves one search adds to a network call per game or position (virtual loss between them).
LEAVES = Bounds(1, 256)
# Training steps one command runs (`fastgo train --steps`, a pretraining's cap).
STEPS = Bounds(0, 1 << 40)
