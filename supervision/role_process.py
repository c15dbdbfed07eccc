"""One role process: `python -m MODULE ARGS` (a `fastgo` command unless told otherwise) with its
stdout and stderr in a log file, its ready line awaited with a deadline, and a bounded stop by PID
(SIGTERM, then SIGKILL). The supervisor's launchers, the benches and the tests start processes so;
`Children` runs `fastgo` commands one after another with signals passed on (`fastgo compare`).
"""
from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import time

from roles.flags import CONFIG, SERVE
from roles.registry import Role

ONE_THREAD = {"OMP_NUM_THREADS": "1"}       # added to a role's environment unless told otherwise
POLL_S = 0.05                               # how often the log is read for the ready line
COPY_POLL_S = 0.1                           # how often Children copies a child's output
START_CAP = 15                              # a start that keeps printing waits this many timeouts at most
SCAN_BYTES = 1 << 16                        # the ready line is looked for in this much output
TAIL_BYTES = 4000                           # the end of a log read for its last lines
MAX_OUT_BYTES = 16 << 20                    # a child's output file past this at a start is renamed
                                            # OUT.1 (the one before dropped): its roles log
                                            # to their own files, so little comes here


class RoleStartError(RuntimeError):
    """A role process ended, or its deadline passed, before its ready line. `code`: its exit
    status (None when it was stopped at the deadline); `last_line`: its output's last line;
    `capped`: stopped at the bound on a start that kept printing (RoleProcess.wait_ready)."""

    def __init__(self, message, code, last_line, capped=False):
        super().__init__(message)
        self.code = code
        self.last_line = last_line
        self.capped = capped


