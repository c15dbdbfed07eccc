"""The supervision loop of `fastgo cluster`, the same over both launchers
(supervision.local_launcher, supervision.ray_launcher): start the roles, supervise them, print the
status line, stop on SIGINT or SIGTERM, on a role that keeps failing or at the end of the duration,
shut the roles down in order (workers, evaluator, trainer, server; within cluster.shutdown_s), after
a run that reached its duration rate its last checkpoint (cluster.final_eval_s) and print the
summary.
"""
from __future__ import annotations

import sys
import time
from typing import Callable, Protocol

from fastgo.run.stop_signals import ignore_stop_signals, stop_on_signals

TICK_S = 0.2                      # supervision period


class Launcher(Protocol):
    """What supervise() drives. `failed`: why the cluster must stop (a role keeps failing or
    refused its settings), else None; `fail_code`: the exit status then (1, or 2 for refused
    settings); `stop_reason`: shown in the summary; `started`: monotonic start time;
    `should_stop`: set by supervise(), truthy once a signal asked the cluster to stop."""
    failed: str | None
    fail_code: int
    stop_reason: str | None
    started: float
    should_stop: Callable[[], object]

    def start_all(self) -> None:
        """Starts every role; RuntimeError when the cluster cannot start."""

    def supervise_once(self) -> None:
        """One supervision step: restarts what exited or is stuck, sets `failed` when a role
        keeps failing."""

    def status(self) -> str:
        """The status line."""

    def shutdown(self) -> None:
        """Stops every role in order within cluster.shutdown_s."""

    def final_evaluation(self, stopping: Callable[[], bool]) -> str | None:
        """After the shutdown of a run that reached its duration: rates its newest unrated
        checkpoint within cluster.final_eval_s (or says why not); returns its name or None."""

    def summary(self) -> str:
        """The closing lines."""

    def close(self) -> None:
        """Releases what the launcher holds once the roles are stopped."""


def cluster_log(tty):
    """The supervisor's log line: `fastgo cluster: MESSAGE` on stdout (clearing a status line
    drawn in place on a terminal)."""
    def log(message):
        print(("\r\033[K" if tty else "") + f"fastgo cluster: {message}", flush=True)
    return log


def supervise(cluster: Launcher, *, duration=None, status_every_s=10.0, tty=False) -> int:
    """Runs `cluster` until a signal (SIGINT, SIGTERM), a failure or `duration` seconds; returns
    the exit status: 0, or cluster.fail_code after a failure. Prints the status line every
    status_every_s (in place on a terminal) and the summary at the end; while it shuts down,
    further signals are ignored."""
    stopping = stop_on_signals()
    cluster.should_stop = lambda: stopping() is not None
    next_status = time.monotonic() + status_every_s
    try:
        cluster.start_all()
        while stopping() is None and cluster.failed is None:
            if duration is not None and time.monotonic() - cluster.started >= duration:
                cluster.stop_reason = "duration reached"
                break
            cluster.supervise_once()
            if time.monotonic() >= next_status:
                line = cluster.status()
                print(("\r\033[K" + line) if tty else line, end="" if tty else "\n", flush=True)
                next_status = time.monotonic() + status_every_s
            time.sleep(TICK_S)
        if stopping():
            cluster.stop_reason = stopping()
    except RuntimeError as err:
        if stopping():                        # a signal cut the start short
            cluster.stop_reason = stopping()
        else:
            cluster.failed = str(err)
    finally:
        ignore_stop_signals()
        if tty:
            print()
        cluster.shutdown()
    if cluster.stop_reason == "duration reached" and cluster.failed is None:
        final_stop = stop_on_signals()        # a signal now ends the final rating early
        try:
            cluster.final_evaluation(lambda: final_stop() is not None)
        finally:
            ignore_stop_signals()
    summary = cluster.summary()
    cluster.close()
    code = 0
    if cluster.failed:
        print(f"fastgo cluster: stopping: {cluster.failed}", file=sys.stderr, flush=True)
        code = cluster.fail_code
    print(summary, flush=True)
    return code
