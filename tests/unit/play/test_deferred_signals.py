"""play.deferred_signals.Interrupts, what keeps an arena's finished games: the first signal
raises at once and every later one is quiet; once held, a signal waits in `signum` and release()
raises it once; the process's handlers come back at the end."""
import signal

import pytest

from play.deferred_signals import Interrupts


@pytest.fixture(autouse=True)
def own_handlers():
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)


def test_the_first_signal_raises_and_the_later_ones_are_quiet():
    with Interrupts() as signals:
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGTERM)
        signal.raise_signal(signal.SIGINT)              # quiet: nothing raised
        signal.raise_signal(signal.SIGTERM)
        signals.release()                                # nothing held to raise
    assert signals.caught == signal.SIGTERM and signals.signum is None
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_held_signal_waits_for_release_and_raises_once():
    with Interrupts() as signals:
        signals.hold()
        signal.raise_signal(signal.SIGINT)
        signal.raise_signal(signal.SIGTERM)
        assert signals.signum == signal.SIGINT and not signals.interrupted
        with pytest.raises(KeyboardInterrupt):
            signals.release()
        assert signals.caught == signal.SIGINT and signals.signum is None
        signal.raise_signal(signal.SIGINT)              # interrupted: quiet from now on
        signals.release()


def test_released_without_a_signal_it_interrupts_again():
    with Interrupts() as signals:
        signals.hold()
        signals.release()
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)


def test_quiet_after_leaves_both_signals_ignored_once_interrupted():
    with Interrupts(quiet_after=True) as signals:
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
    assert signals.interrupted
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
    signal.signal(signal.SIGINT, signal.default_int_handler)
    with Interrupts(quiet_after=True):                 # not interrupted: the handlers come back
        pass
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
