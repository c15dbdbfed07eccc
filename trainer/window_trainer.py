"""The trainer over the replay window (`fastgo train` with trainer.algorithm "alphazero" or
"value"): reads shards as they appear, keeps the replay window (trainer.window), and trains the
network with its objective's loss step (trainer.alphazero, trainer.value_stage); every
trainer.checkpoint_every steps it appends a metrics.csv row and writes, points latest.ckpt at
and publishes a checkpoint (trainer.training_core).

Restarted on the same run directory it resumes from latest.ckpt: weights, optimizer state,
step, the shards it has used and the sample counters (all inside the checkpoint, so they are
replaced together, atomically); the window is refilled from the shards it had used.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Protocol

import numpy as np
import torch

from rundata.ending_stats import EndingStats
from rundata.shards import ShardError, read_shard
from trainer.intake import ShardIntake
from trainer.training_core import CoreView, TrainingCore
from trainer.window import ReplayWindow, block_from_shard

log = logging.getLogger("fastgo.train")


class WindowObjective(Protocol):
    """One algorithm's data and loss step over the replay window."""

    algorithm: str                      # written into each checkpoint
    fields: tuple                       # metrics.csv columns of its rows (trainer.metrics)
    terms: tuple                        # the columns averaged over the steps of a row; "loss" first
    trainable: Callable[[str], bool] | None   # parameters the optimizer trains (None: all)

    def allowed_samples(self, window: ReplayWindow) -> float:
        """Training samples the data taken in so far allows (0 before enough of it)."""

    def loss(self, model, window: ReplayWindow, rng: np.random.Generator, buffers: dict,
             device: torch.device) -> tuple:
        """Draws one batch (into `buffers`, from window.batch_buffers) and returns (rows, loss,
        terms): the batch's row count, the scalar loss tensor to minimize, and a float tensor for
        each of `terms` but "loss" (a term left out counts 0)."""


def window_state(*, samples, used_shards, positions, games, quarantined, step) -> dict:
    """The trainer state a window trainer's checkpoint carries (see WindowTrainer)."""
    return {"samples": int(samples), "used_shards": sorted(used_shards),
            "positions": int(positions), "games": int(games), "quarantined": int(quarantined),
            "rng_seed_offset": int(step)}


