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
    supervisor reads its mtime (progress) and content (figures for the status line)."""

    def __init__(self, run_dir: RunDir, role: str, interval_s: float = 1.0):
        import time
        self._time = time.monotonic
        self.path = status_path(run_dir, role)
        self.interval_s = interval_s
        self._next = 0.0

    def beat(self, fields_fn, force=False):
        """Writes fields_fn() (a JSON-able dict) when due; fields_fn is not called otherwise."""
        import json
        now = self._time()
        if not force and now < self._next:
            return
        self._next = now + self.interval_s
        try:
            atomic_write_text(self.path, json.dumps(fields_fn()))
        except OSError:
            pass                    # a full disk must not stop the role; the supervisor notices


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
