"""SIGTERM and SIGINT while a role ends: the stop under way runs to its end and the exit status
stays the role's own, even though Python puts the default handlers back while the interpreter
ends (a supervisor that repeats its SIGTERM would otherwise turn exit 0 into death by signal)."""
import os
import signal
import subprocess
import sys
import time

import pytest

# A role that stops on the first signal, returns 0, then takes a while to end: a module global's
# finaliser runs after the interpreter has put its default handlers back.
ROLE = r"""
import sys, time
from rundata.stop_signals import stop_on_signals

class SlowToEnd:
    def __del__(self):
        time.sleep(0.6)

slow = SlowToEnd()
stopping = stop_on_signals()
print("ready", flush=True)
while not stopping():
    time.sleep(0.001)
print("stopping", stopping(), flush=True)
sys.exit(0)
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_repeated_stop_signals_leave_a_clean_exit_status(sig):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, "-c", ROLE], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 20
        signals = 0
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                os.kill(proc.pid, sig)
                signals += 1
            except ProcessLookupError:
                break
            time.sleep(0.002)
        returncode = proc.wait(10)
        out = proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert f"stopping {sig.name}" in out
    assert signals > 50            # signals kept arriving through the slow end
    assert returncode == 0
