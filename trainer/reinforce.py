"""The REINFORCE update (AlphaGo's policy-gradient stage): for the n games of a mini-batch,

    loss = -(1/n) * sum_g sum_{t in learner's moves of g} log pi(a_t | s_t) * (z_t - b_t)
           + value_weight * (1/T) * sum_t (v(s_t) - z_t)^2        (only when baseline = "value")
           + mask_weight * (1/n) * sum_t -log P(acceptable | s_t)

z_t is the game's result from the mover's view (+1 won, -1 lost, 0 draw): for a learner that
played one colour it is the game's z_g. b_t (trainer.baseline) is 0 ("zero"), the value head's
prediction at s_t, detached ("value"), or the learner's mean result over the mini-batch's games
("mean"). T counts the learner's positions of the mini-batch. The learner's moves are the ones
recorded with full = 1; the opponent's (full = 0) contribute nothing.

log pi is clipped below at log(floor) (selfplay.policy_floor, the least probability the workers
give any acceptable move): a move drawn only thanks to the floor carries no gradient, and the
loss is bounded below.

pi is the network's softmax over the ACCEPTABLE moves of s_t only, the moves the workers could
sample (fastgo.policy_play.acceptable_masks, the sampler's own rule: legal, not the mover's own
eye, the pass only under selfplay.policy_pass_rule = "free" or when nothing else is acceptable; a
played move outside it, the pass the sampler falls back to when positional superko strikes every
acceptable move, is added to its row): the other logits are set to -inf before log_softmax, so they
get exactly zero gradient. P(acceptable | s_t) is the softmax over ALL moves summed over the
acceptable ones: the mask term pushes only probability off the moves the sampler never plays,
summed per game like the policy term. Positions are rebuilt from the moves by
fastgo.replay.encode_samples under the identity symmetry, so a_t is the move as recorded.

BatchNorm (trainer.reinforce_batchnorm). "batch": pi is evaluated in training mode, each chunk
normalised by its own statistics, and the running statistics the server uses follow the weights
by momentum. "recalibrate": pi is the served function (running statistics), and after the step
the running statistics are re-estimated on the mini-batch's positions for the new weights.

The measurements behind each of these choices: docs/experiments/reinforce.md. `reinforce_loss`
is pure (tensors in, tensors out); `reinforce_step` applies one update to a model.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from fastgo.policy_play import acceptable_masks
from trainer.window import Block, ReplayWindow

BASELINES = ("zero", "value", "mean")
BATCHNORM = ("batch", "recalibrate")


@dataclass
class LearnerBatch:
    """The learner's positions of a mini-batch of games, one row per position."""
    planes: np.ndarray           # uint8 [T, P, N, N]
    action: np.ndarray           # int64 [T], the move played (pass = N*N)
    mask: np.ndarray             # bool [T, N*N+1]: the moves the sampler could draw at s_t
    z: np.ndarray                # float32 [T], the result from the mover's view
    game: np.ndarray             # int32 [T], the game (0..n-1) each position comes from
    games: int                   # n: games in the mini-batch (with or without learner moves)
    learner_result: np.ndarray   # float32 [n]: +1 / -1 / 0 for the learner; nan when the
                                 # learner played both colours or no move


def learner_batch(block: Block, size: int, komi: float, encoding: str, planes: int, *,
                  allow_pass: bool = False) -> LearnerBatch:
    """Rebuilds the positions of every move with full = 1 in `block` (identity symmetry) and
    their acceptable-move masks (allow_pass: selfplay.policy_pass_rule = "free", as the workers
    sampled)."""
    window = ReplayWindow(size, komi, encoding, window="fixed", window_size=1 << 62)
    window.add(block)
    flat = window.flat()
    start = flat["game_start"]
    learner = np.flatnonzero(flat["full"][:block.positions] == 1)
    game = (np.searchsorted(start, learner, side="right") - 1).astype(np.int32)
    move = (learner - start[game]).astype(np.int32)
    out = window.batch_buffers(len(learner), planes)
    mask = np.zeros((len(learner), size * size + 1), np.uint8)
    action = flat["moves"][learner].astype(np.int64)
    if len(learner):
        window.encode(game, move, np.zeros(len(learner), np.uint8), out)
        acceptable_masks(size, komi, flat["moves"], start, game, move, mask,
                         allow_pass=allow_pass)
        mask[np.arange(len(learner)), action] = 1
    z = out["value"].copy()
    # The learner's result per game: the mover's z of its moves when they all have one colour.
    result = np.full(block.games, np.nan, dtype=np.float32)
    parity = move & 1
    for g in range(block.games):
        rows = np.flatnonzero(game == g)
        if len(rows) and np.all(parity[rows] == parity[rows[0]]):
            result[g] = z[rows[0]]
    return LearnerBatch(planes=out["planes"], action=action, mask=mask.view(np.bool_), z=z,
                        game=game, games=block.games, learner_result=result)


