"""The body of a Ray launcher's actor: one role of a run on one node, run by the local launcher's
RoleChild (a child process that dies with the actor), its logs in the node's copy of the run
directory, and replies the driver can read without sharing a filesystem. Never imports ray.
"""
from __future__ import annotations

import os
import time

from fastgo.files import atomic_write_text
from roles.registry import Role
from rundata.rundir import RATINGS, open_run_dir
from rundata.statefiles import read_json, read_ratings
from supervision.role_child import RoleChild
from supervision.role_process import RoleStartError

CONFIG_TOKEN = "@config"          # in an argv: the config's path on the actor's node


class RoleHost:
    """One role on one Ray node (the body of the actor class): its process (the local
    launcher's RoleChild, dying with the actor), its logs in the node's run directory, its
    heartbeat. Every reply names the actor's pid, so the driver tells a restarted actor from
    the one it knew."""

    def __init__(self, role, run_root, heartbeat, config_text, cwd, files=()):
        self.role = role
        self.files = tuple(files)            # JSON files of the run root returned with each poll
        self.run_dir = open_run_dir(run_root)
        self.config_path = os.path.join(self.run_dir.logs, f"{role}.config.toml")
        atomic_write_text(self.config_path, config_text)
        self.child = RoleChild(role, self.run_dir, heartbeat, die_with_parent=True,
                               cwd=cwd if os.path.isdir(cwd) else self.run_dir.root)
        self.endpoint = None

    def where(self):
        """{"actor": pid}; the Ray actor class adds its node."""
        return {"actor": os.getpid()}

    def start(self, argv, ready=None, ready_timeout_s=60.0):
        """Starts the role's child (stopping one still running). With `ready` (the line a
        server or recorder prints once bound), waits for that line and returns the endpoint
        after it: {"actor", "child", "endpoint", "code", "last_line"}."""
        self.child.stop(2.0)
        argv = [self.config_path if arg == CONFIG_TOKEN else arg for arg in argv]
        self.endpoint = None
        reply = {"actor": os.getpid(), "child": None, "endpoint": None, "code": None,
                 "last_line": None}
        try:
            self.endpoint = self.child.start(argv, ready=ready, ready_timeout_s=ready_timeout_s)
        except RoleStartError as err:
            reply.update(code=err.code, last_line=err.last_line)
            return reply
        reply.update(child=self.child.pid, endpoint=self.endpoint)
        return reply

    def poll(self):
        """How the role is: {"actor", "child" (pid or None), "code" (exit status, once, when
        the child has ended), "age" (seconds since its last progress), "busy" (what it says it
        is busy with, RoleChild.busy, or None), "status" (its heartbeat's figures), "stats"
        (the server's), "files", "last_line"}."""
        reply = {"actor": os.getpid(), "child": None, "code": None, "age": 0.0, "busy": None,
                 "status": None, "stats": None, "files": {}, "last_line": None}
        code = self.child.poll()
        if code is not None:
            reply.update(code=code, last_line=self.child.last_line())
        elif self.child.process is not None:
            reply["child"] = self.child.pid
        if self.child.heartbeat is not None:
            data, last, beaten = self.child.progress()
            reply["status"] = data
            if reply["child"] is not None:
                reply["age"] = time.monotonic() - last
                reply["busy"] = self.child.busy(data, beaten)
        elif reply["child"] is not None and self.endpoint and self.role == Role.SERVE:
            reply["stats"] = self.child.server_stats(self.endpoint, timeout_s=0.5)
            reply["age"] = time.monotonic() - self.child.ping.last_ok
        for name in self.files:
            path = os.path.join(self.run_dir.root, name)     # through each kind's one reader
            reply["files"][name] = read_ratings(path) if name == RATINGS else read_json(path)
        return reply

    def signal(self, sig):
        self.child.signal(sig)

    def kill(self):
        """SIGKILL the child and forget it (a stuck role); its exit is not reported."""
        self.child.kill()

    def stop(self, wait_s):
        """SIGTERM, up to wait_s for the child to end, then SIGKILL; the last poll."""
        self.child.stop(wait_s)
        self.child.close()
        reply = self.poll()
        reply["stopped"] = True
        return reply
