"""The evaluator's bounded share of the machine (evaluator.cpu_share): the CPU time it has used
against the wall time it has run, carried over its restarts within a run. Its CPU time counts its
own threads, its children that have ended and, where /proc tells, its children still running (a
GTP engine such as GNU Go while it plays, so that a long pairing is seen as it goes)."""
from __future__ import annotations

import glob
import os
import resource
import time

TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def live_children_cpu_s() -> float:
    """CPU seconds of this process's running (or not yet waited-for) children and of their own
    waited-for children, from /proc (0 where there is none). A child's time moves to
    RUSAGE_CHILDREN once waited for, when it leaves this list: counted once either way."""
    total = 0.0
    for listing in glob.glob("/proc/self/task/*/children"):
        try:
            with open(listing) as handle:
                pids = handle.read().split()
        except OSError:
            continue
        for pid in pids[:256]:
            try:
                with open(f"/proc/{int(pid)}/stat") as handle:
                    fields = handle.read().rpartition(")")[2].split()
                total += sum(int(v) for v in fields[11:15]) / TICKS   # utime stime cutime cstime
            except (OSError, ValueError):
                continue
    return total


def process_cpu_s() -> float:
    """User + system CPU seconds of this process and of its children, ended or running."""
    total = live_children_cpu_s()
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


class CpuBudget:
    """At most `share` cores on average: cpu_s() <= share * wall_s() once wait_s() is 0.

    Both clocks are functions returning seconds (injected by tests); figures start at their
    readings when the budget is made, plus `carried_cpu_s` and `carried_wall_s` from the
    evaluator's earlier lives in the same run."""

    def __init__(self, share: float, *, cpu_clock=process_cpu_s, wall_clock=time.monotonic,
                 carried_cpu_s: float = 0.0, carried_wall_s: float = 0.0):
        if not share > 0:
            raise ValueError(f"share must be > 0 cores, got {share!r}")
        self.share = float(share)
        self._cpu_clock, self._wall_clock = cpu_clock, wall_clock
        self._cpu0, self._wall0 = cpu_clock(), wall_clock()
        self.carried_cpu_s = max(0.0, float(carried_cpu_s))
        self.carried_wall_s = max(0.0, float(carried_wall_s))

    def cpu_s(self) -> float:
        return self.carried_cpu_s + max(0.0, self._cpu_clock() - self._cpu0)

    def wall_s(self) -> float:
        return self.carried_wall_s + max(0.0, self._wall_clock() - self._wall0)

    def used_share(self) -> float:
        """Cores used on average so far (0 before any wall time has passed)."""
        wall = self.wall_s()
        return self.cpu_s() / wall if wall > 0 else 0.0

    def wait_s(self) -> float:
        """Seconds of idling until the average is back within the share (0: work may go on).
        cpu / (wall + wait) = share  =>  wait = cpu / share - wall."""
        return max(0.0, self.cpu_s() / self.share - self.wall_s())

    def figures(self) -> dict:
        """The figures the status line and evaluations.jsonl carry."""
        return {"cpu_share": round(self.used_share(), 4), "cpu_budget": self.share,
                "eval_cpu_s": round(self.cpu_s(), 3), "eval_wall_s": round(self.wall_s(), 3)}
