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
