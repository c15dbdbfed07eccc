"""The trainer (`fastgo train`): reads shards as they appear, keeps the replay window, trains the
network (policy cross-entropy to the visit distribution, value loss to the result, auxiliary
ownership loss, weight decay), and every K steps writes a checkpoint atomically, points
latest.ckpt at it, asks the server to hot-reload it (the message carries the bytes) and appends
a row to metrics.csv.

Restarted on the same run directory it resumes from latest.ckpt: weights, optimizer state,
step, the shards it has used and the sample counters (all inside the checkpoint, so they are
replaced together, atomically).
"""
from __future__ import annotations

import csv
import logging
import os
import time

import numpy as np
import torch
import torch.nn.functional as F

from inference_server.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from fastgo.shards import ShardError, list_shards, quarantine, read_shard
from inference_server.model import build_model
from inference_server.protocol import RELOAD_FAILED
from trainer.window import ReplayWindow, block_from_shard

log = logging.getLogger("fastgo.train")


class CheckpointsRefused(RuntimeError):
    """The server refused trainer.max_refused checkpoints in a row (their weights fail its
    checks: non-finite or out-of-range outputs on the canary positions). Training has diverged;
    a restart would resume from the same weights, so `fastgo train` stops with exit status 2."""

METRICS_FIELDS = ("step", "time", "positions", "games", "window", "samples", "samples_per_s",
                  "loss", "policy_loss", "value_loss", "ownership_loss", "policy_acc",
                  "value_error", "lr", "version", "quarantined")


class ResumeError(ValueError):
    """The run directory holds a checkpoint this config cannot continue (one line, exit 2)."""


def pick_device(name: str) -> torch.device:
    if name == "cuda" or (name == "auto" and torch.cuda.is_available()):
        return torch.device("cuda")
    return torch.device("cpu")


