"""A full disk (ENOSPC, EDQUOT) taken for what it is: a condition a role waits out or stops on,
never a crash and never a crash loop. Stdlib only.

A role process calls configure(policy) once it has its config (cluster.on_disk_full): "wait"
(the default) or "stop". From then on the project's writers (fastgo.files: atomic writes and
appends; rundata.shards) hand a disk-full error to handle(): with "wait" the writer's thread
waits, with back-off (FIRST_WAIT_S doubling to MAX_WAIT_S, sooner once the filesystem has more
room), and then tries again, until the write goes through; with "stop" it raises DiskFullStop.
Either way the process says so in one log line naming the condition and the path, and one more
when space has returned. While it waits, condition() describes the wait (the role's status file
shows it) and the status file's keep-alive (set_heartbeat) runs, so the supervisor neither
takes it for stuck nor counts a crash. A role that meets a full disk where no writer waits exits
with EXIT_STATUS (roles.start), which the supervisor treats the same way.

A process that never called configure() (commands, tools, tests) gets the OSError as before.
"""
from __future__ import annotations

import contextlib
import errno
import logging
import os
import threading
import time

ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
EXIT_STATUS = 75                 # EX_TEMPFAIL: a role that stopped on a full disk
POLICIES = ("wait", "stop")
FIRST_WAIT_S = 1.0               # the first wait; doubles up to MAX_WAIT_S
MAX_WAIT_S = 60.0
TICK_S = 0.25                    # stop requests and free space are looked at this often
BEAT_S = 2.0                     # the heartbeat is refreshed this often while waiting

log = logging.getLogger("fastgo.disk")

_lock = threading.RLock()
_state = {"policy": None, "should_stop": None, "heartbeat": None, "waiting": None,
          "delay": 0.0}
_local = threading.local()       # .depth: > 0 inside a wait or no_wait(): no nested waits


class DiskFullStop(BaseException):
    """The role stops because its disk is full (cluster.on_disk_full = "stop", or a stop was
    asked for while it waited). A BaseException, so that `except Exception` clauses on the way
    (a plot that must not stop the role) do not swallow it."""

    def __init__(self, path, err, *, stopping=False):
        super().__init__(path)
        self.path = os.fspath(path)
        self.err = err
        self.stopping = stopping

    def __str__(self):
        return (f"disk full ({describe(self.err)}) writing {_shown(self.path)}: "
                + ("stopped while waiting for space" if self.stopping
                   else "stopped (cluster.on_disk_full = \"stop\")"))


def disk_full(err):
    """The OSError with errno ENOSPC or EDQUOT in `err` or what it was raised from or during
    (torch wraps a failed write in a RuntimeError), else None."""
    seen = 0
    while err is not None and seen < 16:
        if isinstance(err, OSError) and err.errno in ERRNOS:
            return err
        err = err.__cause__ or err.__context__
        seen += 1
    return None


def describe(err) -> str:
    """'No space left on device' or 'Disk quota exceeded'."""
    return (err.strerror if isinstance(err, OSError) and err.strerror else
            os.strerror(getattr(err, "errno", None) or errno.ENOSPC))


