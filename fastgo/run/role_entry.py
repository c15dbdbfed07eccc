"""The wrapper every long-running role shares: logging to its own file in the run directory
(and to stderr), any exception logged with its traceback, then a loud non-zero exit; a config
error is one line and exit status 2; a full disk is one line and fastgo.diskfull.EXIT_STATUS
(the supervisor waits for space or stops the run, cluster.on_disk_full, and counts no crash)."""
from __future__ import annotations

import atexit
import logging
import os
import signal
import sys

from fastgo import diskfull
from fastgo.diskfull import disk_full
from fastgo.files import NotRegularFile, printable, reason
from fastgo.run.config import ConfigError


def setup_logging(log_path: str | None, *, quiet: bool = False):
    """The root logger at INFO to `log_path` (appended) and to stderr; `quiet`: the file only
    (stderr still when there is no file). Replaces any handlers set before."""
    handlers = []
    if log_path:
        handlers.append(_LogFile(log_path))
    if not quiet or not handlers:
        handlers.append(logging.StreamHandler(sys.stderr))
    logging.basicConfig(level=logging.INFO, handlers=handlers, force=True,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")


class _LogFile(logging.FileHandler):
    """A role's log file: a line the full disk cannot take is lost, with no traceback about it
    on stderr (which is on the same disk under a supervisor)."""

    def handleError(self, record):
        if disk_full(sys.exc_info()[1]) is None:
            super().handleError(record)


def on_disk_full(config, should_stop=None, *, policy=None):
    """Turns on waiting or stopping on a full disk for this role (fastgo.diskfull) as
    cluster.on_disk_full of `config` says (or `policy`: "stop" for an optional step that must
    never wait for space); a wait ends on `should_stop()` (default: the signals
    stop_on_signals() has seen)."""
    diskfull.configure(policy or config.cluster.on_disk_full,
                       should_stop=should_stop or _stop_requested.get("callable"))


_stop_requested = {}


def run_role(name: str, body) -> int:
    """Runs body() -> exit status; ConfigError, or NotRegularFile (something other than a file
    where the role reads or writes one): one line, 2; a full disk (fastgo.diskfull: a stop, or
    a write that does not wait): one line, diskfull.EXIT_STATUS; any other exception: logged
    with its traceback, 1."""
    try:
        return int(body() or 0)
    except ConfigError as err:
        print(f"fastgo {name}: {err}", file=sys.stderr)
        return 2
    except NotRegularFile as err:        # a folder, FIFO or device where a file goes: no restart helps
        print(f"fastgo {name}: {printable(err.filename)}: {reason(err)}", file=sys.stderr)
        return 2
    except diskfull.DiskFullStop as err:
        _say_on_full_disk(f"fastgo {name}: {err}")
        return diskfull.EXIT_STATUS
    except KeyboardInterrupt:
        return 130
    except Exception as err:
        full = diskfull.disk_full(err)
        if full is not None:
            _say_on_full_disk(f"fastgo {name}: disk full ({diskfull.describe(full)}) writing "
                              f"{printable(full.filename or 'a file')}: stopped")
            return diskfull.EXIT_STATUS
        logging.getLogger(f"fastgo.{name}").exception("fastgo %s failed", name)
        return 1


def _say_on_full_disk(line):
    """`line` on stderr, which a supervisor keeps on the disk that is full: a line it cannot
    take is lost, and the streams are pointed at /dev/null so that flushing them at exit
    cannot turn the exit status into another."""
    try:
        print(line, file=sys.stderr, flush=True)
        sys.stdout.flush()
    except OSError:
        null = open(os.devnull, "w")
        sys.stdout, sys.stderr = null, null


def on_stop_signals(handler):
    """SIGTERM and SIGINT call `handler(signum, frame)` instead of killing the process, and are
    ignored once the interpreter ends: Python puts the default handlers back then, so a second
    SIGTERM (a supervisor's, say) would turn a clean stop under way into a death by signal."""
    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    # atexit hooks run before the interpreter resets the handlers; registered once however
    # often this is called
    atexit.unregister(ignore_stop_signals)
    atexit.register(ignore_stop_signals)


def stop_on_signals():
    """SIGTERM and SIGINT ask the role to stop (finish its step, write what it holds) instead of
    killing it; returns the callable that says whether one has arrived: None until then, then
    the name of the latest one ('SIGTERM' or 'SIGINT')."""
    stopped = [None]

    def handler(signum, frame):
        stopped[0] = signal.Signals(signum).name
    on_stop_signals(handler)
    _stop_requested["callable"] = lambda: stopped[0]
    return _stop_requested["callable"]


def ignore_stop_signals():
    """SIGTERM and SIGINT are ignored from now on: a shutdown under way runs to its end."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