class Trainer:
    algorithm = "alphazero"      # written into each checkpoint; a trainer of another algorithm
                                 # resuming from it starts its optimizer afresh

    def __init__(self, config, run_dir, *, publisher=None, status=None):
        self.config = config
        self.tc = config.trainer
        self.run_dir = run_dir
        self.publisher = publisher              # callable(path, data, step) or None
        self.status = status                    # fastgo.rundir.StatusFile or None (heartbeat)
        self.last_row = {}
        self.saved_step = None                  # step of the newest checkpoint written
        self.served_step = None                 # step of the newest checkpoint the server took
        self.refused_in_row = 0                 # checkpoints the server refused since then
        if self.tc.threads:
            torch.set_num_threads(self.tc.threads)
        self.device = pick_device(self.tc.device)
        mc = config.model
        self.window = ReplayWindow(mc.board_size, config.selfplay.komi, mc.encoding,
                                   window=self.tc.window, window_size=self.tc.window_size,
                                   alpha=self.tc.window_alpha, beta=self.tc.window_beta)
        self.model = build_model(mc, seed=self.tc.seed).to(self.device)
        self.optimizer = self._make_optimizer()
        self.step = 0
        self.samples = 0
        self.used_shards: set[str] = set()
        self.quarantined = 0
        self.rng = np.random.default_rng(self.tc.seed)
        self.buffers = self.window.batch_buffers(self.tc.batch_size, mc.planes)
        self._sums = self._fresh_sums()
        self._last_wait_log = 0.0
        self._resume()

    # -- state ----------------------------------------------------------------------------------

    def _make_optimizer(self):
        params = self.model.parameters()
        if self.tc.optimizer == "adamw":
            return torch.optim.AdamW(params, lr=self.tc.lr, weight_decay=self.tc.weight_decay)
        return torch.optim.SGD(params, lr=self.tc.lr, momentum=self.tc.momentum,
                               weight_decay=self.tc.weight_decay, nesterov=self.tc.momentum > 0)

    def _resume(self):
        latest = self.run_dir.latest
        if not os.path.exists(latest):
            self.save_checkpoint()              # step 0: the untrained network, served at once
            return
        try:
            ckpt = load_checkpoint(latest, expect=self.config.model)
        except CheckpointError as err:
            raise ResumeError(f"cannot resume from {latest}: {err}") from None
        if ckpt.config != self.config.model:
            raise ResumeError(f"{latest} holds model {ckpt.config.name}, the config asks for "
                               f"{self.config.model.name}: use another run directory")
        self.model.load_state_dict(ckpt.model.state_dict())
        state = ckpt.extra.get("trainer") or {}
        written_by = ckpt.extra.get("algorithm", self.algorithm)
        if written_by != self.algorithm:
            # Moment estimates of another loss (e.g. supervised cross-entropy before REINFORCE)
            # scale the first steps of this one wrongly: Adam's would divide a large policy
            # gradient by a small running variance.
            log.info("checkpoint written by the %s trainer: its optimizer state is not reused "
                     "by the %s trainer", written_by, self.algorithm)
        elif "optimizer" in ckpt.extra:
            try:
                self.optimizer.load_state_dict(ckpt.extra["optimizer"])
            except (ValueError, KeyError, RuntimeError) as err:
                log.warning("optimizer state not restored (%s); starting it afresh", err)
        self.step = self.saved_step = ckpt.step
        self.samples = int(state.get("samples", 0))
        self.used_shards = set(state.get("used_shards", []))
        self.quarantined = int(state.get("quarantined", 0))
        rng_state = state.get("rng_seed_offset", 0)
        self.rng = np.random.default_rng([self.tc.seed, int(rng_state)])
        self.resumed_state = state
        self._refill_window(state)
        log.info("resumed at step %d: %d samples trained, %d shards used, window %d positions",
                 self.step, self.samples, len(self.used_shards), self.window.positions)

    def _refill_window(self, state):
        # Refill the window from the shards already used, newest first, without counting them.
        self.window.total_positions = int(state.get("positions", 0))
        self.window.total_games = int(state.get("games", 0))
        names = [n for n in list_shards(self.run_dir.shards) if n in self.used_shards]
        blocks, kept = [], 0
        for name in reversed(names):
            if kept >= self.window.target_size():
                break
            try:
                block = block_from_shard(read_shard(os.path.join(self.run_dir.shards, name)), name)
            except ShardError as err:
                self._quarantine(os.path.join(self.run_dir.shards, name), str(err))
                continue
            blocks.append(block)
            kept += block.positions
        for block in reversed(blocks):
            self.window.add(block, count=False)

    def trainer_state(self) -> dict:
        return {"samples": int(self.samples), "used_shards": sorted(self.used_shards),
                "positions": int(self.window.total_positions),
                "games": int(self.window.total_games), "quarantined": int(self.quarantined),
                "rng_seed_offset": int(self.step)}

    # -- shards ---------------------------------------------------------------------------------

    def _read_shard(self, name):
        """The shard `name` of the run's shards/ if it reads, checks and fits this model's board
        and komi; else it goes to quarantine with its reason and None is returned."""
        path = os.path.join(self.run_dir.shards, name)
        try:
            shard = read_shard(path)
            if shard.header["size"] != self.config.model.board_size:
                raise ShardError(f"{path}: board size {shard.header['size']}, the model plays "
                                 f"{self.config.model.board_size}")
            if shard.header["komi"] != self.config.selfplay.komi:
                raise ShardError(f"{path}: komi {shard.header['komi']}, the config says "
                                 f"{self.config.selfplay.komi}")
        except ShardError as err:
            self._quarantine(path, str(err))
            return None
        return shard

    def _quarantine(self, path, reason):
        self.quarantined += 1
        try:
            target = quarantine(path, self.run_dir.quarantine, reason)
            log.warning("quarantined %s: %s", os.path.basename(target), reason)
        except OSError as err:
            log.warning("could not quarantine %s (%s): %s", path, err, reason)

    def ingest(self) -> int:
        """Reads every new shard into the window; bad ones go to quarantine. Returns the number
        of positions added."""
        added = 0
        for name in list_shards(self.run_dir.shards):
            if name in self.used_shards:
                continue
            shard = self._read_shard(name)
            if shard is None:
                continue
            duplicates = {g.id for g in shard.games} & self.window.ids
            if duplicates:
                log.warning("%s: %d game(s) already in the window, skipped", name, len(duplicates))
            block = block_from_shard(shard, name, skip_ids=duplicates)
            self.window.add(block)
            self.used_shards.add(name)
            added += block.positions
        return added

    # -- training -------------------------------------------------------------------------------

    def allowed_samples(self) -> float:
        if self.window.total_positions < self.tc.min_positions:
            return 0
        return self.tc.samples_per_position * self.window.total_positions

    def _fresh_sums(self):
        return {"loss": 0.0, "policy_loss": 0.0, "value_loss": 0.0, "ownership_loss": 0.0,
                "policy_acc": 0.0, "value_error": 0.0, "steps": 0, "samples": 0,
                "t0": time.monotonic()}

    def train_step(self):
        batch = self.window.sample(self.rng, self.buffers)
        dev = self.device
        x = torch.from_numpy(batch["planes"]).to(dev, non_blocking=True).float()
        target = torch.from_numpy(batch["policy"]).to(dev)
        weight = torch.from_numpy(batch["policy_weight"]).to(dev)
        z = torch.from_numpy(batch["value"]).to(dev)
        own_t = torch.from_numpy(batch["ownership"]).to(dev)
        self.model.train()
        autocast = torch.autocast("cuda", dtype=torch.bfloat16) if dev.type == "cuda" else _Null()
        with autocast:
            logits, value, own = self.model.forward_train(x)
        logits, value = logits.float(), value.float()
        log_p = F.log_softmax(logits, dim=1)
        wsum = weight.sum().clamp_min(1.0)
        policy_loss = -((target * log_p).sum(1) * weight).sum() / wsum
        value_loss = F.mse_loss(value, z)
        loss = policy_loss + self.tc.value_weight * value_loss
        ownership_loss = torch.zeros((), device=dev)
        if own is not None and self.tc.ownership_weight > 0:
            ownership_loss = F.mse_loss(own.float(), own_t)
            loss = loss + self.tc.ownership_weight * ownership_loss
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        self.step += 1
        self.samples += x.shape[0]
        with torch.no_grad():
            hit = (logits.argmax(1) == target.argmax(1)).float()
            acc = float((hit * weight).sum() / wsum)
            s = self._sums
            s["loss"] += float(loss)
            s["policy_loss"] += float(policy_loss)
            s["value_loss"] += float(value_loss)
            s["ownership_loss"] += float(ownership_loss)
            s["policy_acc"] += acc
            s["value_error"] += float(value_loss)
            s["steps"] += 1
            s["samples"] += x.shape[0]
        return float(loss.detach())

    # -- checkpoints ----------------------------------------------------------------------------

    def save_checkpoint(self) -> str:
        path = self.run_dir.checkpoint(self.step)
        model = self.model
        save_checkpoint(path, model, step=self.step,
                        extra={"trainer": self.trainer_state(), "algorithm": self.algorithm,
                               "optimizer": self.optimizer.state_dict()})
        tmp = os.path.join(self.run_dir.checkpoints, f".tmp-latest-{os.getpid()}.ckpt")
        if os.path.exists(tmp):
            os.unlink(tmp)
        os.link(path, tmp)
        os.replace(tmp, self.run_dir.latest)     # latest.ckpt: always a complete checkpoint
        self.saved_step = self.step
        self._prune()
        if self.publisher is not None:
            self._publish(path)
        return path

    def _publish(self, path):
        try:
            with open(path, "rb") as handle:
                self.publisher(path, handle.read(), self.step)
        except Exception as err:
            if getattr(err, "code", None) != RELOAD_FAILED:
                # The server may be down or busy: the file is there, and it loads the next one.
                log.warning("publishing step %d failed: %s", self.step, err)
                return
            self.refused_in_row += 1
            last = ("none yet" if self.served_step is None
                    else f"step {self.served_step}, {self.run_dir.checkpoint(self.served_step)}")
            text = (f"the server refused the checkpoint of step {self.step} "
                    f"({getattr(err, 'message', err)}); refused {self.refused_in_row} in a row; "
                    f"the last one it took: {last}")
            limit = self.tc.max_refused
            if limit and self.refused_in_row >= limit:
                raise CheckpointsRefused(
                    f"{text}. Training has diverged (trainer.max_refused = {limit}): lower "
                    f"trainer.lr, or resume from the last checkpoint the server took") from None
            log.error("%s", text)
            return
        self.served_step = self.step
        self.refused_in_row = 0

    def _prune(self):
        names = sorted(n for n in os.listdir(self.run_dir.checkpoints)
                       if n.startswith("ckpt-") and n.endswith(".ckpt"))
        keep = self.tc.keep_checkpoints
        for name in names[:-keep] if len(names) > keep else []:
            if name == "ckpt-000000000.ckpt":
                continue                          # the untrained network: the baseline to beat
            try:
                os.unlink(os.path.join(self.run_dir.checkpoints, name))
            except FileNotFoundError:
                pass

    def write_metrics(self):
        s = self._sums
        steps = max(1, s["steps"])
        elapsed = max(1e-9, time.monotonic() - s["t0"])
        row = {
            "step": self.step, "time": f"{time.time():.3f}",
            "positions": self.window.total_positions, "games": self.window.total_games,
            "window": self.window.positions, "samples": self.samples,
            "samples_per_s": f"{s['samples'] / elapsed:.1f}",
            **{k: f"{s[k] / steps:.5f}" for k in ("loss", "policy_loss", "value_loss",
                                                   "ownership_loss", "policy_acc", "value_error")},
            "lr": self.optimizer.param_groups[0]["lr"], "version": self.step,
            "quarantined": self.quarantined,
        }
        path = self.run_dir.metrics
        new = not os.path.exists(path) or os.path.getsize(path) == 0
        with open(path, "a", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=METRICS_FIELDS)
            if new:
                writer.writeheader()
            writer.writerow(row)
        _tensorboard(self.run_dir, row)
        self._sums = self._fresh_sums()
        self.last_row = row
        return row

    def status_fields(self) -> dict:
        row = self.last_row
        return {"step": self.step, "samples": self.samples, "positions": self.window.total_positions,
                "games": self.window.total_games, "loss": row.get("loss"),
                "policy_acc": row.get("policy_acc"), "latest": self.saved_step,
                "waiting": self.samples + self.tc.batch_size > self.allowed_samples()}

    # -- the loop -------------------------------------------------------------------------------

    def run(self, *, max_steps=None, seconds=None, should_stop=lambda: False):
        """Trains until should_stop(), `max_steps` total steps or `seconds`; the last
        checkpoint is written before returning."""
        deadline = None if seconds is None else time.monotonic() + seconds
        next_poll = 0.0
        last_saved = self.step
        while not should_stop():
            if self.status is not None:
                self.status.beat(self.status_fields)
            if max_steps is not None and self.step >= max_steps:
                break
            if deadline is not None and time.monotonic() >= deadline:
                break
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


