"""The run directory: one folder per run, the same layout for every role (server, workers,
trainer, later the cluster). Stdlib only.

    shards/        complete experience shards (temporary files start with '.')
    quarantine/    shards that failed verification, each with NAME.reason
    checkpoints/   ckpt-STEP.ckpt and latest.ckpt (always the newest complete one)
    metrics.csv    one row per checkpoint of the trainer
    logs/          one log file per role
    sgf/           exported self-play games
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from fastgo.files import atomic_write_text

SUBDIRS = ("shards", "quarantine", "checkpoints", "logs", "sgf")


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


def open_run_dir(path) -> RunDir:
    """Creates the layout under `path` where missing; OSError (with the path) if it cannot."""
    root = os.path.abspath(os.fspath(path))
    if os.path.exists(root) and not os.path.isdir(root):
        raise NotADirectoryError(f"run directory {root} exists and is not a directory")
    for sub in SUBDIRS:
        os.makedirs(os.path.join(root, sub), exist_ok=True)
    return RunDir(root)


def status_path(run_dir: RunDir, role: str) -> str:
    return os.path.join(run_dir.logs, f"{role}.status.json")


class StatusFile:
    """A role's heartbeat: a small JSON file rewritten (temporary name + rename) at most every
    `interval_s` from the role's main loop, so a stuck or stopped loop stops refreshing it. The
    supervisor reads its mtime (progress) and content (figures for the status line).

    It never waits for disk space: on a full disk it is overwritten in place (its blocks are
    already there; JSON allows the trailing spaces that pad it), else only its mtime is
    refreshed. While a write of the role waits for space (fastgo.diskfull), the wait keeps it
    fresh with the last figures and "disk_full": the wait's condition."""

    def __init__(self, run_dir: RunDir, role: str, interval_s: float = 1.0):
        import time

        from fastgo import diskfull
        self._time = time.monotonic
        self.path = status_path(run_dir, role)
        self.interval_s = interval_s
        self._next = 0.0
        self._last = {}
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

    def _write(self, fields):
        import json

        from fastgo import diskfull
        condition = diskfull.condition()
        text = json.dumps(dict(fields, disk_full=condition) if condition else fields)
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
    from fastgo.statefiles import read_json

    path = status_path(run_dir, role)
    try:
        mtime = os.path.getmtime(path)
    except OSError:
        return None, None
    data = read_json(path)
    return data, (mtime if data is not None else None)
