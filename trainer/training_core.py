"""The training core every trainer is built on (AlphaZero, value stage, REINFORCE, supervised):
the network, its optimizer and device, the step, checkpoints (numbered files and latest.ckpt,
replaced atomically), publishing to the server, resuming, pruning and metrics rows; the
learning-rate schedule, the weight average checkpoints serve, and a network that grows at the
configured steps (trainer.grow).

A trainer holds one TrainingCore and adds only its own data and loss step; the core never calls
back into the trainer except through the callables handed to its constructor.
"""
from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import time

import torch

from fastgo.files import escaped
from fastgo.variants import Algorithm
from network.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from network.cpu_isa import cpu_has_bf16
from network.loading import training_record
from network.model import build_model
from rundata.statefiles import read_ratings
from trainer.growth import grow_model, shape_at, stopped_gaining
from trainer.metrics import append_metrics_row, tensorboard
from trainer.sgd import PlainSGD
from trainer.weight_average import WeightAverage
from wire.protocol import RELOAD_FAILED

log = logging.getLogger("fastgo.train")

UNTRAINED_STEP = 0          # the step-0 network: never pruned, the baseline to beat


class CheckpointsRefused(RuntimeError):
    """The server refused trainer.max_refused checkpoints in a row (their weights fail its
    checks: non-finite or out-of-range outputs on the canary positions). Training has diverged;
    a restart would resume from the same weights, so `fastgo train` stops with exit status 2."""


class ResumeError(ValueError):
    """The run directory holds a checkpoint this config cannot continue (one line, exit 2)."""


class NonFiniteTraining(RuntimeError):
    """MAX_NONFINITE_IN_A_ROW batches in a row gave a non-finite loss or gradient: the data or
    the weights are poisoned; stopping keeps the last finite checkpoint the newest one."""


MAX_NONFINITE_IN_A_ROW = 20


def pick_device(name: str) -> torch.device:
    """trainer.device: "cuda", "cpu", or "auto" (CUDA when torch sees a device)."""
    if name == "cuda" or (name == "auto" and torch.cuda.is_available()):
        return torch.device("cuda")
    return torch.device("cpu")


def scheduled_lr(tc, step: int) -> float:
    """trainer.lr at `step`: halved every lr_half_life_steps, never below lr x lr_floor;
    trainer.lr itself when lr_half_life_steps is 0."""
    if not tc.lr_half_life_steps:
        return tc.lr
    return tc.lr * max(tc.lr_floor, 0.5 ** (step / tc.lr_half_life_steps))


def make_optimizer(model, tc, trainable=None):
    """trainer.optimizer over the model's parameters: AdamW, or SGD (Nesterov when momentum > 0),
    with trainer.lr and weight_decay. trainable(name) -> bool, when given, sets requires_grad of
    every named parameter, and only those that require it are optimized."""
    if trainable is not None:
        for name, param in model.named_parameters():
            param.requires_grad_(bool(trainable(name)))
        params = [p for p in model.parameters() if p.requires_grad]
    else:
        params = model.parameters()
    if tc.optimizer == "adamw":
        return torch.optim.AdamW(params, lr=tc.lr, weight_decay=tc.weight_decay)
    params = list(params)
    # on the CPU trainer.sgd.PlainSGD: torch.optim.SGD's arithmetic and state dict, without the
    # 2.7 CPU-s torch.optim's first call spends importing torch._dynamo
    sgd = PlainSGD if all(p.device.type == "cpu" for p in params) else torch.optim.SGD
    return sgd(params, lr=tc.lr, momentum=tc.momentum, weight_decay=tc.weight_decay,
               nesterov=tc.momentum > 0)


def autocast(device: torch.device, precision: str = "auto"):
    """bf16 autocast for the forward pass: on CUDA unless precision is "fp32"; on the CPU when
    precision is "bf16", or "auto" on a CPU with bf16 instructions (elsewhere bf16 is emulated
    and slower than fp32). Losses are computed in fp32 from the outputs (callers call .float())."""
    if precision == "fp32":
        return contextlib.nullcontext()
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    if precision == "bf16" or (precision == "auto" and cpu_has_bf16()):
        return torch.autocast("cpu", dtype=torch.bfloat16)
    return contextlib.nullcontext()