class RoleProcess:
    """The child `[*prefix, python, -m, module, *argv]`, stdout and stderr appended to
    `out_path`, stdin from /dev/null. With `ready` (the start of the line the role prints once
    it serves, roles.registry.Role.ready), start() returns once that line is written and `endpoint`
    holds the rest of it (ready_timeout_s and ready_cap_s bound the wait: wait_ready); otherwise
    start() returns at once.

    env: variables added to this process's environment; own_session: a session of its own
    (a terminal's Ctrl-C reaches only the parent, which stops its children in order);
    die_with_parent: SIGKILL when the thread that started it ends (Linux)."""

    def __init__(self, argv, out_path, *, ready=None, ready_timeout_s=60.0, ready_cap_s=None,
                 module="fastgo_cli.main", prefix=(), env=ONE_THREAD, cwd=None, own_session=False,
                 die_with_parent=False, name=None):
        self.argv = [str(arg) for arg in argv]
        self.name = name or (self.argv[0] if self.argv else module)     # for messages
        self.out_path = os.fspath(out_path)
        self.ready = ready
        self.ready_timeout_s = ready_timeout_s
        self.ready_cap_s = ready_cap_s
        self.capped = False             # the last wait_ready ended at its cap
        self.command = [*prefix, sys.executable, "-m", module, *self.argv]
        self.env = dict(env)
        self.cwd = cwd
        self.own_session = own_session
        self.die_with_parent = die_with_parent
        self.proc = None                # subprocess.Popen once started
        self.endpoint = None            # the rest of the ready line
        self.started = 0.0              # monotonic time of start()
        self._offset = 0                # size of out_path at start(): this run's output follows

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    @property
    def returncode(self):
        return self.proc.returncode if self.proc else None

    def start(self):
        """Starts the process (and waits for its ready line when there is one); returns self.
        RoleStartError, with the process stopped, when the line does not come."""
        try:
            self._offset = os.path.getsize(self.out_path)
            if self._offset > MAX_OUT_BYTES:          # each start: the file stays bounded
                os.replace(self.out_path, self.out_path + ".1")
                self._offset = 0
        except OSError:
            self._offset = 0
        with open(self.out_path, "ab") as out:
            self.proc = subprocess.Popen(
                self.command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=dict(os.environ, **self.env), cwd=self.cwd, start_new_session=self.own_session,
                preexec_fn=_die_with_parent if self.die_with_parent else None)
        self.started = time.monotonic()
        self.endpoint = None
        if self.ready:
            self.endpoint = self.wait_ready(self.ready, self.ready_timeout_s, self.ready_cap_s)
            if self.endpoint is None:
                code = self.proc.poll()
                self.stop(2.0)
                raise RoleStartError(f"{self.name} did not start: {self.tail()}", code,
                                     self.last_line(), capped=self.capped)
        return self

    def wait_ready(self, marker, timeout_s, cap_s=None):
        """The rest (stripped) of the first complete line since start() that begins with
        `marker`; None when the process ends without it, or when timeout_s pass without new
        output (a role busy starting says so on stdout, each line renewing the wait), or cap_s
        in all (START_CAP times timeout_s when None; `capped` is set when a process that printed
        is cut there); the process is left as it is."""
        start = time.monotonic()
        cap = start + (START_CAP * timeout_s if cap_s is None else cap_s)
        deadline = min(cap, start + timeout_s)
        size = self._size()
        printed = self.capped = False
        while True:
            ended = self.proc.poll() is not None
            found = self._ready_line(marker)
            now = time.monotonic()
            grown = self._size()
            if grown > size:
                size, deadline, printed = grown, min(cap, now + timeout_s), True
            if found is not None or ended or now > deadline:
                self.capped = found is None and not ended and printed and now > cap
                return found
            time.sleep(POLL_S)

    def _size(self):
        try:
            return os.path.getsize(self.out_path)
        except OSError:
            return 0

    def _ready_line(self, marker):
        text = _read_from(self.out_path, self._offset, SCAN_BYTES)
        for line in text.splitlines(keepends=True):
            if line.startswith(marker) and line.endswith("\n"):
                return line[len(marker):].strip()
        return None

    def output(self, max_bytes=1 << 20) -> str:
        """What the process has written since start() (its first max_bytes bytes)."""
        return _read_from(self.out_path, self._offset, max_bytes)

    def last_line(self) -> str:
        return last_line(self.out_path)

    def tail(self, chars=2000) -> str:
        return _read_tail(self.out_path, chars) or "(no output)"

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def poll(self):
        """The exit status once it has ended, else None."""
        return self.proc.poll() if self.proc else None

    def wait(self, timeout_s):
        """The exit status, or None when it is still running after timeout_s."""
        try:
            return self.proc.wait(max(0.0, timeout_s))
        except subprocess.TimeoutExpired:
            return None

    def signal(self, sig):
        """Sends `sig` (after SIGCONT: a stopped process cannot act on SIGTERM) if it runs."""
        if self.alive():
            try:
                os.kill(self.proc.pid, signal.SIGCONT)
                os.kill(self.proc.pid, sig)
            except ProcessLookupError:
                pass

    def kill(self, wait_s=10.0):
        """SIGKILL and reap it (at most wait_s)."""
        if self.alive():
            self.signal(signal.SIGKILL)
        if self.proc is not None:
            self.wait(wait_s)

    def stop(self, timeout_s=10.0):
        """SIGTERM, up to timeout_s for it to end, then SIGKILL; returns the exit status."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.signal(signal.SIGTERM)
            if self.wait(timeout_s) is None:
                self.kill(timeout_s)
        return self.proc.returncode

    def __enter__(self):
        # `with RoleProcess(...).start() as p` must not start a second, orphaned process
        return self if self.proc is not None else self.start()

    def __exit__(self, *exc):
        self.stop()


class ServerProcess(RoleProcess):
    """`fastgo serve --config CONFIG [--bind E] [--shards DIR]` (as `python -m fastgo_cli.main`),
    log in `log_path` (default CONFIG.log); `endpoint` is the bound one once start() returns
    (RuntimeError, with the log's end, when it does not start within start_timeout_s); `shards`:
    the run's shard folder, whose games int8 is calibrated on."""

    def __init__(self, config_path, *, endpoint=None, log_path=None, start_timeout_s=60.0,
                 env=ONE_THREAD, shards=None):
        self.config_path = str(config_path)
        self.requested_endpoint = endpoint
        argv = [Role.SERVE.command, *CONFIG.argv(self.config_path), *SERVE["bind"].argv(endpoint),
                *SERVE["shards"].argv(shards)]
        self.log_path = log_path or self.config_path + ".log"
        super().__init__(argv, self.log_path, ready=Role.SERVE.ready,
                         ready_timeout_s=start_timeout_s, env=env, name="server")


def write_toml(path, sections: dict) -> str:
    """A TOML file of tables {name: {key: value}} with str, int, float, bool, list and inline
    table (dict) values; returns the path as a str."""
    with open(path, "w") as handle:
        for name, table in sections.items():
            handle.write(f"[{name}]\n")
            for key, value in table.items():
                handle.write(f"{key} = {_toml_value(value)}\n")
            handle.write("\n")
    return str(path)


def _toml_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(type(value))


def last_line(path) -> str:
    """The last non-blank line of a log file, or '(no output)'."""
    lines = [line.strip() for line in _read_tail(path, TAIL_BYTES).splitlines() if line.strip()]
    return lines[-1] if lines else "(no output)"


def _read_tail(path, chars) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, os.fstat(handle.fileno()).st_size - chars))
            return handle.read(chars).decode(errors="replace")
    except OSError:
        return ""


