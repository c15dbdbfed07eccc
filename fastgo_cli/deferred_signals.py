"""SIGINT and SIGTERM held back while a step that must not be cut runs (a finished batch counted
and its SGFs written, a result appended): `with deferred_interrupts() as held:` runs the step,
then raises the KeyboardInterrupt a signal meanwhile asked for (or, with raise_after=False,
leaves it in held.signum); `quiet()` ignores both from then on (a second Ctrl-C while a command
ends prints no traceback). Main thread only; elsewhere both do nothing."""
from __future__ import annotations

import signal
import threading

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class deferred_interrupts:
    def __init__(self, raise_after: bool = True):
        self.raise_after = raise_after
        self.signum = None          # the first signal that came while held
        self._previous = {}

    def _hold(self, signum, frame):
        if self.signum is None:
            self.signum = signum

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in SIGNALS:
                self._previous[sig] = signal.signal(sig, self._hold)
        return self

    def __exit__(self, kind, value, traceback):
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        if self.raise_after and self.signum is not None and kind is None:
            raise KeyboardInterrupt
        return False


def quiet():
    """SIGINT and SIGTERM ignored from now on in this process."""
    if threading.current_thread() is threading.main_thread():
        for sig in SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