class WindowTrainer(CoreView):
    """samples: training samples drawn so far (each step draws trainer.batch_size); used_shards:
    names of the shards taken into the window; the sampling stream is seeded by trainer.seed and
    the step it resumed at."""

    def __init__(self, config, run_dir, objective: WindowObjective, *, publisher=None,
                 status=None):
        tc, mc = config.trainer, config.model
        self.objective = objective
        self.core = TrainingCore(config, run_dir, algorithm=objective.algorithm,
                                 publisher=publisher, status=status,
                                 trainable=objective.trainable)
        self.window = ReplayWindow(mc.board_size, config.selfplay.komi, mc.encoding,
                                   window=tc.window, window_size=tc.window_size,
                                   alpha=tc.window_alpha, beta=tc.window_beta,
                                   q_weight=tc.value_q_weight, window_max=tc.window_max,
                                   surprise_weight=tc.surprise_weight)
        self.intake = ShardIntake(run_dir, mc.board_size, config.selfplay.komi,
                                  kept_bytes=tc.shards_kept_mb << 20)
        self.endings = EndingStats()       # how the games taken in lately ended
        self.samples = 0
        self.used_shards: set[str] = set()
        self.rng = np.random.default_rng(tc.seed)
        self.buffers = self.window.batch_buffers(tc.batch_size, mc.planes)
        self._sums = self._fresh_sums()
        self._last_wait_log = 0.0
        state = self.core.resume()
        if state is None:
            self.save_checkpoint()              # step 0: the untrained network, served at once
        else:
            self._restore(state)

    @property
    def quarantined(self) -> int:
        return self.intake.quarantined

    # -- state ----------------------------------------------------------------------------------

    def _restore(self, state):
        self.samples = int(state.get("samples", 0))
        self.used_shards = set(state.get("used_shards", []))
        self.intake.quarantined = int(state.get("quarantined", 0))
        self.rng = np.random.default_rng([self.tc.seed, int(state.get("rng_seed_offset", 0))])
        self._refill_window(state)
        log.info("resumed at step %d: %d samples trained, %d shards used, window %d positions",
                 self.step, self.samples, len(self.used_shards), self.window.positions)

    def _refill_window(self, state):
        # Refill the window from the shards already used, newest first, without counting them.
        self.window.total_positions = int(state.get("positions", 0))
        self.window.total_games = int(state.get("games", 0))
        names = [n for n in self.intake.names() if n in self.used_shards]
        blocks, kept = [], 0
        for name in reversed(names):
            if kept >= self.window.target_size():
                break
            try:
                block = block_from_shard(read_shard(self.intake.path(name)), name)
            except ShardError as err:
                self.intake.quarantine(self.intake.path(name), str(err))
                continue
            blocks.append(block)
            kept += block.positions
        for block in reversed(blocks):
            self.window.add(block, count=False)

    def trainer_state(self) -> dict:
        return window_state(samples=self.samples, used_shards=self.used_shards,
                            positions=self.window.total_positions,
                            games=self.window.total_games, quarantined=self.quarantined,
                            step=self.step)

    def save_checkpoint(self) -> str:
        return self.core.save_checkpoint(self.trainer_state())

    # -- shards ---------------------------------------------------------------------------------

    def ingest(self) -> int:
        """Reads every new shard into the window; bad ones go to quarantine. Returns the number
        of positions added."""
        added = 0
        for name in self.intake.names():
            if name in self.used_shards:
                continue
            shard = self.intake.read(name)
            if shard is None:
                continue
            duplicates = {g.id for g in shard.games} & self.window.ids
            if duplicates:
                log.warning("%s: %d game(s) already in the window, skipped", name, len(duplicates))
            block = block_from_shard(shard, name, skip_ids=duplicates)
            self.endings.add_games(g for g in shard.games if g.id not in duplicates)
            self.window.add(block)
            self.used_shards.add(name)
            added += block.positions
        if added:
            held = {block.name for block in self.window.blocks}
            self.used_shards.difference_update(self.intake.prune(self.used_shards, held))
        return added

    # -- training -------------------------------------------------------------------------------

    def allowed_samples(self) -> float:
        return self.objective.allowed_samples(self.window)

    def _fresh_sums(self):
        sums = dict.fromkeys(self.objective.terms, 0.0)
        sums.update(steps=0, samples=0, t0=time.monotonic())
        return sums

    def train_step(self) -> float:
        """One optimizer step on one batch; returns its loss."""
        rows, loss, terms = self.objective.loss(self.core.train_view, self.window, self.rng,
                                                self.buffers, self.device)
        self.optimizer.zero_grad(set_to_none=True)
        if torch.isfinite(loss.detach()):
            loss.backward()
        if not self.core.finite_step(loss):
            return float(loss.detach())
        self.core.step += 1
        self.samples += rows
        with torch.no_grad():
            s = self._sums
            s["loss"] += float(loss.detach())
            for name, value in terms.items():
                s[name] += float(value.detach())
            s["steps"] += 1
            s["samples"] += rows
        return float(loss.detach())

    def write_metrics(self) -> dict:
        s = self._sums
        steps = max(1, s["steps"])
        elapsed = max(1e-9, time.monotonic() - s["t0"])
        row = {
            "step": self.step, "time": f"{time.time():.3f}",
            "positions": self.window.total_positions, "games": self.window.total_games,
            "window": self.window.positions, "samples": self.samples,
            "samples_per_s": f"{s['samples'] / elapsed:.1f}",
            **{k: f"{s[k] / steps:.5f}" for k in self.objective.terms},
            "lr": self.optimizer.param_groups[0]["lr"], "version": self.step,
            "quarantined": self.quarantined,
        }
        self.core.write_metrics(self.objective.fields, row)
        self._sums = self._fresh_sums()
        return row

    def status_fields(self) -> dict:
        row = self.last_row
        return {"step": self.step, "samples": self.samples, "positions": self.window.total_positions,
                "games": self.window.total_games, "loss": row.get("loss"),
                "policy_acc": row.get("policy_acc"), "latest": self.saved_step,
                "endings": self.endings.summary(),
                "waiting": self.samples + self.tc.batch_size > self.allowed_samples()}

    # -- the loop -------------------------------------------------------------------------------

    def run(self, *, max_steps=None, seconds=None, should_stop=lambda: False):
        """Trains until should_stop(), `max_steps` total steps or `seconds`; the last
        checkpoint is written before returning."""
        deadline = None if seconds is None else time.monotonic() + seconds
        next_poll = 0.0
        last_saved = self.step
        while not should_stop() and self.core.going(self.status_fields, max_steps, deadline):
            now = time.monotonic()
            if now >= next_poll:
                self.ingest()
                next_poll = now + self.tc.poll_s
            if self.window.positions == 0 or self.samples + self.tc.batch_size > self.allowed_samples():
                if now - self._last_wait_log > 30:
                    log.info("waiting for self-play: %d positions, %d samples trained "
                             "(cap %.1f per position, %d positions before the first step)",
                             self.window.total_positions, self.samples,
                             self.tc.samples_per_position, self.tc.min_positions)
                    self._last_wait_log = now
                time.sleep(min(self.tc.poll_s, 0.2))
                next_poll = 0.0
                continue
            self.train_step()
            if self.step % self.tc.checkpoint_every == 0:
                row = self.write_metrics()
                self.save_checkpoint()
                last_saved = self.step
                log.info("step %d: loss %s (policy %s value %s ownership %s) acc %s, %s samples/s, "
                         "window %d positions", self.step, row["loss"], row["policy_loss"],
                         row["value_loss"], row["ownership_loss"], row["policy_acc"],
                         row["samples_per_s"], self.window.positions)
        if self.step != last_saved:
            self.write_metrics()
            self.save_checkpoint()
