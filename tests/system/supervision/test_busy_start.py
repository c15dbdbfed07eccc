"""A role busy starting is not stuck: a real process whose first step runs far longer than
cluster.stuck_seconds under StatusFile.busy is never found stuck by the supervisor's rule
(RoleChild.progress, RestartPolicy.stuck), while the same process silent for as long is."""
import sys
import time
from types import SimpleNamespace

from fastgo.run.rundir import open_run_dir
from supervision.restarts import RestartPolicy
from supervision.role_child import RoleChild
from supervision.role_process import RoleProcess

STUCK_S = 1.0        # a short stuck time; the fake's first step takes 3 s
ROLE = '''
import sys, time
from fastgo.run.rundir import StatusFile, RunDir
status = StatusFile(RunDir(sys.argv[1]), "train", interval_s=0.2)
status.beat(lambda: {"step": 0}, force=True)
if sys.argv[2] == "busy":
    with status.busy("compiling the training step"):
        time.sleep(3.0)
else:
    time.sleep(3.0)
status.beat(lambda: {"step": 1}, force=True)
print("fake: done", flush=True)
time.sleep(30)
'''


def _watch(tmp_path, mode):
    """Runs the fake role under the stuck rule; the seconds at which it was first found stuck
    (None: never) and whether it reached its first step."""
    (tmp_path / "fake_train.py").write_text(ROLE)
    run_dir = open_run_dir(tmp_path / "run")
    child = RoleChild("train", run_dir, "train")
    child.process = RoleProcess([run_dir.root, mode], child.out_path, module="fake_train",
                                cwd=tmp_path, name="train",
                                env={"PYTHONPATH": ":".join(sys.path)}).start()
    policy = RestartPolicy(SimpleNamespace(stuck_seconds=STUCK_S), lambda line: None)
    try:
        began = time.monotonic()
        found = None
        while time.monotonic() - began < 15.0:
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
