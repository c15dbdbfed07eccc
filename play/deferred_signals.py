"""SIGINT and SIGTERM for a match that keeps every game it finished (play.arena), main thread
only (elsewhere nothing is installed and nothing is held).

While a `with Interrupts() as signals:` block runs, the first signal raises KeyboardInterrupt at
once (a move that takes long, an engine that does not answer, are cut short) and from then on
every further signal is quiet: the step that ends the interrupted work (the finished games
counted, the report written, the engines ended) is not cut again, and a second Ctrl-C prints no
traceback. `hold()` marks a point from which a signal must not cut (the last game over, the
batch not yet counted): a signal is then held in `signum`, and `release()`, once the held step
is done, raises it. play.match's play_match holds at the end of its last round, so a batch is
handed back whole whatever the moment of the signal; the arena releases once the batch is
counted and written. `caught`: the signal that raised the KeyboardInterrupt (what `fastgo
compare` reports it was stopped by).
"""
from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType

SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


class Interrupts:
    """quiet_after: once interrupted (or a signal held), both signals stay ignored after the
    block too (a command that ends: a second Ctrl-C on its way out prints no traceback); else
    the handlers from before come back."""

    def __init__(self, quiet_after: bool = False):
        self.quiet_after = quiet_after
        self.holding = False        # a signal is held, not raised
        self.interrupted = False    # a KeyboardInterrupt was raised: every later signal quiet
        self.signum = None          # the first signal held while not interrupted
        self.caught = None          # the signal that raised the KeyboardInterrupt
        # each signal's handler from before __enter__ (what signal.signal returned)
        self._previous: dict[signal.Signals, Callable[[int, FrameType | None], object] | int
                             | signal.Handlers | None] = {}

    def _signal(self, signum, frame):
        if self.holding or self.interrupted:
            if not self.interrupted and self.signum is None:
                self.signum = signum
            return
        self._raise(signum)

    def _raise(self, signum):
        self.interrupted, self.caught, self.signum = True, signal.Signals(signum), None
        raise KeyboardInterrupt

    @property
    def signalled(self) -> bool:
        """Interrupted, or a signal held."""
        return self.interrupted or self.signum is not None

    def hold(self):
        """From now on a signal is held (in `signum`) until release()."""
        self.holding = True

    def quiet(self):
        """Every later signal quiet (an interrupt that came by another way than a signal)."""
        self.interrupted = True

    def release(self):
        """Signals raise again; one held meanwhile raises KeyboardInterrupt now (once)."""
        self.holding = False
        if self.signum is not None and not self.interrupted:
            self._raise(self.signum)

    def __enter__(self):
        if _main_thread():
            for sig in SIGNALS:
                self._previous[sig] = signal.signal(sig, self._signal)
        return self

    def __exit__(self, kind, value, traceback):
        for sig, handler in self._previous.items():
            signal.signal(sig, signal.SIG_IGN if self.quiet_after and self.signalled
                          else handler)
        self._previous = {}
        return False


def hold(signals):
    """signals.hold() where there is an Interrupts (None: nothing to hold)."""
    if signals is not None:
        signals.hold()
