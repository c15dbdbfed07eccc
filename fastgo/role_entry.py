"""The wrapper every long-running role shares: logging to its own file in the run directory
(and to stderr), any exception logged with its traceback, then a loud non-zero exit; a config
error is one line and exit status 2."""
from __future__ import annotations

import logging
import signal
import sys


def setup_logging(log_path: str | None, *, quiet: bool = False):
    """The root logger at INFO to `log_path` (appended) and to stderr; `quiet`: the file only
    (stderr still when there is no file). Replaces any handlers set before."""
    handlers = []
    if log_path:
        handlers.append(logging.FileHandler(log_path))
    if not quiet or not handlers:
        handlers.append(logging.StreamHandler(sys.stderr))
    logging.basicConfig(level=logging.INFO, handlers=handlers, force=True,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")


def run_role(name: str, body) -> int:
    """Runs body() -> exit status; ConfigError, or NotRegularFile (something other than a file
    where the role reads or writes one): one line, 2; any other exception: logged with its
    traceback, 1."""
    from fastgo.config import ConfigError
    from fastgo.files import NotRegularFile, printable, reason

    try:
        return int(body() or 0)
    except ConfigError as err:
        print(f"fastgo {name}: {err}", file=sys.stderr)
        return 2
    except NotRegularFile as err:        # a folder, FIFO or device where a file goes: no restart helps
        print(f"fastgo {name}: {printable(err.filename)}: {reason(err)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception:
        logging.getLogger(f"fastgo.{name}").exception("fastgo %s failed", name)
        return 1


def stop_on_signals():
    """SIGTERM and SIGINT ask the role to stop (finish its step, write what it holds) instead of
    killing it; returns the callable that says whether one has arrived: None until then, then
    the name of the latest one ('SIGTERM' or 'SIGINT')."""
    stopped = [None]

    def handler(signum, frame):
        stopped[0] = signal.Signals(signum).name
    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    return lambda: stopped[0]


def ignore_stop_signals():
    """SIGTERM and SIGINT are ignored from now on: a shutdown under way runs to its end."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
