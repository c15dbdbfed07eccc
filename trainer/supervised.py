"""Supervised pretraining (`fastgo train --config C --sgf DIR_OR_FILES`): the first AlphaGo's
policy network, trained on game records to predict the move played.

The games are imported (trainer.sgf_import) into RUN/sgf_shards/, not RUN/shards/: the AlphaZero
trainer reads only shards/, so imported games never enter its window. A seeded fraction of the
GAMES is held out; the rest are sampled uniformly by position under a random symmetry through
fastgo.replay.encode_samples (no Python object per position). The policy head learns the move
played (cross-entropy); with `value` the value head learns the game's result and the ownership
head the final ownership where it is known (games that ended by passes). Every `log_every`
steps the held-out top-1 and top-5 move-prediction accuracy go to the log and metrics.csv.

The network, optimizer, checkpoint files and their place are the training core's
(trainer.training_core): checkpoints/ckpt-STEP.ckpt and latest.ckpt, so a later `fastgo train` or
`fastgo cluster` on the same run directory resumes from the pretrained network at its step.
The self-play trainer's counters in the checkpoint (samples, shards used) are carried over as
they were, so the self-play sample cap does not count supervised samples.
"""
from __future__ import annotations

import hashlib
import logging
import math
import time

import numpy as np
import torch
import torch.nn.functional as F

from fastgo.bounds import STEPS
from fastgo.replay import encode_samples
from rundata.shards import ShardError, read_shard
from trainer.metrics import SUPERVISED_FIELDS
from trainer.sgf_import import SgfInputError, import_sgf
from trainer.training_core import CoreView, TrainingCore, autocast
from trainer.window import batch_buffers
from trainer.window_trainer import window_state

log = logging.getLogger("fastgo.train")

MAX_HELDOUT_POSITIONS = 20_000       # positions evaluated every log_every steps (seeded subset)


class GameSet:
    """Verified GameRecords of one board size as the flat arrays encode_samples reads."""

    def __init__(self, games, size: int, komi: float, encoding: str):
        self.size, self.komi, self.encoding = size, komi, encoding
        nn = size * size
        lengths = np.array([len(g.moves) for g in games], dtype=np.int64)
        self.game_start = np.zeros(len(games) + 1, dtype=np.int64)
        np.cumsum(lengths, out=self.game_start[1:])

        def cat(parts, dtype):
            return (np.ascontiguousarray(np.concatenate(parts), dtype=dtype) if parts
                    else np.zeros(0, dtype))

        self.moves = cat([g.moves for g in games], np.int16)
        self.winner = np.array([g.winner for g in games], dtype=np.int8)
        self.ownership = (np.ascontiguousarray(np.stack([g.ownership for g in games]), dtype=np.int8)
                          if games else np.zeros((0, nn), np.int8))
        counts = cat([g.policy_count for g in games], np.int64)
        self.policy_start = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=self.policy_start[1:])
        self.policy_moves = cat([g.policy_moves for g in games], np.int16)
        self.policy_visits = cat([g.policy_visits for g in games], np.float32)
        self.full = cat([g.full for g in games], np.uint8)
        # [G] 1 where the final ownership is known (the game ended by passes or the move cap)
        self.ownership_known = np.array([g.end != "recorded" for g in games], dtype=np.float32)

    @property
    def games(self) -> int:
        return len(self.game_start) - 1

    @property
    def positions(self) -> int:
        return int(self.game_start[-1])

    def encode(self, game, move, symmetry, out: dict):
        """Rows 0 .. len(game) of `out` (Trainer buffers) <- position move[i] of game game[i]."""
        encode_samples(self.size, self.komi, self.encoding, self.moves, self.game_start,
                       self.winner, self.ownership, self.policy_start, self.policy_moves,
                       self.policy_visits, self.full,
                       np.ascontiguousarray(game, dtype=np.int32),
                       np.ascontiguousarray(move, dtype=np.int32),
                       np.ascontiguousarray(symmetry, dtype=np.uint8),
                       out["planes"], out["policy"], out["policy_weight"], out["value"],
                       out["ownership"])

    def sample(self, rng: np.random.Generator, out: dict):
        """Fills `out` with positions drawn uniformly, each under a random symmetry; returns the
        game index of each row."""
        batch = out["planes"].shape[0]
        position = rng.integers(0, self.positions, size=batch)
        game = np.searchsorted(self.game_start, position, side="right") - 1
        self.encode(game, position - self.game_start[game], rng.integers(0, 8, size=batch), out)
        return game

    def all_positions(self, limit: int, rng: np.random.Generator):
        """(game, move) of every position, or of `limit` of them drawn without replacement."""
        game = np.repeat(np.arange(self.games, dtype=np.int64), np.diff(self.game_start))
        move = np.arange(self.positions, dtype=np.int64) - self.game_start[game]
        if self.positions > limit:
            keep = np.sort(rng.choice(self.positions, size=limit, replace=False))
            game, move = game[keep], move[keep]
        return game, move


