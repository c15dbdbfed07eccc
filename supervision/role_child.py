"""One role of a run as its supervisor runs it on this machine: the role's `fastgo` command as a
RoleProcess in a session of its own, output in RUN/logs/ROLE.out (the role's own log is
RUN/logs/ROLE.log), its progress (the mtime of its heartbeat file; for the server its answers to
stats requests, and before the first its start-up lines) and what it says it is busy with. The
local launcher holds one per role; a Ray actor holds one for its role.
"""
from __future__ import annotations

import os
import time

from rundata.rundir import read_status
from supervision.role_process import RoleProcess, last_line
from wire.client import InferenceClient


class ServerPing:
    """Stats requests to a server, accepted only from the process the caller expects (another
    server answering on the endpoint is not ours). `last_ok`: monotonic time of the last
    accepted answer."""

    def __init__(self):
        self._client = None
        self._endpoint = None
        self.last_ok = 0.0

    def stats(self, endpoint, pid, timeout_s=1.0):
        """The server's stats dict when the process answering on `endpoint` has pid `pid`,
        else None (no answer within timeout_s, or another process)."""
        try:
            if self._client is None or self._endpoint != endpoint:
                self.close()
                self._client = InferenceClient(endpoint, timeout_s=1.0, retries=0)
                self._endpoint = endpoint
            stats = self._client.stats(timeout_s=timeout_s)
            if pid is None or stats.get("pid") != pid:
                return None
            self.last_ok = time.monotonic()
            return stats
        except Exception:
            self.close()
            return None

    def close(self):
        if self._client is not None:
            self._client.close()
        self._client = None


class RoleChild:
    """The process of one role (`role`: serve, train, selfplay-wI, recorder, evaluate) in
    `run_dir`. `heartbeat`: the role name of its status file, or None for the server (pinged).
    `starting`: the start of the lines a role without a heartbeat prints while a long start is
    under way (roles.registry.Role.starting), or None. `process` is None until start() and again
    once poll() has reported its exit."""

    def __init__(self, role, run_dir, heartbeat, *, starting=None, cwd=None, die_with_parent=False):
        self.role = role
        self.run_dir = run_dir
        self.heartbeat = heartbeat
        self.starting = starting
        self.cwd = cwd
        self.die_with_parent = die_with_parent
        self.out_path = run_dir.output(role)
        self.log_path = run_dir.log(role)
        self.process = None
        self.ping = ServerPing()

    @property
    def pid(self):
        return self.process.pid if self.process else None

    @property
    def started(self):
        return self.process.started if self.process else 0.0

    def start(self, argv, ready=None, ready_timeout_s=60.0, ready_cap_s=None):
        """Starts the role's command (`fastgo ARGV`); with `ready`, waits for that line and
        returns the endpoint after it (RoleStartError, process stopped, when it does not
        come; RoleProcess.wait_ready for the bounds). The previous process must have ended."""
        self.process = RoleProcess(argv, self.out_path, ready=ready, ready_timeout_s=ready_timeout_s,
                                   ready_cap_s=ready_cap_s, cwd=self.cwd, own_session=True,
                                   die_with_parent=self.die_with_parent, name=self.role)
        try:
            self.process.start()
        except Exception:
            self.process = None
            raise
        self.ping.last_ok = self.process.started
        return self.process.endpoint

    def alive(self) -> bool:
        return self.process is not None and self.process.alive()

    def poll(self):
        """The exit status once, when the process has ended (then it is forgotten); else None."""
        if self.process is None:
            return None
        code = self.process.poll()
        if code is not None:
            self.process = None
        return code

    def progress(self):
        """(heartbeat content or None, monotonic time of the last sign of progress, whether this
        start has shown one). Until its first heartbeat a role is starting (imports, model
        build, a first batch); its last progress is then its start, or for the server the last
        of its start-up lines (busy()), each a sign it is still at work."""
        started = self.started
        if self.heartbeat is None:
            answered = self.ping.last_ok > started
            said = None if answered else self._starting_line()
            return None, max(started, self.ping.last_ok, said[1] if said else 0.0), answered
        data, mtime = read_status(self.run_dir, self.heartbeat)
        if mtime is None:
            return data, started, False
        beat = _monotonic(mtime)
        return data, max(started, beat), beat > started

    def busy(self, data, beaten):
        """What the role says it is busy with in this start, or None: its status file's "busy"
        (`data`, `beaten` as progress() returns them: a mark the file held before this start is
        not this start's); for the server, its last start-up line while it has not answered."""
        if self.heartbeat is None:
            said = None if beaten else self._starting_line()
            return said[0] if said else None
        busy = data.get("busy") if beaten and isinstance(data, dict) else None
        return busy if isinstance(busy, str) and busy else None

    def _starting_line(self):
        """(the rest of the output's last line, monotonic time of the output's last write) when
        that line is a start-up line (`starting`) written since this start; else None."""
        if not self.starting or self.process is None:
            return None
        try:
            written = _monotonic(os.path.getmtime(self.out_path))
        except OSError:
            return None
        line = last_line(self.out_path)
        if written <= self.started or not line.startswith(self.starting.strip()):
            return None
        return line[len(self.starting.strip()):].strip(), written

    def server_stats(self, endpoint, timeout_s=1.0):
        """The stats of this role's server (see ServerPing), or None."""
        return self.ping.stats(endpoint, self.pid, timeout_s)

    def last_line(self) -> str:
        return last_line(self.out_path)

    def signal(self, sig):
        if self.process is not None:
            self.process.signal(sig)

    def wait(self, timeout_s):
        """The exit status, or None while it runs after timeout_s (or when there is none)."""
        return self.process.wait(timeout_s) if self.process is not None else None

    def kill(self):
        """SIGKILL and forget the process (its exit is not reported)."""
        if self.process is not None:
            self.process.kill()
        self.process = None

    def stop(self, wait_s):
        """SIGTERM, up to wait_s, then SIGKILL (at once when wait_s <= 0); the process is
        forgotten. Returns its exit status (None when there was none)."""
        if self.process is None:
            return None
        if wait_s <= 0:
            self.process.kill()
            code = self.process.returncode
        else:
            code = self.process.stop(wait_s)
        self.process = None
        return code

    def close(self):
        self.ping.close()


def _monotonic(mtime) -> float:
    """A file's mtime (wall time) as a time of time.monotonic's clock (never in the future)."""
    return time.monotonic() - max(0.0, time.time() - mtime)