def make_trainer(config, run_dir, *, publisher=None, status=None):
    """The trainer of config.trainer.algorithm: AlphaZero (this module), REINFORCE
    (trainer.reinforce_loop) or the value stage (trainer.value_stage)."""
    algorithm = config.trainer.algorithm
    if algorithm == "reinforce":
        from trainer.reinforce_loop import ReinforceTrainer
        return ReinforceTrainer(config, run_dir, publisher=publisher, status=status)
    if algorithm == "value":
        from trainer.value_stage import ValueTrainer
        return ValueTrainer(config, run_dir, publisher=publisher, status=status)
    return Trainer(config, run_dir, publisher=publisher, status=status)


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_TB = {}


def _tensorboard(run_dir, row):
    """TensorBoard scalars under RUN/tb when the tensorboard package is installed."""
    if _TB.get("off"):
        return
    writer = _TB.get(run_dir.root)
    if writer is None:
        try:
            from torch.utils.tensorboard import SummaryWriter
        except Exception:                       # tensorboard not installed
            _TB["off"] = True
            return
        writer = _TB[run_dir.root] = SummaryWriter(os.path.join(run_dir.root, "tb"))
    for key, value in row.items():
        if key not in ("step", "time", "version"):
            try:
                writer.add_scalar(f"train/{key}", float(value), int(row["step"]))
            except (TypeError, ValueError):
                pass
    writer.flush()