def reinforce_loss(logits, value, action, z, mask, *, n_games: int, n_positions: int,
                   baseline: str = "zero", value_weight: float = 1.0, floor: float = 0.0,
                   mask_weight: float = 0.0, mean: float = 0.0):
    """The mini-batch loss of the rows given (a chunk of the mini-batch: the sums are divided by
    the whole mini-batch's n_games and n_positions, so chunk losses add up to the loss).

    logits [B, N*N+1], value [B], action int64 [B], z float [B], mask bool [B, N*N+1] (the
    acceptable moves; each row's action among them). log pi is the log_softmax of the logits
    with the masked ones at -inf: masked logits get exactly zero gradient from it. Returns (loss,
    policy_loss, value_loss, mask_loss) as tensors; value_loss is 0 unless baseline = "value".
    log pi below log(floor) counts as log(floor) (no gradient); floor = 0: no clip. mask_loss is
    the sum of -log P(acceptable) = logsumexp(all logits) - logsumexp(acceptable logits) over
    the rows, divided by n_games, weighted by mask_weight in the loss. baseline "mean": b is
    `mean`, the learner's mean result over the whole mini-batch (reinforce_step computes it)."""
    if baseline not in BASELINES:
        raise ValueError(f"baseline must be one of {BASELINES}, got {baseline!r}")
    if n_games < 1 or n_positions < 1:
        raise ValueError("n_games and n_positions must be >= 1")
    mask = mask.bool()
    if mask.shape != logits.shape:
        raise ValueError(f"mask: need shape {tuple(logits.shape)}, got {tuple(mask.shape)}")
    if not bool(mask.gather(1, action.view(-1, 1)).all()):
        raise ValueError("mask: a played move is outside its row's acceptable moves")
    logits = logits.float()
    masked = logits.masked_fill(~mask, float("-inf"))
    log_acceptable = torch.logsumexp(masked, 1)           # the normaliser over acceptable moves
    log_p = masked.gather(1, action.view(-1, 1)).squeeze(1) - log_acceptable
    mask_loss = (torch.logsumexp(logits, 1) - log_acceptable).sum() / n_games
    if floor > 0:
        log_p = torch.clamp(log_p, min=math.log(floor))
    value = value.float()
    b = _baseline(baseline, value, z, mean)
    policy_loss = -(log_p * (z - b)).sum() / n_games
    if baseline == "value":
        value_loss = ((value - z) ** 2).sum() / n_positions
    else:
        value_loss = torch.zeros((), device=logits.device)
    loss = policy_loss + value_weight * value_loss
    if mask_weight:
        loss = loss + mask_weight * mask_loss
    return loss, policy_loss, value_loss, mask_loss