def split_games(games, holdout: float, seed: int):
    """(train, held out): games sorted by id, then a seeded choice of round(holdout * G) games
    (at least 1 when holdout > 0) held out."""
    games = sorted(games, key=lambda g: g.id)
    count = len(games)
    k = 0
    if holdout > 0:
        k = min(count - 1, max(1, int(round(holdout * count))))
    chosen = set(np.random.default_rng([seed, 0x5347]).permutation(count)[:k].tolist())
    train = [g for i, g in enumerate(games) if i not in chosen]
    held = [g for i, g in enumerate(games) if i in chosen]
    return train, held


class SupervisedTrainer(CoreView):
    """The training core (trainer.training_core) trained on game records: `train` to learn from,
    `heldout` (or None) to measure move prediction on, `value`: train the value and ownership
    heads too; `info` is stored with the checkpoints (what was trained on). sl_samples counts the
    training positions drawn, in total."""

    def __init__(self, config, run_dir, train: GameSet, heldout: GameSet | None, *,
                 value: bool = False, status=None, info: dict | None = None):
        tc, mc = config.trainer, config.model
        self.sl_train, self.sl_heldout, self.sl_value = train, heldout, value
        self.sl_info = dict(info or {})
        self.sl_samples = 0
        self.core = TrainingCore(config, run_dir, algorithm="supervised", status=status)
        self.carried = {}                       # the self-play trainer's counters, kept as found
        state = self.core.resume()
        if state is None:
            self.save_checkpoint()
        else:
            self.carried = state
            log.info("resumed at step %d", self.step)
        self.buffers = batch_buffers(mc.board_size, tc.batch_size, mc.planes)
        self.eval_buffers = batch_buffers(mc.board_size, tc.batch_size, mc.planes)
        self.sl_rng = np.random.default_rng([tc.seed, 0x53, self.step])
        self.heldout_index = None
        if heldout is not None and heldout.positions:
            self.heldout_index = heldout.all_positions(MAX_HELDOUT_POSITIONS,
                                                       np.random.default_rng([tc.seed, 0x48]))

    @property
    def quarantined(self) -> int:
        return int(self.carried.get("quarantined", 0))

    def trainer_state(self) -> dict:
        c = self.carried
        state = window_state(samples=c.get("samples", 0), used_shards=c.get("used_shards", []),
                             positions=c.get("positions", 0), games=c.get("games", 0),
                             quarantined=self.quarantined, step=self.step)
        state["supervised"] = {"samples": int(self.sl_samples), **self.sl_info}
        return state

    def save_checkpoint(self) -> str:
        return self.core.save_checkpoint(self.trainer_state())

    def sl_step(self) -> dict:
        """One step on a batch of training positions; returns its losses and top-1 accuracy."""
        game = self.sl_train.sample(self.sl_rng, self.buffers)
        batch, dev = self.buffers, self.device
        x = torch.from_numpy(batch["planes"]).to(dev, non_blocking=True).float()
        target = torch.from_numpy(batch["policy"]).to(dev)
        self.model.train()
        with autocast(dev, self.tc.precision):
            out = self.model.forward_train(x)
        logits, value, own = out.logits, out.value, out.ownership
        logits = logits.float()
        policy_loss = -(target * F.log_softmax(logits, dim=1)).sum(1).mean()
        loss = policy_loss
        value_loss = ownership_loss = torch.zeros((), device=dev)
        if self.sl_value:
            z = torch.from_numpy(batch["value"]).to(dev)
            value_loss = F.mse_loss(value.float(), z)
            loss = loss + self.tc.value_weight * value_loss
            if own is not None and self.tc.ownership_weight > 0:
                own_t = torch.from_numpy(batch["ownership"]).to(dev)
                w = torch.from_numpy(self.sl_train.ownership_known[game]).to(dev)
                per = ((own.float() - own_t) ** 2).mean(1)
                ownership_loss = (per * w).sum() / w.sum().clamp_min(1.0)
                loss = loss + self.tc.ownership_weight * ownership_loss
        self.optimizer.zero_grad(set_to_none=True)
        if torch.isfinite(loss.detach()):
            loss.backward()
        if not self.core.finite_step(loss):
            return {"loss": float(loss.detach()), "skipped": True}
        self.core.step += 1
        self.sl_samples += x.shape[0]
        with torch.no_grad():
            acc = (logits.argmax(1) == target.argmax(1)).float().mean().item()
        loss, policy_loss = loss.detach(), policy_loss.detach()
        value_loss, ownership_loss = value_loss.detach(), ownership_loss.detach()
        return {"loss": loss.item(), "policy_loss": policy_loss.item(),
                "value_loss": value_loss.item(), "ownership_loss": ownership_loss.item(),
                "policy_acc": acc}

    @torch.no_grad()
    def evaluate(self) -> dict:
        """Held-out move prediction (identity symmetry): top-1, top-5, cross-entropy, and the
        value head's mean squared error to the result."""
        if self.heldout_index is None:
            return {}
        assert self.sl_heldout is not None          # heldout_index was drawn from it
        game, move = self.heldout_index
        out, batch = self.eval_buffers, self.eval_buffers["planes"].shape[0]
        self.model.eval()
        top1 = top5 = 0
        ce = value_se = 0.0
        for start in range(0, len(game), batch):
            g, m = game[start:start + batch], move[start:start + batch]
            k = len(g)
            self.sl_heldout.encode(g, m, np.zeros(k, np.uint8), out)
            x = torch.from_numpy(out["planes"][:k]).to(self.device).float()
            logits, value = self.model(x)
            logits = logits.float()
            played = torch.from_numpy(out["policy"][:k]).to(self.device).argmax(1)
            top1 += int((logits.argmax(1) == played).sum())
            top5 += int((logits.topk(min(5, logits.shape[1]), dim=1).indices
                         == played[:, None]).any(1).sum())
            ce += float(F.cross_entropy(logits, played, reduction="sum"))
            z = torch.from_numpy(out["value"][:k]).to(self.device)
            value_se += float(((value.float() - z) ** 2).sum())
        n = len(game)
        return {"heldout_top1": top1 / n, "heldout_top5": top5 / n, "heldout_loss": ce / n,
                "heldout_value_mse": value_se / n, "heldout_positions": n}

    def write_sl_metrics(self, sums: dict, steps: int, elapsed: float, evaluation: dict) -> dict:
        """Appends a row of SUPERVISED_FIELDS (trainer.metrics) to metrics.csv; a file begun by
        another trainer gains the missing columns after its own. Here policy_acc is the training
        batches' top-1; the loss columns are empty on the row written before training, the
        held-out ones when nothing is held out. Not sent to TensorBoard."""
        def mean(key):
            return f"{sums[key] / steps:.5f}" if steps else ""

        row = {"step": self.step, "time": f"{time.time():.3f}",
               "positions": self.sl_train.positions, "games": self.sl_train.games,
               "window": self.sl_train.positions, "samples": self.sl_samples,
               "samples_per_s": f"{steps * self.tc.batch_size / max(elapsed, 1e-9):.1f}" if steps else "",
               "loss": mean("loss"), "policy_loss": mean("policy_loss"),
               "value_loss": mean("value_loss"), "ownership_loss": mean("ownership_loss"),
               "policy_acc": mean("policy_acc"),
               "heldout_value_mse": f"{evaluation['heldout_value_mse']:.5f}" if evaluation else "",
               "lr": self.optimizer.param_groups[0]["lr"], "version": self.step,
               "quarantined": self.quarantined, "phase": "supervised"}
        for key in ("heldout_top1", "heldout_top5", "heldout_loss"):
            row[key] = f"{evaluation[key]:.5f}" if evaluation else ""
        return self.core.write_metrics(SUPERVISED_FIELDS, row, scalars=False)

    def run_supervised(self, steps: int, *, log_every: int, seconds=None,
                       should_stop=lambda: False) -> dict:
        """Trains `steps` steps (fewer when `seconds` run out or should_stop()); evaluates and
        writes a metrics row before the first step and every `log_every` steps, a checkpoint
        every trainer.checkpoint_every steps and at the end. Returns the last evaluation."""
        deadline = None if seconds is None else time.monotonic() + seconds
        first = self.evaluate()
        self.write_sl_metrics({}, 0, 0.0, first)
        if first:
            log.info("step %d: held-out top-1 %.4f top-5 %.4f (%d positions) before training",
                     self.step, first["heldout_top1"], first["heldout_top5"],
                     first["heldout_positions"])
        last = first
        end = self.step + steps
        sums, count, t0 = _zero_sums(), 0, time.monotonic()
        while self.step < end and not should_stop():
            if deadline is not None and time.monotonic() >= deadline:
                break
            if self.status is not None:
                self.status.beat(self.status_fields)
            result = self.sl_step()
            if result.get("skipped"):            # non-finite: not a step (core.finite_step)
                continue
            for key, value in result.items():
                sums[key] += value
            count += 1
            if self.step % log_every == 0 or self.step == end:
                last = self._report(sums, count, time.monotonic() - t0)
                sums, count, t0 = _zero_sums(), 0, time.monotonic()
            if self.step % self.tc.checkpoint_every == 0:
                self.save_checkpoint()
        if count:
            last = self._report(sums, count, time.monotonic() - t0)
        if self.step != self.saved_step:
            self.save_checkpoint()
        return last

    def _report(self, sums, count, elapsed):
        evaluation = self.evaluate()
        row = self.write_sl_metrics(sums, count, elapsed, evaluation)
        log.info("step %d: loss %s (policy %s value %s ownership %s) train top-1 %s; held-out "
                 "top-1 %s top-5 %s loss %s; %s samples/s", self.step, row["loss"],
                 row["policy_loss"], row["value_loss"], row["ownership_loss"], row["policy_acc"],
                 row["heldout_top1"], row["heldout_top5"], row["heldout_loss"],
                 row["samples_per_s"])
        return evaluation

    def status_fields(self) -> dict:
        row = self.last_row
        return {"step": self.step, "samples": self.sl_samples, "phase": "supervised",
                "loss": row.get("loss"), "heldout_top1": row.get("heldout_top1"),
                "latest": self.saved_step}


