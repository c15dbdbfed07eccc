"""The restart policy both launchers share: a role that exits or stops making progress is started
again after an exponential back-off (cluster.backoff_s doubling up to cluster.backoff_max_s; a
minute of health resets it), and a role restarted cluster.max_restarts times within
cluster.restart_window_s stops the cluster. A role that makes no progress (stuck()) or says it
is busy for over cluster.busy_limit_s in one start (busy_past()) is killed and restarted so.

A full disk is no crash (fastgo.diskfull): a role that stopped on one (exit status
fastgo.diskfull.EXIT_STATUS) stops the run cleanly with cluster.on_disk_full = "stop", or with
"wait" is started again with the same back-off, never counted; a role waiting for space in place
says so in its status file,
and disk_note() turns both into one supervisor line when it starts and ends, and into the status
line's "DISK FULL" part."""
from __future__ import annotations

import os
import time
from collections import deque
from dataclasses import dataclass, field

from fastgo import diskfull
from supervision.role_process import last_line

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
    disk_full: bool = False                         # its last exit was on a full disk


class RestartPolicy:
    """`cc`: the [cluster] config; `log(message)`: the supervisor's log line. A role is any
    object with `role` (its name), `backoff` (a Backoff), `log_path` and `out_path`."""

    def __init__(self, cc, log):
        self.cc = cc
        self.log = log
        self.waiting = {}           # role name -> the disk condition its status file showed
        self.busy_since = {}        # role name -> (its start's token, monotonic time busy first seen)

    def restart(self, role, why, now=None, code=None):
        """Counts a restart of `role` and schedules it after its back-off; returns None, or the
        message that stops the cluster when the role has been restarted max_restarts times
        within restart_window_s (then nothing is counted). `code`: its exit status, diskfull.EXIT_STATUS
        for a full disk (see disk_full_exit)."""
        now = time.monotonic() if now is None else now
        self.busy_since.pop(role.role, None)
        if code == diskfull.EXIT_STATUS:
            return self.disk_full_exit(role, now)
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

    def busy_past(self, role, busy, start, now=None) -> str | None:
        """The reason to restart `role` (for restart(), which puts the role's name first) once
        it has said it is busy for over cluster.busy_limit_s, else None. `busy`: what it says it is
        busy with now (RoleChild.busy), None when it is not; `start`: a token of its current
        start (a new token starts the count over). The count runs from the first call that saw
        it busy in this start to `now` (monotonic) and ends at a call that sees it not busy, so
        a change of what it is busy with is one spell: the server names each backend it times."""
        now = time.monotonic() if now is None else now
        if busy is None:
            self.busy_since.pop(role.role, None)
            return None
        token, since = self.busy_since.get(role.role, (None, now))
        if token != start:
            since = now
        self.busy_since[role.role] = (start, since)
        busy_s = now - since
        if busy_s <= self.cc.busy_limit_s:
            return None
        return (f"said it was busy ({str(busy)[:80]}) for {busy_s:.0f} s, past "
                f"cluster.busy_limit_s = {self.cc.busy_limit_s:g} s; killed")

    def disk_full_exit(self, role, now):
        """`role` stopped on a full disk: the message that stops the run (on_disk_full "stop"),
        or None and it starts again after its back-off, not counted (the first time of a spell
        in one line)."""

        said = last_line(role.out_path)
        said = said if "disk full" in said else f"see {role.out_path}"
        if self.cc.on_disk_full == "stop":
            policy = "" if "on_disk_full" in said else '; cluster.on_disk_full = "stop"'
            return f"{role.role} stopped on a full disk ({said}{policy})"
        backoff = role.backoff
        backoff.delay = (self.cc.backoff_s if not backoff.delay
                         else min(self.cc.backoff_max_s, 2 * backoff.delay))
        backoff.next_start = now + backoff.delay
        if not backoff.disk_full:
            self.log(f"{role.role} stopped on a full disk ({said}): started again with back-off "
                     f"until there is room, not counted as a crash (cluster.on_disk_full = "
                     f"\"wait\")")
        backoff.disk_full = True
        return None

    def disk_note(self, roles, statuses):
        """The status line's disk part ('' when no disk is full): the roles waiting for space,
        in place (their status file's "disk_full": {path, free_bytes, ...}; `statuses` maps a
        role name to its status dict or None) or to be started again. Logs a line when a role
        starts or ends waiting in place."""
        waiting = []
        for role in roles:
            condition = (statuses.get(role.role) or {}).get("disk_full")
            condition = condition if isinstance(condition, dict) else None
            before = self.waiting.get(role.role)
            if condition and not before:
                self.log(f"{role.role}: disk full ({condition.get('reason', '?')}) writing "
                         f"{condition.get('path', '?')}: waiting for space "
                         f"(cluster.on_disk_full = \"wait\")")
            elif before and not condition:
                self.log(f"{role.role}: space again; going on")
            if condition:
                self.waiting[role.role] = condition
                where = os.path.basename(str(condition.get("path", "")))
                waiting.append(f"{role.role} ({where[:40]})")
            else:
                self.waiting.pop(role.role, None)
                if role.backoff.disk_full and time.monotonic() < role.backoff.next_start:
                    waiting.append(f"{role.role} (to be started again)")
        return f"  DISK FULL: waiting for space: {', '.join(waiting)}" if waiting else ""

    @staticmethod
    def healthy(backoff, started, now):
        """Resets the back-off of a role running for HEALTHY_S since its start (monotonic)."""
        if now - started > HEALTHY_S and backoff.delay:
            backoff.delay = 0.0
            backoff.disk_full = False

    @staticmethod
    def refused(role, last_line, where=""):
        """The message that stops the cluster when `role` exited with status REFUSED."""
        return (f"{role.role} refused to run (exit status {REFUSED}): {last_line} "
                f"(see {role.out_path}{where})")

    @staticmethod
    def counts(roles):
        """{role name: restarts} of the roles restarted at least once."""
        return {r.role: r.backoff.count for r in roles if r.backoff.count}
