"""A network that grows with the run: a larger tower (more blocks, more channels) that computes
exactly what the smaller one computes, so a run switches shape without losing strength.

Old weights are copied into the larger layers. New channels are computed as usual (fresh random
weights, batch norms at their initial values), but every weight through which a new channel
reaches an old one is zero: a convolution's or linear layer's old outputs read only old inputs
(the tower's and the heads' 1x1 convolutions, a global pooling bias's mean and max columns). The
old channels, and so every head, see exactly what they saw before, in training mode (batch
statistics) as in evaluation mode. Those zero weights are what the new channels learn through:
their gradient is (new activation) x (upstream gradient), nonzero from the first step.
A new residual block has its second batch norm switched off (gamma = beta = 0): it adds 0 to a
stream that is already >= 0 (ReLU), and its gamma's gradient is nonzero wherever the stream is.
"""
from __future__ import annotations

import dataclasses
import math

import torch
from torch import nn

from network.model import PolicyValueNet, build_model
from rundata.rundir import checkpoint_player, player_step


def shape_at(config, stages, step: int):
    """The model config a run with `stages` (TrainerConfig.grow_stages()) trains at `step`: the
    configured shape before the first stage, then each stage's blocks and channels from its
    step on."""
    blocks, channels = config.blocks, config.channels
    for at, b, c in stages:
        if step >= at:
            blocks, channels = b, c
    return dataclasses.replace(config, blocks=blocks, channels=channels)


def _switch_off(bn: nn.BatchNorm2d):
    with torch.no_grad():
        bn.weight.zero_()
        bn.bias.zero_()


def grow_model(model: PolicyValueNet, blocks: int, channels: int, *, seed: int = 0) -> PolicyValueNet:
    """A PolicyValueNet of `blocks` x `channels` (each at least the model's) computing what
    `model` computes (see the module): its old weights copied, its new parts switched off.
    The result is on the CPU, in training mode, in the default memory layout."""
    old_config = model.config
    if old_config.block != "residual":
        raise ValueError(f"cannot grow {old_config.name}: a network grows by residual blocks only")
    if blocks < old_config.blocks or channels < old_config.channels:
        raise ValueError(f"cannot grow {old_config.name} into b{blocks}c{channels}: a network only grows")
    config = dataclasses.replace(old_config, blocks=blocks, channels=channels)
    new = build_model(config, seed=seed)
    old_state = {k: v.detach().to("cpu") for k, v in model.state_dict().items()}
    c0 = old_config.channels
    new_state = new.state_dict()
    for name, tensor in old_state.items():
        if name not in new_state:
            raise ValueError(f"{name} of {old_config.name} has no place in {config.name}")
        target = new_state[name]
        if tensor.shape == target.shape:
            target.copy_(tensor)
        elif name.endswith("pool.linear.weight"):
            # input columns are [means of C channels | maxes of C channels]
            target[:c0] = 0.0
            target[:c0, :c0] = tensor[:, :c0]
            target[:c0, channels:channels + c0] = tensor[:, c0:]
        else:
            target[tuple(slice(0, n) for n in tensor.shape)] = tensor
            if tensor.dim() >= 2 and target.shape[1] > tensor.shape[1]:
                target[:tensor.shape[0], tensor.shape[1]:] = 0.0    # old outputs, new inputs
    new.load_state_dict(new_state)
    for block in list(new.blocks)[old_config.blocks:]:
        bn2 = block.bn2
        assert isinstance(bn2, nn.BatchNorm2d)      # built just now: no batch norm folded yet
        _switch_off(bn2)
    return new.train()


# -- growing when the curve flattens (trainer.grow_when_flat) ------------------------------------

def stopped_gaining(ratings, since_step: int, flat_steps: int, flat_elo: float,
                    min_recent: int = 2) -> str | None:
    """Why the evaluator's ratings say the shape trained since `since_step` stopped gaining, or
    None while they do not (yet) say so.

    ratings: {player: elo or [elo, low, high]} as in RUN/ratings.json; checkpoints are named as
    rundata.rundir.checkpoint_player names them. Among the checkpoints rated from
    `since_step` on, the recent ones are those of the last `flat_steps` steps up to the
    newest; the shape stopped gaining when at least `min_recent` are recent, at least one is
    older, and the best recent rating is less than `flat_elo` above the best older one. Best
    against best: one unlucky evaluation neither triggers nor hides a flat stretch."""
    rows = []
    for name, value in ratings.items():
        step = player_step(name)
        elo = value[0] if isinstance(value, (list, tuple)) and value else value
        if step is None or isinstance(elo, bool) or not isinstance(elo, (int, float)):
            continue
        if step >= since_step and math.isfinite(elo):
            rows.append((step, float(elo)))
    if not rows:
        return None
    newest = max(step for step, _ in rows)
    recent = [(elo, step) for step, elo in rows if step > newest - flat_steps]
    older = [(elo, step) for step, elo in rows if step <= newest - flat_steps]
    if len(recent) < min_recent or not older:
        return None
    (best_recent, at_recent), (best_older, at_older) = max(recent), max(older)
    gain = best_recent - best_older
    if gain >= flat_elo:
        return None
    return (f"the best checkpoint of the last {flat_steps} steps "
            f"({checkpoint_player(at_recent)}, Elo {best_recent:.0f}) is {gain:+.0f} Elo from "
            f"the best before them ({checkpoint_player(at_older)}, Elo {best_older:.0f}), less "
            f"than {flat_elo:g}")