def reinforce_step(model, optimizer, batch: LearnerBatch, *, baseline: str, value_weight: float,
                   floor: float = 0.0, mask_weight: float = 0.0, chunk: int = 512, device=None,
                   should_stop=None, batchnorm: str = "batch", step=None) -> dict | None:
    """One update on a mini-batch (gradients accumulated over chunks of at most `chunk`
    positions, of equal size, one optimizer step). Returns the loss terms, the mean advantage
    z - b and "kl": the mean KL(before || after) of the policy over the acceptable moves on the
    first chunk's positions, both evaluated the way the gradient was ("batch": training mode,
    the weights' change alone; "recalibrate": the served network, statistics re-estimated).
    None, with the model untouched, when should_stop() turns true between chunks.
    batchnorm: "batch" (training mode, see the top) or "recalibrate" (the gradient of the
    served function, running statistics held; after the step they are re-estimated on the
    mini-batch's positions for the new weights).
    step(loss) -> bool, when given, takes the place of optimizer.step(): it gets the mini-batch's
    loss (0-d tensor, the chunks' sum; the first non-finite chunk's loss, the later chunks not
    evaluated) with the gradients accumulated, and says whether it stepped
    (trainer.training_core.TrainingCore.finite_step: not when the loss or a gradient is non-finite). When
    it did not, the model is as it was, running statistics included, and the terms come back
    with "skipped": True and "kl" 0."""
    if batchnorm not in BATCHNORM:
        raise ValueError(f"batchnorm must be one of {BATCHNORM}, got {batchnorm!r}")
    device = device or next(model.parameters()).device
    count = len(batch.action)
    terms = {"loss": 0.0, "policy_loss": 0.0, "value_loss": 0.0, "mask_loss": 0.0,
             "advantage": 0.0, "kl": 0.0, "positions": count}
    optimizer.zero_grad(set_to_none=True)
    if count == 0:
        return terms
    decided = batch.learner_result[~np.isnan(batch.learner_result)]
    mean = float(decided.mean()) if len(decided) else 0.0
    batch_mode = batchnorm == "batch"
    # "batch": batch statistics, the running ones follow (see the top), restored if stopped;
    # "recalibrate": the running statistics, the served function (the forward leaves them).
    model.train(batch_mode)
    buffers = _buffers(model) if batch_mode else None
    # Chunks of equal size (at most `chunk`): no small last chunk with noisy statistics.
    bounds = np.linspace(0, count, -(-count // chunk) + 1).round().astype(np.int64)
    total = torch.zeros((), device=device)
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        if should_stop is not None and should_stop():
            optimizer.zero_grad(set_to_none=True)
            if buffers is not None:
                _restore(model, buffers)         # the running statistics as they were
            return None
        x = torch.from_numpy(batch.planes[lo:hi]).to(device).float()
        action = torch.from_numpy(batch.action[lo:hi]).to(device)
        mask = torch.from_numpy(batch.mask[lo:hi]).to(device)
        z = torch.from_numpy(batch.z[lo:hi]).to(device)
        logits, value = model(x)
        if lo == 0:
            probe = (x, mask, masked_log_softmax(logits.detach(), mask))
        loss, policy_loss, value_loss, mask_loss = reinforce_loss(
            logits, value, action, z, mask, n_games=max(1, batch.games), n_positions=count,
            baseline=baseline, value_weight=value_weight, floor=floor, mask_weight=mask_weight,
            mean=mean)
        if step is not None and not bool(torch.isfinite(loss.detach())):
            total = loss.detach().float()            # the batch is skipped: no need for the rest
            break
        total = total + loss.detach().float()
        loss.backward()
        terms["loss"] += float(loss.detach())
        terms["policy_loss"] += float(policy_loss.detach())
        terms["value_loss"] += float(value_loss.detach())
        terms["mask_loss"] += float(mask_loss.detach())
        terms["advantage"] += float((z - _baseline(baseline, value.float(), z, mean)).sum()) / count
    if step is None:
        optimizer.step()
    else:
        try:
            stepped = step(total)
        except BaseException:
            if buffers is not None:
                _restore(model, buffers)
            raise
        if not stepped:
            if buffers is not None:
                _restore(model, buffers)         # a NaN batch leaves no trace in the statistics
            terms.update(loss=float(total), skipped=True)
            return terms
    x, mask, before = probe
    if not batch_mode:
        _recalibrate(model, batch.planes, bounds, device)
        model.eval()             # the KL below: the served policy before and after
    running = _buffers(model) if batch_mode else None
    with torch.no_grad():
        after = masked_log_softmax(model(x)[0], mask)
        if running is not None:
            _restore(model, running)             # the probe leaves no trace in the statistics
        p = before.exp()
        terms["kl"] = float((p * (before - after)).masked_fill(~mask, 0.0).sum(1).mean())
    return terms


def _buffers(model):
    return {name: b.detach().clone() for name, b in model.named_buffers()}


def _restore(model, buffers):
    with torch.no_grad():
        for name, b in model.named_buffers():
            b.copy_(buffers[name])


def _recalibrate(model, planes, bounds, device):
    """Sets every BatchNorm's running statistics to the average over the chunks [bounds[i],
    bounds[i+1]) of `planes` of each chunk's mean and variance under the model's current weights
    (torch's cumulative average, momentum None)."""
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    saved = [m.momentum for m in norms]
    with torch.no_grad():
        for m in norms:
            m.reset_running_stats()
            m.momentum = None
        model.train()
        for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
            model(torch.from_numpy(planes[lo:hi]).to(device).float())
        for m, momentum in zip(norms, saved):
            m.momentum = momentum


def _baseline(baseline, value, z, mean):
    if baseline == "value":
        return value.detach()
    return torch.full_like(z, mean) if baseline == "mean" else torch.zeros_like(z)


def masked_log_softmax(logits, mask):
    """log pi over the acceptable moves (the others -inf), float32."""
    return F.log_softmax(logits.float().masked_fill(~mask, float("-inf")), dim=1)


def adapt_lr(lr: float, kl: float, target: float, lr_max: float, lr_min: float) -> float:
    """The next update's learning rate for a KL target (0 = off: lr_max). KL grows about with
    the square of the step, so a KL above 2 * target scales lr by sqrt(target / kl) (at least
    1/10), one below target / 2 by 1.5; the result stays in [lr_min, lr_max]."""
    if target <= 0:
        return lr_max
    if kl > 2 * target:
        lr *= max(0.1, math.sqrt(target / kl))
    elif kl < target / 2:
        lr *= 1.5
    return min(lr_max, max(lr_min, lr))
