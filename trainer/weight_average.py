"""An exponential moving average of the trained weights (KataGo serves averaged weights): the
network that self-play, the evaluator and exported checkpoints use, beside the raw weights the
optimizer trains.

avg <- decay * avg + (1 - decay) * raw after every optimizer step, for every floating-point
parameter and batch-norm statistic; integer buffers (batch counters) are copied. With
`warmup` the decay starts low, min(decay, (1 + n) / (10 + n)) after n updates, so the first
checkpoints are not dominated by the untrained weights (the same ramp as TensorFlow's
ExponentialMovingAverage with num_updates).
"""
from __future__ import annotations

import copy

import torch


class WeightAverage:
    """The average of `model`'s state (a copy on the same device), updated by update()."""

    def __init__(self, model: torch.nn.Module, decay: float, *, warmup: bool = True):
        if not 0.0 < decay < 1.0:
            raise ValueError(f"decay must be in (0, 1), got {decay!r}")
        self.decay = float(decay)
        self.warmup = warmup
        self.updates = 0
        self.state = {k: v.detach().clone() for k, v in model.state_dict().items()}

    def current_decay(self) -> float:
        if not self.warmup:
            return self.decay
        return min(self.decay, (1.0 + self.updates) / (10.0 + self.updates))

    @torch.no_grad()
    def update(self, model: torch.nn.Module):
        decay = self.current_decay()
        for name, raw in model.state_dict().items():
            avg = self.state[name]
            if avg.is_floating_point():
                avg.mul_(decay).add_(raw.detach().to(avg.dtype), alpha=1.0 - decay)
            else:
                avg.copy_(raw)
        self.updates += 1

    def reset(self, model: torch.nn.Module):
        """Starts the average afresh at `model`'s weights (after the network changed shape)."""
        self.state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        self.updates = 0

    def state_dict(self) -> dict:
        return {"decay": self.decay, "updates": self.updates,
                "weights": {k: v.detach().to("cpu") for k, v in self.state.items()}}

    def load_state_dict(self, saved: dict):
        """Restores a saved average; ValueError when it does not fit the model's state."""
        weights = saved.get("weights")
        if not isinstance(weights, dict) or set(weights) != set(self.state):
            raise ValueError("the saved weight average does not match the network")
        for name, tensor in weights.items():
            if not isinstance(tensor, torch.Tensor) or tensor.shape != self.state[name].shape:
                raise ValueError(f"the saved weight average's {name} does not match the network")
        for name, tensor in weights.items():
            self.state[name].copy_(tensor)
        self.updates = int(saved.get("updates", 0))

    def averaged_model(self, model: torch.nn.Module) -> torch.nn.Module:
        """A copy of `model` holding the averaged weights (evaluation mode)."""
        out = copy.deepcopy(model)
        out.load_state_dict(self.state)
        return out.eval()
