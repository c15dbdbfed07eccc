"""Model slots and hot reload for the server.

A slot (e.g. "current", "best") serves one model version at a time. New weights are loaded on a
background thread beside the live runner, checked (hash, shapes, config, canary positions), and
handed to the server loop, which swaps them in between batches; a refused file leaves the old
model serving. Watched checkpoint files are polled by (mtime, size).
"""
from __future__ import annotations

import logging
import os
import queue
import threading
from dataclasses import dataclass, field

from network.backend_choice import BackendSetup
from network.checkpoint import CheckpointError, CheckpointUnreadable, load_checkpoint
from network.model import build_model
from network.runner import ModelRunner, check_canaries
from rundata.config import ModelConfig, ServerConfig

log = logging.getLogger("fastgo.serve")

MAX_PENDING_RELOADS = 8          # reloads queued or loading; more are answered "busy"
NAMED_PATH_UNREADABLE = "no readable fastgo checkpoint at that path"


def make_runner(model, server: ServerConfig, *, setup: BackendSetup | None = None) -> ModelRunner:
    """The runner of `model` as `server` configures one; `setup`: the serving process's
    BackendSetup (None: no shards, nothing said)."""
    return ModelRunner(model, device=server.device, precision=server.precision,
                       channels_last=server.channels_last, fuse_batchnorm=server.fuse_batchnorm,
                       capacity=max(server.max_batch, server.max_request_positions),
                       cuda_graphs=server.cuda_graphs, graph_batches=server.graph_batches,
                       backend=server.backend, threads=server.threads,
                       auto_batch=server.max_batch, setup=setup)


@dataclass
class Slot:
    name: str
    runner: ModelRunner
    version: int
    path: str = ""                     # watched checkpoint file ("" = none)
    signature: tuple | None = None     # (mtime_ns, size) of the last file loaded or refused
    content_hash: str = ""


@dataclass
class LoadResult:
    slot: str
    path: str
    signature: tuple | None
    runner: ModelRunner | None = None
    version: int = 0
    content_hash: str = ""
    error: str = ""
    waiters: list = field(default_factory=list)    # (identity, request_id) of reload requests
    data: object = None                            # checkpoint bytes sent over the wire
    unchanged: bool = False                        # the weights the slot already serves: no runner


def file_signature(path):
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def load_runner(path, expect: ModelConfig, server: ServerConfig, data=None, serving_hash="", *,
                setup: BackendSetup | None = None):
    """Load, verify and canary-test a checkpoint (file, or bytes `data`); returns (runner,
    step, hash), with runner None when the weights' hash is `serving_hash` (the runner would
    be the one in service: building and checking a backend is most of a reload's cost).
    `setup` as make_runner's. Raises CheckpointError or ValueError with the reason."""
    ckpt = load_checkpoint(path, expect=expect, data=data, max_bytes=server.max_checkpoint_bytes)
    if serving_hash and ckpt.content_hash == serving_hash:
        return None, ckpt.step, ckpt.content_hash
    runner = make_runner(ckpt.model, server, setup=setup)
    check_canaries(runner, server.canary_max_abs_logit)
    return runner, ckpt.step, ckpt.content_hash


def initial_slots(model_config: ModelConfig, server: ServerConfig, *,
                  setup: BackendSetup | None = None) -> dict:
    """Slots at start: a slot's checkpoint if its file exists (a bad one stops the start),
    else seeded random weights as version 0; `setup` as make_runner's."""
    slots = {}
    for name in server.slots:
        path = server.checkpoints.get(name, "")
        signature = file_signature(path) if path else None
        if signature is not None:
            runner, version, content_hash = load_runner(path, model_config, server, setup=setup)
            log.info("slot %s: loaded %s (model %s, version %d)", name, path, runner.config.name, version)
        else:
            runner = make_runner(build_model(model_config, seed=server.init_seed), server,
                                 setup=setup)
            version, content_hash = 0, ""
            log.info("slot %s: random weights (seed %d), model %s%s", name, server.init_seed,
                     model_config.name, f"; waiting for {path}" if path else "")
        slots[name] = Slot(name, runner, version, path, signature, content_hash)
    return slots


