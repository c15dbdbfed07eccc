"""The restart policy both launchers share: a role that exits or stops making progress is started
again after an exponential back-off (cluster.backoff_s doubling up to cluster.backoff_max_s; a
minute of health resets it), and a role restarted cluster.max_restarts times within
cluster.restart_window_s stops the cluster."""
from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

STARTUP_S = 60.0      # a role may take this long to its first heartbeat (when over stuck_seconds)
HEALTHY_S = 60.0      # running this long since its start resets a role's back-off
REFUSED = 2           # the exit status of a role that refuses its settings: no restart can help


@dataclass
class Backoff:
    """One role's restart bookkeeping."""
    count: int = 0                                  # restarts so far
    recent: deque = field(default_factory=deque)    # monotonic times of the restarts in the window
    next_start: float = 0.0                         # monotonic time it may start again
    delay: float = 0.0                              # the current back-off (s); 0 when healthy


class RestartPolicy:
    """`cc`: the [cluster] config; `log(message)`: the supervisor's log line. A role is any
    object with `role` (its name), `backoff` (a Backoff), `log_path` and `out_path`."""

    def __init__(self, cc, log):
        self.cc = cc
        self.log = log

    def restart(self, role, why, now=None):
        """Counts a restart of `role` and schedules it after its back-off; returns None, or the
        message that stops the cluster when the role has been restarted max_restarts times
        within restart_window_s (then nothing is counted)."""
        now = time.monotonic() if now is None else now
        backoff = role.backoff
        while backoff.recent and now - backoff.recent[0] > self.cc.restart_window_s:
            backoff.recent.popleft()
        if len(backoff.recent) >= self.cc.max_restarts:
            return (f"{role.role} keeps failing ({why}; {len(backoff.recent) + 1} times within "
                    f"{self.cc.restart_window_s:g} s): see {role.log_path} and {role.out_path}")
        backoff.delay = (self.cc.backoff_s if not backoff.delay
                         else min(self.cc.backoff_max_s, 2 * backoff.delay))
        backoff.next_start = now + backoff.delay
        backoff.recent.append(now)
        backoff.count += 1
        self.log(f"{role.role} {why}; restart {backoff.count} in {backoff.delay:g} s "
                 f"(log {role.log_path})")
        return None

    def stuck(self, idle_s, beaten) -> bool:
        """Whether a role idle for idle_s seconds is stuck: over cluster.stuck_seconds, or
        before its first heartbeat (`beaten` False) over STARTUP_S if that is longer."""
        return idle_s > (self.cc.stuck_seconds if beaten else max(self.cc.stuck_seconds, STARTUP_S))

    @staticmethod
    def healthy(backoff, started, now):
        """Resets the back-off of a role running for HEALTHY_S since its start (monotonic)."""
        if now - started > HEALTHY_S and backoff.delay:
            backoff.delay = 0.0

    @staticmethod
    def refused(role, last_line, where=""):
        """The message that stops the cluster when `role` exited with status REFUSED."""
        return (f"{role.role} refused to run (exit status {REFUSED}): {last_line} "
                f"(see {role.out_path}{where})")

    @staticmethod
    def counts(roles):
        """{role name: restarts} of the roles restarted at least once."""
        return {r.role: r.backoff.count for r in roles if r.backoff.count}
