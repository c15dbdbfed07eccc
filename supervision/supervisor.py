"""The supervision loop of `fastgo cluster`, the same over both launchers
(supervision.local_launcher, supervision.ray_launcher): start the roles, supervise them, print the
status line, stop on SIGINT or SIGTERM, on a role that keeps failing or at the end of the duration,
shut the roles down (in supervision.policy's stop order, within cluster.shutdown_s), after a run
that reached its duration rate its last checkpoint (evaluator.final_rating_s) and print the summary.
"""
from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Protocol

from rundata.stop_signals import ignore_stop_signals, stop_on_signals
from supervision.policy import Supervision

TICK_S = 0.2                      # supervision period


class Launcher(Protocol):
    """What supervise() drives. `supervision`: the run's bookkeeping (why it must stop, its exit
    status, why it stopped, since when it runs); `should_stop`: set by supervise(), truthy once
    a signal asked the cluster to stop."""
    supervision: Supervision
    should_stop: Callable[[], object]

    def start_all(self) -> None:
        """Starts every role; RuntimeError when the cluster cannot start."""

    def supervise_once(self) -> None:
        """One supervision step: restarts what exited or is stuck, sets `self.failed` when
        a role keeps failing."""

    def status(self) -> str:
        """The status line."""

    def shutdown(self) -> None:
        """Stops every role in order within cluster.shutdown_s."""

    def final_evaluation(self, stopping: Callable[[], bool]) -> str | None:
        """After the shutdown of a run that reached its duration: rates its newest unrated
        checkpoint within evaluator.final_rating_s (or says why not); returns its name or None."""

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
    the exit status: 0, or the policy's `fail_code` after a failure. Prints the status line every
    status_every_s (in place on a terminal) and the summary at the end; while it shuts down,
    further signals are ignored."""
    stopping = stop_on_signals()
    run = cluster.supervision
    cluster.should_stop = lambda: stopping() is not None
    next_status = time.monotonic() + status_every_s
    try:
        cluster.start_all()
        while stopping() is None and run.failed is None:
            if duration is not None and time.monotonic() - run.started >= duration:
                run.stop_reason = "duration reached"
                break
            cluster.supervise_once()
            if time.monotonic() >= next_status:
                line = cluster.status()
                print(("\r\033[K" + line) if tty else line, end="" if tty else "\n", flush=True)
                next_status = time.monotonic() + status_every_s
            time.sleep(TICK_S)
        if stopping():
            run.stop_reason = stopping()
    except RuntimeError as err:
        if stopping():                        # a signal cut the start short
            run.stop_reason = stopping()
        else:
            run.failed = str(err)
    finally:
        ignore_stop_signals()
        if tty:
            print()
        cluster.shutdown()
    if run.stop_reason == "duration reached" and run.failed is None:
        final_stop = stop_on_signals()        # a signal now ends the final rating early
        try:
            cluster.final_evaluation(lambda: final_stop() is not None)
        finally:
            ignore_stop_signals()
    summary = cluster.summary()
    cluster.close()
    code = 0
    if run.failed:
        print(f"fastgo cluster: stopping: {run.failed}", file=sys.stderr, flush=True)
        code = run.fail_code
    print(summary, flush=True)
    return code