def free_bytes(path):
    """Bytes the filesystem holding `path` (or its nearest existing folder) still gives an
    unprivileged writer, or None when it cannot tell."""
    path = os.path.abspath(os.fspath(path))
    while path and not os.path.exists(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    try:
        info = os.statvfs(path)
    except OSError:
        return None
    return info.f_bavail * info.f_frsize


def configure(policy, *, should_stop=None):
    """Turns the waiting (or stopping) on for this process: `policy` "wait" or "stop" (None:
    off); `should_stop() -> truthy` ends a wait with DiskFullStop (a stop signal came)."""
    if policy not in (None, *POLICIES):
        raise ValueError(f"on_disk_full: {policy!r} is not one of {POLICIES}")
    with _lock:
        _state["policy"] = policy
        if should_stop is not None:
            _state["should_stop"] = should_stop


def set_heartbeat(keep_alive):
    """`keep_alive()` is called while a write waits (at most every BEAT_S): the role's status
    file, showing condition(). It must not wait itself (no_wait)."""
    _state["heartbeat"] = keep_alive


def policy():
    return _state["policy"]


def condition():
    """While a write waits for space: {"path", "reason", "since" (Unix time), "free_bytes",
    "policy"}; else None."""
    return _state["waiting"]


@contextlib.contextmanager
def no_wait():
    """Writes inside do not wait for space (a heartbeat, an optional cache): they raise."""
    _local.depth = getattr(_local, "depth", 0) + 1
    try:
        yield
    finally:
        _local.depth -= 1


def handle(err, path) -> bool:
    """For a writer's `except` clause: False when `err` is not a full disk or this process
    does not wait (the writer raises `err`); otherwise waits for space and returns True (the
    writer tries again), or raises DiskFullStop."""
    full = disk_full(err)
    if full is None or _state["policy"] is None or getattr(_local, "depth", 0) > 0:
        return False
    path = os.fspath(path)
    if _state["policy"] == "stop":
        raise DiskFullStop(path, full) from err
    _wait(path, full)
    return True


def retry(path, write):
    """write() until it does not fail for a full disk (see handle); its result."""
    while True:
        try:
            result = write()
        except BaseException as err:
            if isinstance(err, DiskFullStop) or not handle(err, path):
                raise
            continue
        recovered(path)
        return result


def recovered(path):
    """The write to `path` has gone through: if it is the one that waited, the wait is over,
    which is said once. (Writes of other paths, a heartbeat's, prove nothing.)"""
    waiting = _state["waiting"]
    if waiting is None or waiting["path"] != os.fspath(path):
        return
    with _lock:
        if _state["waiting"] is not waiting:
            return
        _state["waiting"] = None
        _state["delay"] = 0.0
    log.warning("space again on the disk of %s: written after %.0f s of waiting",
                _shown(waiting["path"]), time.time() - waiting["since"])
    _beat()


def _wait(path, err):
    """One wait of the back-off (the first of a spell says so in one line)."""
    with _lock:
        free = free_bytes(path)
        if _state["waiting"] is None:
            _state["waiting"] = {"path": path, "reason": describe(err), "since": time.time(),
                                 "free_bytes": free, "policy": "wait"}
            log.warning("disk full (%s) writing %s (%s free there): waiting for space, trying "
                        "again with back-off up to every %.0f s (cluster.on_disk_full = \"wait\")",
                        describe(err), _shown(path), _size(free), MAX_WAIT_S)
        else:
            _state["waiting"].update(path=path, free_bytes=free)
        delay = _state["delay"] = min(MAX_WAIT_S, max(FIRST_WAIT_S, 2 * _state["delay"]))
    should_stop = _state["should_stop"]
    deadline = time.monotonic() + delay
    next_beat = 0.0
    _local.depth = getattr(_local, "depth", 0) + 1
    try:
        while True:
            if should_stop is not None and should_stop():
                raise DiskFullStop(path, err, stopping=True)
            now = time.monotonic()
            if now >= next_beat:
                _beat()
                next_beat = now + BEAT_S
            if now >= deadline:
                return
            more = free_bytes(path)
            if free is not None and more is not None and more > max(2 * free, free + (1 << 20)):
                _state["delay"] = 0.0              # room came back: try at once
                return
            time.sleep(min(TICK_S, deadline - now))
    finally:
        _local.depth -= 1


def _beat():
    keep_alive = _state["heartbeat"]
    if keep_alive is None:
        return
    with no_wait():
        try:
            keep_alive()
        except Exception:                 # a heartbeat must never end the wait
            pass


def _size(free):
    if free is None:
        return "unknown space"
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if free < 1024 or unit == "GiB":
            return f"{free:.0f} {unit}" if unit == "bytes" else f"{free:.1f} {unit}"
        free /= 1024
    return ""


def _shown(path):
    text = os.fspath(path)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")
