"""The role-process abstraction with real processes: the ready line and the endpoint after it,
an exit before it (status and last line), a deadline renewed by start-up lines up to a cap, and
the bounded stop by PID (SIGTERM answered; SIGTERM ignored, then SIGKILL)."""
import os
import signal
import time

import pytest

from supervision.role_process import RoleProcess, RoleStartError, last_line

FAKE_ROLE = '''
import signal, sys, time
mode = sys.argv[1]
if mode == "ignore-term":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
else:
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
print("starting", flush=True)
print("fake: ready", flush=True)                      # not the marker: no space, no endpoint
if mode == "refuse":
    print("fake: bad setting x.y", file=sys.stderr, flush=True)
    sys.exit(2)
if mode in ("serve", "ignore-term"):
    print("fake: ready on tcp://127.0.0.1:4242", flush=True)
if mode in ("busy-start", "silent-start", "busy-forever"):
    for step in range(10**6 if mode == "busy-forever" else 8):
        if mode != "silent-start":
            print(f"fake: starting: step {step}", flush=True)
        time.sleep(0.25)
    print("fake: ready on tcp://127.0.0.1:4343", flush=True)
if mode == "partial":
    sys.stdout.write("fake: ready on tcp://never")     # no newline: not a complete line
    sys.stdout.flush()
while True:
    time.sleep(0.05)
'''
READY = "fake: ready on "


@pytest.fixture
def role(tmp_path):
    (tmp_path / "fake_role.py").write_text(FAKE_ROLE)

    def make(mode, **kwargs):
        return RoleProcess([mode], tmp_path / f"{mode}.out", module="fake_role", cwd=tmp_path,
                           ready=READY, **kwargs)
    return make


def gone(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_ready_line_gives_the_endpoint_and_sigterm_stops_it(role, tmp_path):
    (tmp_path / "serve.out").write_text("fake: ready on tcp://old-run:1\n")   # an earlier run's
    process = role("serve").start()
    assert process.endpoint == "tcp://127.0.0.1:4242" and process.alive()
    assert process.output().splitlines() == ["starting", "fake: ready", "fake: ready on tcp://127.0.0.1:4242"]
    assert process.stop(timeout_s=10) == 0 and not process.alive()


def test_an_exit_before_the_ready_line_is_reported_with_status_and_last_line(role):
    with pytest.raises(RoleStartError) as caught:
        role("refuse").start()
    assert caught.value.code == 2 and caught.value.last_line == "fake: bad setting x.y"
    assert "refuse did not start" in str(caught.value)


def test_no_complete_ready_line_by_the_deadline_stops_it(role):
    process = role("partial", ready_timeout_s=1.0)
    started = time.monotonic()
    with pytest.raises(RoleStartError) as caught:
        process.start()
    assert 1.0 <= time.monotonic() - started < 6.0          # the deadline, then a 2 s stop at most
    assert caught.value.code is None and gone(process.pid) and process.returncode == 0


def test_a_role_that_ignores_sigterm_is_killed_after_the_bound(role):
    process = role("ignore-term").start()
    started = time.monotonic()
    assert process.stop(timeout_s=0.5) == -signal.SIGKILL
    assert 0.5 <= time.monotonic() - started < 5.0 and gone(process.pid)


def test_last_line_of_a_missing_or_blank_log(tmp_path):
    assert last_line(tmp_path / "none.out") == "(no output)"
    (tmp_path / "blank.out").write_text("first\n\n  \n")
    assert last_line(tmp_path / "blank.out") == "first"


def test_a_start_that_says_it_is_busy_is_waited_for_past_the_timeout(role):
    # 8 steps of 0.25 s: 2 s to the ready line, twice the timeout, each line renewing the wait
    process = role("busy-start", ready_timeout_s=1.0).start()
    try:
        assert process.endpoint == "tcp://127.0.0.1:4343"
        assert process.output().count("fake: starting: step") == 8
    finally:
        process.stop(timeout_s=10)


def test_a_silent_start_past_the_timeout_is_refused(role):
    began = time.monotonic()
    with pytest.raises(RoleStartError) as caught:
        role("silent-start", ready_timeout_s=1.0).start()
    assert time.monotonic() - began < 1.9          # the ready line would have come at 2 s
    assert not caught.value.capped                 # silent: not cut short while busy


def test_a_start_that_never_ends_is_refused_at_the_cap(role):
    from supervision.role_process import START_CAP

    began = time.monotonic()
    with pytest.raises(RoleStartError) as caught:
        role("busy-forever", ready_timeout_s=0.6).start()
    assert START_CAP * 0.6 - 0.1 <= time.monotonic() - began < START_CAP * 0.6 + 3.0
    assert caught.value.capped


def test_a_start_that_never_ends_is_refused_at_the_cap_it_is_given(role):
    # the supervisor passes cluster.busy_limit_s: here 1.5 s, under START_CAP timeouts (15 s)
    began = time.monotonic()
    with pytest.raises(RoleStartError) as caught:
        role("busy-forever", ready_timeout_s=1.0, ready_cap_s=1.5).start()
    assert 1.5 <= time.monotonic() - began < 1.5 + 3.0        # the cap, then a 2 s stop at most
    assert caught.value.capped and caught.value.last_line.startswith("fake: starting: step ")
