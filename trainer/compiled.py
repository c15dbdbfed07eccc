"""trainer.compile: the trained network's training forward pass (forward_train) through
torch.compile (TorchInductor), with its backward, compiled once for the trainer's fixed batch
shape and precision.

The compile happens when the network is placed (start, resume, growth) on a warm-up batch of
zeros, so its cost (tens of seconds on a small CPU) is paid before the first step and any
failure (no C++ compiler, an operator inductor cannot lower) is seen at once: the trainer then
logs one warning and trains eagerly. The warm-up leaves no trace: the batch-norm statistics it
moved are put back and its gradients dropped.
"""
from __future__ import annotations

import logging

import torch

from network.model import PolicyValueNet

log = logging.getLogger(__name__)


class TrainView:
    """What an objective's loss trains: forward_train(x) through the compiled function when there
    is one, everything else (train(), eval(), __call__, parameters ...) the network's own."""

    def __init__(self, model: PolicyValueNet, forward_train=None):
        self.model = model
        self.compiled = forward_train is not None
        self._forward_train = forward_train or model.forward_train

    def forward_train(self, planes):
        return self._forward_train(planes)

    def __call__(self, *args, **kwargs):
        return self.model(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.model, name)


def _outputs_sum(outputs) -> torch.Tensor:
    means = [t.float().mean() for t in outputs if isinstance(t, torch.Tensor)]
    if not means:
        raise ValueError("forward_train returned no tensor")
    return sum(means[1:], means[0])


def compile_training(model: PolicyValueNet, example: torch.Tensor, precision_context) -> TrainView:
    """A TrainView of `model` whose forward_train is torch.compile'd for batches shaped like
    `example`, warmed up (forward and backward) under `precision_context()` (a context manager
    factory: the autocast the trainer's steps run under); the eager view when compiling fails."""
    buffers = {name: value.detach().clone() for name, value in model.named_buffers()}
    was_training = model.training
    try:
        compiled = torch.compile(model.forward_train, dynamic=False)
        model.train()
        with precision_context():
            outputs = compiled(example)
        _outputs_sum(outputs).backward()
    except Exception as err:                    # noqa: BLE001 - any compile failure: train eagerly
        reason = " ".join(str(err).split())[:300] or type(err).__name__
        log.warning("trainer.compile: torch.compile could not compile the training step (%s: "
                    "%s); training without it", type(err).__name__, reason)
        return TrainView(model)
    finally:
        with torch.no_grad():
            for name, value in model.named_buffers():
                if name in buffers:
                    value.copy_(buffers[name])
        for parameter in model.parameters():
            parameter.grad = None
        model.train(was_training)
    return TrainView(model, compiled)