class Reloader:
    """One background thread that loads checkpoints; results come back through `done`.

    At most `max_pending` jobs are queued or loading: `request` returns False beyond that (the
    server answers "busy"). Loading never blocks on a path (load_checkpoint opens only regular
    files, without blocking), so one bad path cannot hold up the reloads behind it.

    Jobs are loaded and applied in order, so a job whose weights equal the last ones loaded
    for its slot (`loaded`: the trainer uploads a checkpoint and writes the file the server
    watches, one reload each) is answered `unchanged`, without building a runner. Its runners
    are built with `setup` (make_runner), as the server's first ones are."""

    def __init__(self, model_config: ModelConfig, server: ServerConfig,
                 max_pending: int = MAX_PENDING_RELOADS, loaded: dict | None = None, *,
                 setup: BackendSetup | None = None):
        self.model_config = model_config
        self.server = server
        self.setup = setup
        self.loaded = dict(loaded or {})   # slot -> hash of the last weights loaded; loader thread only
        self.jobs: queue.Queue = queue.Queue(maxsize=max_pending)
        self.done: queue.Queue = queue.Queue()
        self.busy: set = set()           # (slot, path) queued or loading; touched by the server loop only
        self._in_hand = None             # the job being loaded (read by abandon())
        self._thread = threading.Thread(target=self._work, name="reloader", daemon=True)
        self._thread.start()

    def request(self, slot: str, path: str, waiter=None, signature=None, data=None) -> bool:
        """Queue a load; False (nothing queued) when max_pending loads are already waiting.
        A job with a waiter and no data loads a path a client named: its errors say no more
        than NAMED_PATH_UNREADABLE about what is at that path."""
        job = LoadResult(slot, path, signature, data=data)
        if waiter is not None:
            job.waiters.append(waiter)
        try:
            self.jobs.put_nowait(job)
        except queue.Full:
            return False
        self.busy.add((slot, path))
        return True

    def _work(self):
        while True:
            job = self.jobs.get()
            if job is None:
                return
            self._in_hand = job
            if job.signature is None and job.data is None:
                job.signature = file_signature(job.path)
            try:
                job.runner, job.version, job.content_hash = load_runner(
                    job.path, self.model_config, self.server, data=job.data,
                    serving_hash=self.loaded.get(job.slot, ""), setup=self.setup)
                job.unchanged = job.runner is None
                self.loaded[job.slot] = job.content_hash
            except CheckpointUnreadable as err:
                if job.waiters and job.data is None:     # a path named by a client
                    log.warning("slot %s: reload refused: %s", job.slot, err)
                    job.error = f"{job.path[:200]}: {NAMED_PATH_UNREADABLE}"
                else:
                    job.error = str(err)
            except (CheckpointError, ValueError, RuntimeError, OSError) as err:
                job.error = str(err)
            except Exception as err:  # never let the loader thread die
                job.error = f"{type(err).__name__}: {err}"
            job.data = None
            self.done.put(job)
            self._in_hand = None

    def abandon(self) -> list:
        """Stops the thread and returns the waiters (identity, request_id) of every reload not
        yet answered: queued, in hand or done but not applied. For the server's shutdown."""
        waiters = []
        in_hand = self._in_hand
        while True:
            try:
                job = self.jobs.get_nowait()
            except queue.Empty:
                break
            if job is not None:
                waiters.extend(job.waiters)
        if in_hand is not None:
            waiters.extend(in_hand.waiters)
        self.stop()
        while True:
            try:
                job = self.done.get_nowait()
            except queue.Empty:
                break
            if job is not in_hand:
                waiters.extend(job.waiters)
        return waiters

    def stop(self):
        """Ends the thread after the job in hand; queued jobs are dropped (their waiters get
        no reply: the server answers them before it stops)."""
        while True:
            try:
                self.jobs.get_nowait()
            except queue.Empty:
                break
        try:
            self.jobs.put_nowait(None)
        except queue.Full:
            pass
