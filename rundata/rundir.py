"""The run directory: one folder per run, the same layout for every role. RunDir is the one
place that spells its files and folders (a scan in tests/unit/rundata/test_rundir.py keeps
it so); everyone else asks it. Stdlib only.

    shards/            complete experience shards (temporary files start with '.'); workers
    quarantine/        shards (and pool files) that failed verification, each with NAME.reason
    checkpoints/       ckpt-STEP.ckpt and latest.ckpt (always the newest complete one); trainer
    metrics.csv        one row per checkpoint of the trainer
    tb/                TensorBoard events of the trainer (where tensorboard is installed)
    logs/              ROLE.log, ROLE.out and ROLE.status.json (the heartbeat) of every role
    sgf/               exported self-play games
    sgf_shards/        shards imported from SGF files (the supervised trainer)
    pool.json          the REINFORCE opponent pool (rundata.pool)
    outbox-wID/        games a remote worker has not yet had confirmed by the recorder
    evaluated/         copies of the checkpoints the evaluator rated (its later opponents)
    ratings.jsonl      every match result of the evaluator, appended (rundata.ratings_table)
    evaluations.jsonl  one row per rated checkpoint, appended (evaluation.evaluator)
    ratings.json       the evaluator's latest fit: {"latest", "ratings"}
    curve.png          the strength curve; loss.png: the training losses (evaluation.plots)
"""
from __future__ import annotations

import contextlib
import os
import re
import threading
import time
from dataclasses import dataclass

from fastgo import bounded_json, diskfull
from fastgo.files import atomic_write_text
from rundata.statefiles import read_json

SUBDIRS = ("shards", "quarantine", "checkpoints", "logs", "sgf")
RATINGS_TABLE = "ratings.jsonl"    # the ratings table's name (also the arena's default, in the
RATINGS = "ratings.json"           # current folder), and the evaluator's fit
CHECKPOINT_NAME = re.compile(r"ckpt-(\d{9})\.ckpt")
PLAYER_NAME = re.compile(r"ckpt-([0-9]{1,15})")     # a run checkpoint's player name (below)
KEEP_RATIO = 1.25            # kept copies of evaluated checkpoints: steps this far apart


def checkpoint_player(step: int) -> str:
    """'ckpt-STEP' (no padding): the name the run's checkpoint at `step` plays and is rated
    under, in the ratings table, evaluations.jsonl, the opponent pool and the dashboard."""
    return f"ckpt-{int(step)}"


def player_step(name):
    """The step of a run checkpoint's player name (checkpoint_player's inverse; up to 15
    digits), or None for any other player (an anchor, an engine, a file name)."""
    match = PLAYER_NAME.fullmatch(name) if isinstance(name, str) else None
    return int(match.group(1)) if match else None


def kept_steps(steps, ratio=KEEP_RATIO) -> set:
    """The evaluated checkpoints' steps worth keeping a copy of as future opponents (and, past
    the fit's window, rating: rundata.elo_fit.fit_window): the two newest, and going down
    from them each step at most 1/ratio of the last one kept (so any fraction of a later step
    has a kept checkpoint within a factor `ratio`), and the first."""
    ordered = sorted(set(steps), reverse=True)
    keep = set(ordered[:2])
    last = ordered[1] if len(ordered) > 1 else None
    for step in ordered[2:]:
        if step * ratio <= last:
            keep.add(step)
            last = step
    if ordered:
        keep.add(ordered[-1])
    return keep


@dataclass(frozen=True)
class RunDir:
    root: str

    @property
    def shards(self):
        return os.path.join(self.root, "shards")

    @property
    def quarantine(self):
        return os.path.join(self.root, "quarantine")

    @property
    def checkpoints(self):
        return os.path.join(self.root, "checkpoints")

    @property
    def latest(self):
        return os.path.join(self.root, "checkpoints", "latest.ckpt")

    def latest_temporary(self) -> str:
        """checkpoints/.tmp-latest-PID.ckpt: where this process links a new latest.ckpt before
        renaming it over the old one (a temporary name: checkpoint_list leaves it out)."""
        return os.path.join(self.checkpoints, f".tmp-latest-{os.getpid()}.ckpt")

    @property
    def logs(self):
        return os.path.join(self.root, "logs")

    @property
    def sgf(self):
        return os.path.join(self.root, "sgf")

    @property
    def metrics(self):
        return os.path.join(self.root, "metrics.csv")

    def checkpoint(self, step: int) -> str:
        return os.path.join(self.checkpoints, f"ckpt-{int(step):09d}.ckpt")

    def log(self, role: str) -> str:
        return os.path.join(self.logs, f"{role}.log")

    def output(self, role: str) -> str:
        """logs/ROLE.out: what a role's process wrote to stdout and stderr."""
        return os.path.join(self.logs, f"{role}.out")

    def status(self, role: str) -> str:
        """logs/ROLE.status.json: the role's heartbeat (StatusFile)."""
        return os.path.join(self.logs, f"{role}.status.json")

    @property
    def tensorboard(self):
        return os.path.join(self.root, "tb")

    @property
    def sgf_shards(self):
        return os.path.join(self.root, "sgf_shards")

    @property
    def pool(self):
        return os.path.join(self.root, "pool.json")

    def outbox(self, worker_id: int) -> str:
        return os.path.join(self.root, f"outbox-w{int(worker_id)}")

    @property
    def evaluated(self):
        return os.path.join(self.root, "evaluated")

    @property
    def ratings_table(self):
        return os.path.join(self.root, RATINGS_TABLE)

    @property
    def evaluations(self):
        return os.path.join(self.root, "evaluations.jsonl")

    @property
    def ratings(self):
        return os.path.join(self.root, RATINGS)

    @property
    def curve(self):
        return os.path.join(self.root, "curve.png")

    @property
    def losses(self):
        return os.path.join(self.root, "loss.png")

    def checkpoint_list(self) -> list:
        """[(step, path)] of the numbered checkpoints, by step (latest.ckpt and temporary files
        left out); [] without a checkpoints folder."""
        out: list[tuple[int, str]] = []
        try:
            names = os.listdir(self.checkpoints)
        except OSError:
            return out
        for name in names:
            match = CHECKPOINT_NAME.fullmatch(name)
            if match:
                out.append((int(match.group(1)), os.path.join(self.checkpoints, name)))
        return sorted(out)


