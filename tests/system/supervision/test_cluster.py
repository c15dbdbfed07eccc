"""`fastgo cluster` in a subprocess: a worker killed with SIGKILL comes back, a SIGSTOPped one is
detected and restarted, SIGTERM ends everything within the bound with no partial shard or
checkpoint, a second start on the same run directory resumes the step count."""
import os
import re
import signal
import subprocess
import sys
import time

from network.checkpoint import load_checkpoint
from rundata.shards import list_shards, read_shard

CLUSTER = """
[cluster]
workers = 1
evaluate = false
stuck_seconds = 6
backoff_s = 0.2
status_interval_s = 0.5
shutdown_s = 10
"""


def start(config, run, log):
    out = open(log, "ab")
    proc = subprocess.Popen([sys.executable, "-m", "fastgo_cli.main", "cluster", "--config", config,
                             "--run-dir", run], stdout=out, stderr=subprocess.STDOUT,
                            start_new_session=True)
    out.close()
    return proc


def text(path):
    return open(path, errors="replace").read()


def worker_pid(log, after=0):
    pids = re.findall(r"selfplay-w0\s+pid (\d+)", text(log))
    return int(pids[-1]) if len(pids) > after else None


def train_step(run):
    import json
    try:
        with open(os.path.join(run, "logs", "train.status.json")) as handle:
            return json.load(handle)["step"]
    except (OSError, ValueError, KeyError):
        return -1


def stop_cluster(proc, bound_s=12.0):
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(bound_s + 10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
        raise AssertionError("the cluster did not stop") from None
    return time.monotonic() - started


def test_cluster_supervises_and_stops_in_order(tmp_path, free_endpoint, wait_for, write_tiny_config):
    config = write_tiny_config(tmp_path / "c.toml", games=16, visits=8, shard_games=8,
                               shard_seconds=1.0, checkpoint_every=20,
                               endpoint=free_endpoint(), extra=CLUSTER)
    text_config = open(config).read().replace("min_positions = 1000", "min_positions = 200")
    open(config, "w").write(text_config)
    run = str(tmp_path / "run")
    log = tmp_path / "cluster.out"
    proc = start(config, run, log)
    try:
        wait_for(lambda: worker_pid(log), 90, 0.1, "the worker to start")
        wait_for(lambda: list_shards(os.path.join(run, "shards")), 90, 0.1, "a first shard")
        # 1. SIGKILL: the worker comes back under a new pid
        first = worker_pid(log)
        os.kill(first, signal.SIGKILL)
        wait_for(lambda: "selfplay-w0 exited with status -9" in text(log), 30, 0.1, "the exit")
        wait_for(lambda: "restart 1" in text(log), 30, 0.1, "the restart")
        wait_for(lambda: len(list_shards(os.path.join(run, "shards"))) >= 3, 90, 0.1, "more shards")
        # 2. SIGSTOP: stuck, not dead: killed and restarted
        victim = _child_pids(proc.pid, "selfplay")
        assert victim, "no worker process found"
        os.kill(victim[0], signal.SIGSTOP)
        wait_for(lambda: "made no progress" in text(log), 60, 0.2, "stuck detection")
        wait_for(lambda: "restart 2" in text(log), 30, 0.1, "the second restart")
        wait_for(lambda: train_step(run) >= 20, 120, 0.2, "training steps")
    finally:
        took = stop_cluster(proc)
    assert took < 10.5, f"shutdown took {took:.1f} s"
    assert proc.returncode == 0, text(log)[-3000:]
    out = text(log)
    assert "stopped after" in out and "SIGTERM" in out
    for name in list_shards(os.path.join(run, "shards")):      # no partial shard
        read_shard(os.path.join(run, "shards", name))
    for name in os.listdir(os.path.join(run, "checkpoints")):  # no half-written checkpoint
        if name.endswith(".ckpt") and not name.startswith("."):
            load_checkpoint(os.path.join(run, "checkpoints", name))
    step = load_checkpoint(os.path.join(run, "checkpoints", "latest.ckpt")).step
    assert step >= 20
    # 3. started again on the same directory, it resumes the step count
    proc = start(config, run, tmp_path / "cluster2.out")
    try:
        wait_for(lambda: f"resumed at step {step}" in text(os.path.join(run, "logs", "train.log")),
                 90, 0.2, "the trainer to resume")
    finally:
        stop_cluster(proc)
    assert proc.returncode == 0


def _child_pids(parent, word):
    """PIDs of processes whose command line contains `word`, in parent's process tree."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as handle:
                ppid = int(handle.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                cmd = handle.read().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError, IndexError):
            continue
        if ppid == parent and word in cmd:
            out.append(int(pid))
    return out


def test_cluster_refuses_an_endpoint_another_server_holds(tmp_path, free_endpoint, write_tiny_config):
    """Its roles must never talk to a server that is not its own: it stops before starting them."""
    from supervision.role_process import ServerProcess

    endpoint = free_endpoint()
    config = write_tiny_config(tmp_path / "c.toml", endpoint=endpoint, extra=CLUSTER)
    with ServerProcess(config, endpoint=endpoint, log_path=str(tmp_path / "other.log")) as other:
        before = other.proc.pid
        out = subprocess.run([sys.executable, "-m", "fastgo_cli.main", "cluster", "--config", config,
                              "--run-dir", str(tmp_path / "run"), "--duration", "20s"],
                             capture_output=True, text=True, timeout=120)
        assert other.alive() and other.proc.pid == before
    assert out.returncode == 2, out.stdout + out.stderr
    assert "in use" in out.stderr and "Traceback" not in out.stderr
    assert not os.path.exists(tmp_path / "run" / "checkpoints" / "latest.ckpt")   # no trainer ran
