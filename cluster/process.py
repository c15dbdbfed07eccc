"""Helpers for tests and benchmarks that need a real server process: write a config, start
`python -m inference_server.server` on a loopback port, wait for its ready line, and stop it by
PID with a bounded wait (SIGTERM, then SIGKILL).
"""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time


def write_config(path, model: dict, server: dict) -> str:
    """A TOML file with [model] and [server] tables from flat dicts of str/int/float/bool/list."""
    def value(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(v)
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + " }"
        raise TypeError(type(v))

    with open(path, "w") as handle:
        for name, table in (("model", model), ("server", server)):
            handle.write(f"[{name}]\n")
            for key, v in table.items():
                handle.write(f"{key} = {value(v)}\n")
    return str(path)


class ServerProcess:
    """A server subprocess. `endpoint` is known once `start()` returns."""

    def __init__(self, config_path, *, endpoint=None, log_path=None, start_timeout_s=60.0):
        self.config_path = str(config_path)
        self.requested_endpoint = endpoint
        self.log_path = log_path or self.config_path + ".log"
        self.start_timeout_s = start_timeout_s
        self.proc = None
        self.endpoint = None

    def start(self):
        cmd = [sys.executable, "-m", "inference_server.server", "--config", self.config_path]
        if self.requested_endpoint:
            cmd += ["--endpoint", self.requested_endpoint]
        env = dict(os.environ, OMP_NUM_THREADS="1")
        with open(self.log_path, "a") as log:
            self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True, env=env)
        deadline = time.monotonic() + self.start_timeout_s
        while True:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.proc.stdout], [], [], max(0.0, left))
            line = self.proc.stdout.readline() if ready else ""
            if "ready on" in line:
                self.endpoint = line.strip().rsplit(" ", 1)[-1]
                return self
            if not ready or self.proc.poll() is not None or left <= 0:
                self.stop()
                raise RuntimeError(f"server did not start: {self._log_tail()}")

    def _log_tail(self):
        try:
            with open(self.log_path) as handle:
                return handle.read()[-2000:]
        except OSError:
            return "(no log)"

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill9(self):
        if self.alive():
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self, timeout_s=10.0):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout_s)
        if self.proc.stdout:
            self.proc.stdout.close()

    def __enter__(self):
        # `with ServerProcess(...).start() as server` must not start a second, orphaned server
        return self if self.proc is not None else self.start()

    def __exit__(self, *exc):
        self.stop()