def open_run_dir(path) -> RunDir:
    """Creates the layout under `path` where missing; OSError (with the path) if it cannot."""
    root = os.path.abspath(os.fspath(path))
    if os.path.exists(root) and not os.path.isdir(root):
        raise NotADirectoryError(f"run directory {root} exists and is not a directory")
    for sub in SUBDIRS:
        os.makedirs(os.path.join(root, sub), exist_ok=True)
    return RunDir(root)


def status_path(run_dir: RunDir, role: str) -> str:
    return run_dir.status(role)


class StatusFile:
    """A role's heartbeat: a small JSON file rewritten (temporary name + rename) at most every
    `interval_s` from the role's main loop, so a stuck or stopped loop stops refreshing it. The
    supervisor reads its mtime (progress) and content (figures for the status line).

    It never waits for disk space: on a full disk it is overwritten in place (its blocks are
    already there; JSON allows the trailing spaces that pad it), else only its mtime is
    refreshed. While a write of the role waits for space (fastgo.diskfull), the wait keeps it
    fresh with the last figures and "disk_full": the wait's condition."""

    def __init__(self, run_dir: RunDir, role: str, interval_s: float = 1.0):
        self._time = time.monotonic
        self.path = status_path(run_dir, role)
        self.interval_s = interval_s
        self._next = 0.0
        self._last: dict = {}
        diskfull.set_heartbeat(self.keep_alive)

    def beat(self, fields_fn, force=False):
        """Writes fields_fn() (a JSON-able dict) when due; fields_fn is not called otherwise."""
        now = self._time()
        if not force and now < self._next:
            return
        self._next = now + self.interval_s
        self._last = dict(fields_fn())
        self._write(self._last)

    def keep_alive(self):
        """Writes the last figures again, with the disk condition when there is one."""
        self._write(self._last)

    @contextlib.contextmanager
    def busy(self, what: str, limit_s: float):
        """While the body runs, a long step that is progress though the role's loop beats
        nothing (torch.compile of the training step, a backend's timing): a thread rewrites the
        heartbeat every interval_s with the last figures and "busy": what, for at most limit_s
        seconds (a role passes cluster.busy_limit_s, past which the supervisor restarts a role
        that says "busy"). Past limit_s the thread falls silent, so a body that hangs is found
        stuck, cluster.stuck_seconds later, even where the busy bound is not enforced."""
        limit_s = float(limit_s)
        done = threading.Event()
        fields = dict(self._last, busy=str(what)[:200])

        def keep():
            end = self._time() + limit_s
            while True:
                self._write(fields)
                if done.wait(min(self.interval_s, max(0.0, end - self._time()))) or \
                        self._time() >= end:
                    return

        thread = threading.Thread(target=keep, name=f"busy: {what}"[:60], daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()
            self._write(self._last)

    def _write(self, fields):
        condition = diskfull.condition()
        text = bounded_json.dumps(dict(fields, disk_full=condition) if condition else fields)
        try:
            with diskfull.no_wait():
                atomic_write_text(self.path, text)
            return
        except Exception as err:
            if not diskfull.disk_full(err):
                return              # a folder in its place: the supervisor notices the silence
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
            try:
                data = text.encode("utf-8")
                os.pwrite(fd, data + b" " * (os.fstat(fd).st_size - len(data)), 0)
            finally:
                os.close(fd)
        except OSError:
            try:
                os.utime(self.path)
            except OSError:
                pass


def read_status(run_dir: RunDir, role: str):
    """(content dict or None, mtime or None) of a role's status file."""
    path = status_path(run_dir, role)
    try:
        mtime = os.path.getmtime(path)
    except OSError:
        return None, None
    data = read_json(path)
    return data, (mtime if data is not None else None)