class TrainingCore:
    """Model, optimizer, step and checkpoints of one trainer in one run directory.

    algorithm is written into each checkpoint: resuming from a checkpoint another algorithm
    wrote keeps its weights and step but starts the optimizer afresh. publisher(path, data, step)
    receives every checkpoint written (None: write only); status is a rundata.rundir.StatusFile
    or None; protected() returns checkpoint file names pruning must keep (besides the newest
    trainer.keep_checkpoints and the step-0 one); trainable(name) selects the parameters the
    optimizer trains (None: all of them).

    Attributes: step (training steps taken: updates for REINFORCE), saved_step (step of the
    newest checkpoint written, None before the first), served_step (of the newest one the server
    took), refused_in_row (checkpoints the server refused since then), last_row (the newest
    metrics row written)."""

    def __init__(self, config, run_dir, *, algorithm: str, publisher=None, status=None,
                 protected=None, trainable=None):
        self.config = config
        self.tc = config.trainer
        self.run_dir = run_dir
        self.algorithm = algorithm
        self.publisher = publisher
        self.status = status
        self.protected = protected or (lambda: ())
        if self.tc.threads:
            torch.set_num_threads(self.tc.threads)
        self.device = pick_device(self.tc.device)
        self.stages = self.tc.grow_stages()
        # the shapes are checked against the model when the config is read (Config.check)
        self.shapes = [(config.model.blocks, config.model.channels)] + self.tc.flat_shapes()
        self.shape_since = 0                              # the step the current shape began at
        if len(self.shapes) > 1 and not config.cluster.evaluate:
            log.warning("trainer.grow_when_flat needs the evaluator's ratings, and "
                        "cluster.evaluate is off: the network keeps its shape")
        self.trainable = trainable
        # a stage at step 0 is the shape the run starts at (what resume expects at any step)
        self._place(build_model(shape_at(config.model, self.stages, 0), seed=self.tc.seed))
        self.average = (WeightAverage(self.model, self.tc.weight_average)
                        if self.tc.weight_average > 0 else None)
        self.step = 0
        self.saved_step: int | None = None
        self.served_step: int | None = None
        self.refused_in_row = 0
        self.nonfinite_in_row = 0
        self.nonfinite_total = 0
        self.last_row: dict = {}

    # -- shape, schedule and average -----------------------------------------------------------

    def _place(self, model, optimizer_state=None):
        """Makes `model` the trained network: on the device, in the configured layout, with a
        fresh optimizer (then `optimizer_state` loaded when given) at the scheduled lr."""
        self.model = model.to(self.device)
        if self.tc.channels_last:
            self.model = self.model.to(memory_format=torch.channels_last)
        self.optimizer = make_optimizer(self.model, self.tc, self.trainable)
        if optimizer_state is not None:
            self.optimizer.load_state_dict(optimizer_state)
        self._set_lr(self.step if hasattr(self, "step") else 0)
        self.train_view = self._train_view()

    def _train_view(self):
        """The network as the objectives' losses see it (trainer.compiled.TrainView): its
        forward_train compiled when trainer.compile is on (window objectives, fixed batch)."""
        from trainer.compiled import TrainView, compile_training

        if not self.tc.compile or self.algorithm == Algorithm.REINFORCE:
            return TrainView(self.model)
        mc = self.config.model
        example = torch.zeros(self.tc.batch_size, mc.planes, mc.board_size, mc.board_size,
                              device=self.device)
        if self.tc.channels_last:
            example = example.contiguous(memory_format=torch.channels_last)
        start = time.monotonic()
        # a minute or more on a slow or busy CPU: progress, not a stuck trainer, for at most
        # cluster.busy_limit_s (the supervisor restarts a role busy for longer)
        busy = (self.status.busy("compiling the training step", self.config.cluster.busy_limit_s)
                if self.status is not None else contextlib.nullcontext())
        with busy:
            view = compile_training(self.model, example,
                                    lambda: autocast(self.device, self.tc.precision))
        if view.compiled:
            log.info("trainer.compile: the training step compiled in %.1f s",
                     time.monotonic() - start)
        return view

    def _set_lr(self, step):
        # reinforce adapts its own learning rate
        if self.tc.lr_half_life_steps and self.algorithm != Algorithm.REINFORCE:
            for group in self.optimizer.param_groups:
                group["lr"] = scheduled_lr(self.tc, step)

    def _after_update(self, next_step):
        """After an optimizer step that makes the step `next_step`: the average follows, the lr
        takes its scheduled value, and the network grows when a stage begins."""
        if self.average is not None:
            self.average.update(self.model)
        if any(step == next_step for step, _, _ in self.stages):    # a stage begins
            self.grow(shape_at(self.config.model, self.stages, next_step), next_step)
        self._set_lr(next_step)

    def grow(self, shape, step):
        """Switches to the larger `shape` (trainer.growth.grow_model: the same function), for
        the raw weights and the average alike; the optimizer starts afresh on the new tower."""
        old = self.model.config.name
        seed = self.tc.seed + step
        averaged = self.average.averaged_model(self.model) if self.average is not None else None
        self._place(grow_model(self.model, shape.blocks, shape.channels, seed=seed))
        if averaged is not None:
            updates = self.average.updates
            self.average = WeightAverage(grow_model(averaged, shape.blocks, shape.channels,
                                                    seed=seed).to(self.device), self.tc.weight_average)
            self.average.updates = updates
        self.shape_since = step
        log.info("step %d: the network grows from %s to %s (the same function; the optimizer "
                 "starts afresh)", step, old, self.model.config.name)

    def grow_if_flat(self):
        """trainer.grow_when_flat: moves to the next shape when the evaluator's ratings say the
        current one stopped gaining (trainer.growth.stopped_gaining)."""
        config = self.model.config
        current = (config.blocks, config.channels)
        if current not in self.shapes or current == self.shapes[-1]:
            return
        ratings = read_ratings(self.run_dir.ratings)["ratings"]
        why = stopped_gaining(ratings, self.shape_since, self.tc.flat_steps, self.tc.flat_elo)
        if why is None:
            return
        blocks, channels = self.shapes[self.shapes.index(current) + 1]
        log.info("step %d: %s: the network grows", self.step, why)
        self.grow(dataclasses.replace(config, blocks=blocks, channels=channels), self.step)

    def served_model(self):
        """The network checkpoints hold: the weight average when trainer.weight_average is on,
        else the trained weights themselves."""
        if self.average is None:
            return self.model
        return self.average.averaged_model(self.model)

    # -- resume ---------------------------------------------------------------------------------

    def finite_step(self, loss=None) -> bool:
        """Steps the optimizer on the gradients already accumulated when `loss` (if given) and
        every gradient are finite; else clears them, logs the skipped batch and returns False.
        Raises NonFiniteTraining after MAX_NONFINITE_IN_A_ROW skips in a row, so a NaN never
        reaches the weights or a checkpoint."""
        finite = loss is None or bool(torch.isfinite(loss.detach()).all())
        if finite:
            grads = [p.grad for p in self.model.parameters() if p.grad is not None]
            finite = all(bool(torch.isfinite(g).all()) for g in grads)
        if finite:
            self.optimizer.step()
            self.nonfinite_in_row = 0
            self._after_update(self.step + 1)
            return True
        self.optimizer.zero_grad(set_to_none=True)
        self.nonfinite_in_row += 1
        self.nonfinite_total += 1
        log.warning("step %d: non-finite loss or gradient; batch skipped (%d in a row, %d in all)",
                    self.step, self.nonfinite_in_row, self.nonfinite_total)
        if self.nonfinite_in_row >= MAX_NONFINITE_IN_A_ROW:
            raise NonFiniteTraining(f"{self.nonfinite_in_row} batches in a row gave a non-finite "
                                    f"loss or gradient at step {self.step}; stopping with the "
                                    f"last finite checkpoint (step {self.saved_step})")
        return False

    def resume(self) -> dict | None:
        """Continues from latest.ckpt when the run directory has one: the weights, the step (and
        saved_step), and the optimizer state when this algorithm wrote it. Returns the trainer
        state the checkpoint carries ({} when it has none), or None when there is no latest.ckpt
        (nothing is changed). ResumeError when the checkpoint is unreadable, of another model or
        holds non-finite weights."""
        latest = self.run_dir.latest
        if not os.path.exists(latest):
            return None
        try:
            ckpt = load_checkpoint(latest, expect=self.config.model)
        except CheckpointError as err:
            raise ResumeError(f"cannot resume from {latest}: {err}") from None
        expected = shape_at(self.config.model, self.stages, ckpt.step)
        if (ckpt.config.blocks, ckpt.config.channels) in self.shapes[1:]:
            expected = dataclasses.replace(expected, blocks=ckpt.config.blocks,
                                           channels=ckpt.config.channels)
        if ckpt.config != expected:
            raise ResumeError(f"{latest} holds model {ckpt.config.name} at step {ckpt.step}, the "
                               f"config asks for {expected.name} there: use another run directory")
        state = ckpt.model.state_dict()
        bad = [name for name, tensor in state.items()
               if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all())]
        if bad:
            # Training from NaN weights only skips batches (finite_step) and never publishes.
            raise ResumeError(f"{latest} (step {ckpt.step}) holds non-finite weights ({bad[0]}"
                              f"{f' and {len(bad) - 1} more' if len(bad) > 1 else ''}): a diverged "
                              f"run; copy an earlier checkpoint to latest.ckpt or use another "
                              f"run directory")
        self.step = ckpt.step
        raw = ckpt.extra.get("raw_weights")
        self._place(ckpt.model)
        try:
            if isinstance(raw, dict):          # the checkpoint holds the average; these trained
                self.model.load_state_dict(raw)
            if self.tc.weight_average > 0:
                self.average = WeightAverage(self.model, self.tc.weight_average)
                self.average.state = {k: v.detach().clone().to(self.device)
                                      for k, v in state.items()}
                self.average.updates = int(ckpt.extra.get("average_updates", 0) or 0)
        except (RuntimeError, TypeError, ValueError) as err:
            raise ResumeError(f"{latest}: its trained weights do not fit its network: "
                              f"{escaped(err, 200, one_line=True)}") from None
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
        since = ckpt.extra.get("shape_since", 0)
        self.shape_since = since if isinstance(since, int) and 0 <= since <= ckpt.step else 0
        return dict(ckpt.extra.get("trainer") or {})

    # -- checkpoints ----------------------------------------------------------------------------

    def save_checkpoint(self, state: dict) -> str:
        """Writes checkpoints/ckpt-STEP.ckpt (weights, `state` as the trainer state, the
        algorithm, the optimizer state), points latest.ckpt at it (a link renamed over it, so
        latest.ckpt is always a complete checkpoint), prunes, and publishes it. Returns its path.
        CheckpointsRefused after trainer.max_refused refusals in a row."""
        if len(self.shapes) > 1:
            self.grow_if_flat()
        path = self.run_dir.checkpoint(self.step)
        extra = {"trainer": state, "algorithm": self.algorithm,
                 "optimizer": self.optimizer.state_dict(), "shape_since": self.shape_since,
                 # the komi and rules the network learns at, for whoever plays it
                 **training_record(self.config.selfplay.komi)}
        if self.average is not None:
            extra["raw_weights"] = {k: v.detach().to("cpu") for k, v in self.model.state_dict().items()}
            extra["average_updates"] = self.average.updates
        save_checkpoint(path, self.served_model(), step=self.step, extra=extra)
        tmp = self.run_dir.latest_temporary()
        if os.path.exists(tmp):
            os.unlink(tmp)
        os.link(path, tmp)
        os.replace(tmp, self.run_dir.latest)
        self.saved_step = self.step
        self.prune()
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

    def prune(self):
        """Deletes numbered checkpoints beyond the newest trainer.keep_checkpoints, except the
        step-0 one and those protected() names."""
        keep_always = set(self.protected())
        listed = self.run_dir.checkpoint_list()
        keep = self.tc.keep_checkpoints
        for step, path in listed[:-keep] if len(listed) > keep else []:
            if step == UNTRAINED_STEP or os.path.basename(path) in keep_always:
                continue
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass

    # -- metrics and heartbeat ------------------------------------------------------------------

    def write_metrics(self, fields, row: dict, *, scalars: bool = True) -> dict:
        """Appends `row` to metrics.csv under `fields` (trainer.metrics.append_metrics_row) and,
        with `scalars`, to TensorBoard when it is installed. Returns the row (also last_row)."""
        append_metrics_row(self.run_dir.metrics, fields, row)
        if scalars:
            tensorboard(self.run_dir, row)
        self.last_row = row
        return row

    def going(self, status_fields, max_steps, deadline) -> bool:
        """One turn of a training loop: refreshes the heartbeat with status_fields(), then False
        once step has reached `max_steps` or time.monotonic() `deadline` (None: no limit)."""
        if self.status is not None:
            self.status.beat(status_fields)
        if max_steps is not None and self.step >= max_steps:
            return False
        return deadline is None or time.monotonic() < deadline


class CoreView:
    """A trainer's core state under the trainer's own names (`self.step`, `self.model`, ...),
    read-only; the trainer itself changes it through self.core."""

    core: TrainingCore

    config = property(lambda self: self.core.config)
    tc = property(lambda self: self.core.tc)
    run_dir = property(lambda self: self.core.run_dir)
    status = property(lambda self: self.core.status)
    device = property(lambda self: self.core.device)
    model = property(lambda self: self.core.model)
    optimizer = property(lambda self: self.core.optimizer)
    step = property(lambda self: self.core.step)
    saved_step = property(lambda self: self.core.saved_step)
    served_step = property(lambda self: self.core.served_step)
    refused_in_row = property(lambda self: self.core.refused_in_row)
    last_row = property(lambda self: self.core.last_row)
    algorithm = property(lambda self: self.core.algorithm)
