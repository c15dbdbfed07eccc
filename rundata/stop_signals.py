"""SIGTERM and SIGINT as a request to stop rather than a death: every long-running process of a
run (the roles through roles.start, a self-play worker's loop, the supervisor) finishes its step
and writes what it holds, and a second signal while it ends cannot change its exit status."""
from __future__ import annotations

import atexit
import signal


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


def stop_on_signals(then=None):
    """SIGTERM and SIGINT ask the process to stop (finish its step, write what it holds)
    instead of killing it, and call `then()` when given (a server's or recorder's own stop);
    returns the callable that says whether one has arrived: None until then, then the name of
    the latest one ('SIGTERM' or 'SIGINT')."""
    stopped = [None]

    def handler(signum, frame):
        stopped[0] = signal.Signals(signum).name
        if then is not None:
            then()
    on_stop_signals(handler)
    return lambda: stopped[0]


def ignore_stop_signals():
    """SIGTERM and SIGINT are ignored from now on: a shutdown under way runs to its end."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