def _zero_sums():
    return {"loss": 0.0, "policy_loss": 0.0, "value_loss": 0.0, "ownership_loss": 0.0,
            "policy_acc": 0.0}


def load_games(shards):
    games = []
    for path in shards:
        try:
            games.extend(read_shard(path).games)
        except ShardError as err:       # just written by this process: a disk problem
            raise SgfInputError(f"imported shard unreadable: {err}") from None
    return games


def pretrain(config, run_dir, paths, *, holdout=0.1, epochs=None, steps=None, value=False,
             log_every=None, seconds=None, should_stop=lambda: False, status=None,
             out=print) -> dict:
    """Imports `paths` and trains; returns {'report', 'trainer', 'evaluation', 'steps'}.
    Raises SgfInputError when no game is usable or holdout leaves nothing to train on."""
    mc = config.model
    report, shards = import_sgf(paths, run_dir.sgf_shards,
                                size=mc.board_size, default_komi=config.selfplay.komi)
    summary = report.summary()
    log.info("SGF import: %s", summary)
    out(f"fastgo train: {summary}")
    if report.used == 0:
        raise SgfInputError("no usable games in the SGF input")
    games = load_games(shards)
    if holdout > 0 and len(games) < 2:
        raise SgfInputError(f"--holdout {holdout}: {len(games)} usable game, need at least 2")
    train_games, held_games = split_games(games, holdout, config.trainer.seed)
    train = GameSet(train_games, mc.board_size, config.selfplay.komi, mc.encoding)
    heldout = GameSet(held_games, mc.board_size, config.selfplay.komi, mc.encoding) \
        if held_games else None
    batch = config.trainer.batch_size
    if steps is None:
        steps = max(1, math.ceil((1.0 if epochs is None else epochs) * train.positions / batch))
    steps = min(steps, STEPS.high)
    held_hash = hashlib.sha256("".join(sorted(g.id for g in held_games)).encode()).hexdigest()
    info = {"train_games": train.games, "train_positions": train.positions,
            "heldout_games": len(held_games), "heldout_hash": held_hash[:32],
            "holdout": float(holdout), "value": bool(value)}
    trainer = SupervisedTrainer(config, run_dir, train, heldout, value=value, status=status,
                                info=info)
    log_every = log_every or config.trainer.checkpoint_every
    log.info("supervised training %s on %s from step %d: %d steps of %d, %d games (%d positions) "
             "to train, %d held out", mc.name, trainer.device, trainer.step, steps, batch,
             train.games, train.positions, len(held_games))
    evaluation = trainer.run_supervised(steps, log_every=log_every, seconds=seconds,
                                        should_stop=should_stop)
    return {"report": report, "trainer": trainer, "evaluation": evaluation, "steps": steps}
