"""The REINFORCE trainer (`fastgo train` with trainer.algorithm = "reinforce"): on-policy, each
game used once, in order of arrival (shards by modification time, then name; games in shard
order). Every `minibatch_games` new games make one update (trainer.reinforce); every
`checkpoint_every` updates a checkpoint is written, published to the server and a metrics.csv
row appended (loss terms, the learner's win rate in the mini-batches since the last row, the
pool size); every `pool_every` updates the current checkpoint joins the opponent pool
(rundata.pool: pool.json, started with the network the trainer starts from). With
max_staleness > 0, queued games whose learner version is more than that many updates behind
(behind the newest checkpoint the server took, when it refused a later one) are dropped unused
(the "stale" column). With target_kl > 0 the learning rate follows the policy's KL change per
update (trainer.reinforce.adapt_lr), trainer.lr being its ceiling, and a fresh optimizer starts
at trainer.lr / 100. An update whose loss or gradient is not finite is skipped
(trainer.training_core.TrainingCore.finite_step): its games are used up, the weights and the step stay;
MAX_NONFINITE_IN_A_ROW of them in a row stop the trainer (NonFiniteTraining).

Resumes from latest.ckpt like the AlphaZero trainer: weights, optimizer, step, the shards used
whole, and how many games of each partly used shard went into updates.
"""
from __future__ import annotations

import itertools
import logging
import os
import time
from collections import deque

import numpy as np

from fastgo.move_choice import policy_may_pass
from rundata.pool import OpponentPool
from trainer.intake import ShardIntake
from trainer.metrics import REINFORCE_FIELDS
from trainer.reinforce import adapt_lr, learner_batch, reinforce_step
from trainer.training_core import CoreView, TrainingCore
from trainer.window import block_from_games

log = logging.getLogger("fastgo.train")


