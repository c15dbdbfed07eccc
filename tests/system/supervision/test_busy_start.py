"""A role busy starting is not stuck, within a bound: a real process whose first step runs far
longer than cluster.stuck_seconds under StatusFile.busy is never found stuck by the supervisor's
rule (RoleChild.progress, RestartPolicy.stuck), while the same process silent for as long is; a
role that says it is busy for ever (its status file's "busy", or a server's start-up lines) is
restarted once it has said so for cluster.busy_limit_s, in a line naming it and the setting
(supervision.local_launcher.unwell, RestartPolicy.busy_past)."""
import sys
import time
from types import SimpleNamespace

from rundata.rundir import open_run_dir
from supervision.local_launcher import unwell
from supervision.restarts import Backoff, RestartPolicy
from supervision.role_child import RoleChild
from supervision.role_process import RoleProcess

STUCK_S = 1.0        # a short stuck time; the fake's first step takes 3 s
BUSY_S = 1.5         # a short busy bound, over STUCK_S: a stale heartbeat would be found first
WAIT_S = 15.0        # no test waits longer for what it watches
CC = SimpleNamespace(stuck_seconds=STUCK_S, busy_limit_s=BUSY_S, restart_window_s=300.0,
                     max_restarts=5, backoff_s=1.0, backoff_max_s=1.0, on_disk_full="wait")
ROLE = '''
import sys, time
from rundata.rundir import StatusFile, RunDir
status = StatusFile(RunDir(sys.argv[1]), "train", interval_s=0.2)
status.beat(lambda: {"step": 0}, force=True)
if sys.argv[2] == "busy":
    with status.busy("compiling the training step", 900.0):
        time.sleep(3.0)
elif sys.argv[2] == "forever":
    with status.busy("compiling the training step", 3600.0):     # beats past every test's end
        time.sleep(3600.0)
else:
    time.sleep(3.0)
status.beat(lambda: {"step": 1}, force=True)
print("fake: done", flush=True)
time.sleep(30)
'''
SERVER = '''
import time
step = 0
while True:                            # a backend timing that never ends, one line a backend
    print(f"fake serve: starting: timing backend {step}", flush=True)
    step += 1
    time.sleep(0.2)
'''


def _start(tmp_path, module, text, child, mode):
    """Starts `text` as module `module` (argv: the run directory, `mode`) as `child`'s process."""
    (tmp_path / f"{module}.py").write_text(text)
    child.process = RoleProcess([child.run_dir.root, mode], child.out_path, module=module,
                                cwd=tmp_path, name=child.role,
                                env={"PYTHONPATH": ":".join(sys.path)}).start()


def _watch(tmp_path, mode):
    """Runs the fake role under the stuck rule; the seconds at which it was first found stuck
    (None: never) and whether it reached its first step."""
    child = RoleChild("train", open_run_dir(tmp_path / "run"), "train")
    _start(tmp_path, "fake_train", ROLE, child, mode)
    policy = RestartPolicy(CC, lambda line: None)
    try:
        began = time.monotonic()
        found = None
        while time.monotonic() - began < WAIT_S:
            data, last, beaten = child.progress()
            if found is None and beaten and policy.stuck(time.monotonic() - last, beaten):
                found = time.monotonic() - began
            if data is not None and data.get("step") == 1:
                return found, True
            time.sleep(0.05)
        return found, False
    finally:
        child.process.stop(5.0)


def test_a_busy_start_longer_than_the_stuck_time_is_not_stuck(tmp_path):
    found, reached = _watch(tmp_path, "busy")
    assert reached and found is None


def test_the_same_start_in_silence_is_stuck(tmp_path):
    found, reached = _watch(tmp_path, "silent")
    assert reached and found is not None and STUCK_S <= found < 3.5


def _busy_for_ever(child):
    """Supervises `child` (started) as the local launcher does, from its first sign of being
    busy to the first reason to restart it: (that reason, the seconds from the first sign, the
    seconds since its last sign of progress then, the supervisor's log lines after the restart)."""
    role = SimpleNamespace(role=child.role, child=child, backoff=Backoff(),
                           log_path=child.log_path, out_path=child.out_path)
    lines = []
    policy = RestartPolicy(CC, lines.append)
    try:
        deadline = time.monotonic() + WAIT_S
        while True:                                    # its first sign of being busy
            data, _, beaten = child.progress()
            if child.busy(data, beaten) is not None:
                break
            assert child.alive() and time.monotonic() < deadline, child.last_line()
            time.sleep(0.05)
        began = time.monotonic()
        while (why := unwell(policy, role, time.monotonic())) is None:
            assert child.alive() and time.monotonic() < deadline, child.last_line()
            time.sleep(0.05)
        found = time.monotonic() - began
        idle = time.monotonic() - child.progress()[1]
        assert child.alive()                           # at work, as far as anyone can tell
        child.kill()
        assert policy.restart(role, why) is None
        return why, found, idle, lines
    finally:
        child.stop(5.0)


def test_a_role_busy_for_ever_is_restarted_past_the_busy_bound_in_a_line_naming_it(tmp_path):
    child = RoleChild("train", open_run_dir(tmp_path / "run"), "train")
    _start(tmp_path, "fake_train", ROLE, child, "forever")
    why, found, idle, lines = _busy_for_ever(child)
    # its heartbeat fresh (not stuck); restarted within a few ticks of the bound
    assert idle < STUCK_S and BUSY_S <= found < BUSY_S + 3.0
    assert why.startswith("said it was busy (compiling the training step) for ")
    assert why.endswith(" s, past cluster.busy_limit_s = 1.5 s; killed")
    assert lines == [f"train {why}; restart 1 in 1 s (log {child.log_path})"]


def test_a_server_timing_for_ever_is_restarted_past_the_busy_bound(tmp_path):
    # no status file: the server's start-up lines are its signs of progress and of being busy
    child = RoleChild("serve", open_run_dir(tmp_path / "run"), None,
                      starting="fake serve: starting: ")
    _start(tmp_path, "fake_serve", SERVER, child, "forever")
    why, found, idle, lines = _busy_for_ever(child)
    assert idle < STUCK_S and BUSY_S <= found < BUSY_S + 3.0
    assert why.startswith("said it was busy (timing backend ")
    assert why.endswith(" s, past cluster.busy_limit_s = 1.5 s; killed")
    assert lines[0].startswith("serve said it was busy (timing backend ")