def _read_from(path, offset, max_bytes) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(offset)
            return handle.read(max_bytes).decode(errors="replace")
    except OSError:
        return ""


def _die_with_parent():
    """preexec_fn: SIGKILL when the thread that started the child ends (PR_SET_PDEATHSIG)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)
    except (OSError, AttributeError):
        pass
    if os.getppid() == 1:                      # the parent died before prctl took hold
        os._exit(1)


class Children:
    """Runs `fastgo` commands one at a time, each in a session of its own with its output in a
    file and copied to `out` line by line under a prefix. While in use (a context manager), SIGINT
    and SIGTERM are passed on to the running child and recorded in `stopped` (the signal's name);
    run() then returns once the child has stopped (SIGKILL after its stop_s), and starts nothing
    once a signal has come."""

    def __init__(self, out=None):
        self.out = out
        self.stopped = None
        self.child = None
        self._previous = {}

    def __enter__(self):
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._previous[sig] = signal.signal(sig, self._forward)
        return self

    def __exit__(self, *exc):
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous = {}

    def _forward(self, signum, frame):
        self.stopped = signal.Signals(signum).name
        if self.child is not None:
            self.child.signal(signum)

    def run(self, argv, log_path, prefix, *, stop_s, die_with_parent) -> int | None:
        """Runs `python -m fastgo_cli.main ARGV` to its end and returns its exit status; None
        when a signal came before it started. die_with_parent: SIGKILL if this process dies."""

        if self.stopped:
            return None
        os.makedirs(os.path.dirname(os.path.abspath(log_path)), exist_ok=True)
        child = RoleProcess(argv, log_path, env={}, own_session=True,
                            die_with_parent=die_with_parent, name=argv[0])
        position = os.path.getsize(log_path) if os.path.exists(log_path) else 0
        pending = b""
        self.child = child.start()
        if self.stopped:                    # came while it started
            child.signal(signal.Signals[self.stopped])
        deadline = None
        try:
            while child.poll() is None:
                position, pending = self._copy(log_path, position, pending, prefix)
                if self.stopped and deadline is None:
                    deadline = time.monotonic() + stop_s
                if deadline is not None and time.monotonic() > deadline:
                    child.kill()
                time.sleep(COPY_POLL_S)
            while True:                     # what it wrote before it ended
                before = position
                position, pending = self._copy(log_path, position, pending, prefix)
                if position == before:
                    break
            if pending and self.out is not None:
                self.out(prefix + pending.decode("utf-8", "replace").rstrip("\r"))
            return child.poll()
        finally:
            self.child = None
            if child.alive():
                child.stop(stop_s)

    def _copy(self, path, position, pending, prefix):
        """Copies the complete lines written to `path` since `position`; returns the new
        position and the incomplete rest."""
        try:
            with open(path, "rb") as handle:
                handle.seek(position)
                data = handle.read(1 << 20)
        except OSError:
            return position, pending
        *lines, rest = (pending + data).split(b"\n")
        if self.out is not None:
            for line in lines:
                self.out(prefix + line.decode("utf-8", "replace").rstrip("\r"))
        return position + len(data), rest


# --- reading a finished run --------------------------------------------------------------------