class ReinforceTrainer(CoreView):
    """The training core (trainer.training_core) fed by a queue of unused games, one update per
    minibatch_games of them. Counters: games (used in updates), positions (the learner's
    positions trained), samples (the same, in the AlphaZero trainer's unit), stale (games
    dropped by max_staleness), all in total; partial maps a shard to the games of it already
    used, queue holds (shard name, game index, GameRecord) oldest first."""

    def __init__(self, config, run_dir, *, publisher=None, status=None) -> None:
        tc, mc = config.trainer, config.model
        self.pool = OpponentPool(run_dir.root, pool_max=tc.pool_max)
        self.core = TrainingCore(config, run_dir, algorithm="reinforce", publisher=publisher,
                                 status=status, protected=self._pool_names)
        self.intake = ShardIntake(run_dir, mc.board_size, config.selfplay.komi,
                                  kept_bytes=tc.shards_kept_mb << 20)
        self.queue: deque = deque()
        self.partial: dict[str, int] = {}
        self.queued_shards: set[str] = set()
        self.used_shards: set[str] = set()
        self.samples = 0
        self.games = 0
        self.positions = 0
        self.stale = 0
        self.skipped_games = 0                   # games of non-finite updates, this process
        self._last_wait_log = 0.0
        state = self.core.resume()
        if state is None:
            self.save_checkpoint()               # step 0: the untrained network
        else:
            self.samples = int(state.get("samples", 0))
            self.used_shards = set(state.get("used_shards", []))
            self.intake.quarantined = int(state.get("quarantined", 0))
            self.games = int(state.get("games", 0))
            self.positions = int(state.get("positions", 0))
            self.stale = int(state.get("stale", 0))
            self.partial = {str(k): int(v) for k, v in (state.get("partial") or {}).items()}
            log.info("resumed at step %d: %d samples trained, %d shards used, %d games used",
                     self.step, self.samples, len(self.used_shards), self.games)
        # The pool starts with the network this trainer starts from: the untrained step 0, or
        # the checkpoint of another trainer (supervised pretraining) found in the run directory.
        # A pool.json that cannot be used is moved aside and a new pool started (rundata.pool).
        start = run_dir.checkpoint(self.step)
        self.pool.load_or_start(lambda: start if os.path.exists(start) else self.save_checkpoint(),
                                self.step)
        if tc.target_kl > 0 and not self.optimizer.state:
            # A fresh optimizer's first Adam steps move every weight by the full lr: start 100
            # times lower; adapt_lr raises it by 1.5 per update while the KL stays below
            # target / 2.
            for group in self.optimizer.param_groups:
                group["lr"] = tc.lr / 100
        self._rsums = self._fresh_rsums()

    @property
    def quarantined(self) -> int:
        return self.intake.quarantined

    def _pool_names(self):
        return {os.path.basename(p) for p in self.pool.checkpoint_paths()}

    def trainer_state(self) -> dict:
        return {"samples": int(self.samples), "used_shards": sorted(self.used_shards),
                "games": int(self.games), "positions": int(self.positions),
                "partial": dict(self.partial), "stale": int(self.stale),
                "quarantined": int(self.quarantined), "rng_seed_offset": int(self.step)}

    def save_checkpoint(self) -> str:
        return self.core.save_checkpoint(self.trainer_state())

    # -- games ----------------------------------------------------------------------------------

    def _arrival_order(self, names):
        def key(name):
            try:
                return (os.stat(self.intake.path(name)).st_mtime_ns, name)
            except OSError:
                return (0, name)
        return sorted(names, key=key)

    def ingest(self) -> int:
        """Queues the games of new shards until a mini-batch is ready; returns games queued."""
        need = self.tc.minibatch_games
        fresh = [n for n in self.intake.names()
                 if n not in self.used_shards and n not in self.queued_shards]
        added = 0
        for name in self._arrival_order(fresh):
            if len(self.queue) >= need:
                break
            shard = self.intake.read(name)
            if shard is None:
                continue
            skip = self.partial.get(name, 0)
            self.queued_shards.add(name)
            if skip >= len(shard.games):
                self._shard_done(name)
                continue
            for index in range(skip, len(shard.games)):
                self.queue.append((name, index, shard.games[index]))
                added += 1
        if added:
            self.used_shards.difference_update(self.intake.prune(self.used_shards,
                                                                 self.queued_shards))
        return added

    def _shard_done(self, name):
        self.used_shards.add(name)
        self.partial.pop(name, None)
        self.queued_shards.discard(name)

    def _drop_stale(self):
        limit = self.tc.max_staleness
        if not limit:
            return
        # Workers play the newest version the server took: after a refused checkpoint their
        # games are measured against that one, or none would be fresh enough until the next
        # checkpoint is taken.
        newest = self.step if self.served_step is None else min(self.step, self.served_step)
        stale = 0
        while self.queue:
            versions = self.queue[0][2].versions
            if not versions or newest - int(versions[0]) <= limit:
                break
            self._take(1)
            stale += 1
        if stale:
            self.stale += stale
            self._rsums["stale"] += stale

    def _take(self, count):
        """The oldest `count` queued games; the consumption counters move with them."""
        taken = [self.queue.popleft() for _ in range(count)]
        left = {name for name, _, _ in self.queue}
        for name, index, _ in taken:
            self.partial[name] = index + 1
        for name in {name for name, _, _ in taken}:
            if name not in left:
                self._shard_done(name)
        return [game for _, _, game in taken]

    # -- updates --------------------------------------------------------------------------------

    def _fresh_rsums(self):
        return {"loss": 0.0, "policy_loss": 0.0, "value_loss": 0.0, "mask_loss": 0.0,
                "advantage": 0.0, "kl": 0.0,
                "wins": 0.0, "decided": 0, "staleness": 0.0, "games": 0, "updates": 0,
                "stale": 0,
                "t0": time.monotonic()}

    def update(self, should_stop=None) -> dict | None:
        """One update on the oldest minibatch_games queued games (games whose learner is more
        than max_staleness versions behind are dropped first and counted). None when
        should_stop() interrupted it: the games stay queued. A non-finite loss or gradient:
        the terms with "skipped": True, the games used up, weights and step unchanged
        (NonFiniteTraining after MAX_NONFINITE_IN_A_ROW in a row)."""
        self._drop_stale()
        n = self.tc.minibatch_games
        if len(self.queue) < n:
            return None
        games = [game for _, _, game in itertools.islice(self.queue, n)]
        mc = self.config.model
        block = block_from_games(games, mc.board_size, f"update-{self.step + 1}")
        allow_pass = policy_may_pass(self.config.selfplay.policy_pass_rule)
        batch = learner_batch(block, mc.board_size, self.config.selfplay.komi, mc.encoding,
                              mc.planes, allow_pass=allow_pass)
        terms = reinforce_step(self.model, self.optimizer, batch, baseline=self.tc.baseline,
                               value_weight=self.tc.value_weight, mask_weight=self.tc.mask_weight,
                               floor=self.config.selfplay.policy_floor, chunk=self.tc.batch_size,
                               device=self.device, should_stop=should_stop,
                               batchnorm=self.tc.reinforce_batchnorm, step=self.core.finite_step)
        if terms is None:
            return None
        if terms.get("skipped"):
            # Non-finite (logged by finite_step): the games are used up, the weights and the
            # step unchanged, so one poisoned shard cannot stop training by coming back.
            self._take(n)
            self.skipped_games += len(games)
            return terms
        lr = adapt_lr(self.optimizer.param_groups[0]["lr"], terms["kl"], self.tc.target_kl,
                      self.tc.lr, self.tc.lr * 1e-3)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        self._take(n)
        self.core.step += 1
        self.games += len(games)
        self.positions += terms["positions"]
        self.samples += terms["positions"]
        s = self._rsums
        for key in ("loss", "policy_loss", "value_loss", "mask_loss", "advantage", "kl"):
            s[key] += terms[key]
        decided = batch.learner_result[~np.isnan(batch.learner_result)]
        s["wins"] += float(((decided + 1) / 2).sum())
        s["decided"] += len(decided)
        s["staleness"] += sum(max(0, self.step - 1 - int(g.versions[0])) if g.versions else 0
                              for g in games)
        s["games"] += len(games)
        s["updates"] += 1
        return terms

    def write_metrics(self):
        s = self._rsums
        updates = max(1, s["updates"])
        elapsed = max(1e-9, time.monotonic() - s["t0"])
        row = {
            "step": self.step, "time": f"{time.time():.3f}", "games": self.games,
            "positions": self.positions,
            **{k: f"{s[k] / updates:.5f}" for k in ("loss", "policy_loss", "value_loss",
                                                     "mask_loss", "advantage", "kl")},
            "win_rate": f"{s['wins'] / s['decided']:.4f}" if s["decided"] else "",
            "staleness": f"{s['staleness'] / max(1, s['games']):.2f}", "stale": s["stale"],
            "pool": len(self.pool.entries), "updates_per_s": f"{s['updates'] / elapsed:.3f}",
            "lr": self.optimizer.param_groups[0]["lr"], "version": self.step,
            "quarantined": self.quarantined,
        }
        self.core.write_metrics(REINFORCE_FIELDS, row)
        self._rsums = self._fresh_rsums()
        return row

    def status_fields(self) -> dict:
        row = self.last_row
        return {"step": self.step, "samples": self.samples, "positions": self.positions,
                "games": self.games + self.stale, "used_games": self.games,
                "loss": row.get("loss"), "win_rate": row.get("win_rate"),
                "pool": len(self.pool.entries), "latest": self.saved_step,
                "waiting": len(self.queue) < self.tc.minibatch_games}

    # -- the loop -------------------------------------------------------------------------------

    def run(self, *, max_steps=None, seconds=None, should_stop=lambda: False):
        """Updates until should_stop(), `max_steps` total updates or `seconds`; the last
        checkpoint is written before returning."""
        deadline = None if seconds is None else time.monotonic() + seconds
        last_saved = self.step
        while not should_stop() and self.core.going(self.status_fields, max_steps, deadline):
            if len(self.queue) < self.tc.minibatch_games:
                self.ingest()
            if len(self.queue) < self.tc.minibatch_games:
                now = time.monotonic()
                if now - self._last_wait_log > 30:
                    log.info("waiting for games: %d queued, %d per update",
                             len(self.queue), self.tc.minibatch_games)
                    self._last_wait_log = now
                time.sleep(min(self.tc.poll_s, 0.2))
                continue
            terms = self.update(should_stop)
            if terms is None or terms.get("skipped"):
                continue
            pool_due = self.step % self.tc.pool_every == 0
            if self.step % self.tc.checkpoint_every == 0 or pool_due:
                path = self.save_checkpoint()
                last_saved = self.step
                if pool_due and self.pool.add(path, self.step):
                    self.core.prune()
                row = self.write_metrics()
                log.info("update %d: loss %s (policy %s value %s) win rate %s, %d games, pool %d",
                         self.step, row["loss"], row["policy_loss"], row["value_loss"],
                         row["win_rate"], self.games, len(self.pool.entries))
            elif terms["positions"] == 0:
                log.info("update %d: no learner moves in the mini-batch", self.step)
        if self.step != last_saved:
            self.write_metrics()
            self.save_checkpoint()
