"""A run directory on a small filesystem that fills up (a tmpfs of a few MiB, mounted here; the
test is skipped where mounting is not permitted). With cluster.on_disk_full = "wait" the
trainer says so in one line, waits with its heartbeat alive and goes on by itself once space is
freed, and the supervisor shows the condition on its status line and counts no restart; with
"stop" the role stops with one line naming the path, exit status 75, and the cluster stops
cleanly with the same status. Nothing written before is lost: every checkpoint loads, no
temporary file is left behind."""
import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from fastgo.diskfull import EXIT_STATUS

CLUSTER = """
[cluster]
workers = 0
evaluate = false
stuck_seconds = 20
backoff_s = 0.2
status_interval_s = 0.3
shutdown_s = 10
"""


@pytest.fixture
def small_disk(tmp_path):
    """A 24 MiB tmpfs at tmp_path/disk, unmounted afterwards."""
    disk = tmp_path / "disk"
    disk.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(disk)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip() or done.returncode}): "
                    f"the test needs root or CAP_SYS_ADMIN")
    try:
        yield disk
    finally:
        if subprocess.run(["umount", str(disk)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(disk)], capture_output=True)


def fill(disk, leave=64 << 10):
    """A file taking all but `leave` bytes of the filesystem at `disk` (or all of them, where
    a role writing meanwhile fills it first); its path."""
    info = os.statvfs(disk)
    path = disk / "filler"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        left = info.f_bavail * info.f_frsize - leave
        while left > 0:
            left -= os.write(fd, b"\0" * min(left, 1 << 20))
    except OSError as err:
        assert err.errno == errno.ENOSPC, err
    finally:
        os.close(fd)
    return path


def run_with_shards(disk, write_shard, game_record, random_moves):
    run = disk / "run"
    rng = np.random.default_rng(0)
    games = [game_record(5, 0.5, random_moves(5, 0.5, rng, length=30), 0, seed=i)
             for i in range(60)]
    write_shard(run / "shards", games, "test-0.shard", size=5, komi=0.5)
    return run


def status(run, role="train"):
    try:
        with open(run / "logs" / f"{role}.status.json") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return {}


def check_nothing_lost(run):
    from network.checkpoint import load_checkpoint

    names = sorted(os.listdir(run / "checkpoints"))
    assert not [n for n in names if n.startswith(".tmp")], names
    for name in names:
        load_checkpoint(run / "checkpoints" / name)
    for folder, _, files in os.walk(run):
        assert not [f for f in files if f.startswith(".tmp")], (folder, files)


def text(path):
    return open(path, errors="replace").read()


def test_the_trainer_waits_for_space_then_goes_on(small_disk, tmp_path, write_tiny_config,
                                                   write_shard, game_record, random_moves,
                                                   wait_for):
    config = write_tiny_config(tmp_path / "c.toml", checkpoint_every=1)
    run = run_with_shards(small_disk, write_shard, game_record, random_moves)
    filler = fill(small_disk)
    err = tmp_path / "train.err"
    with open(err, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "fastgo_cli.main", "train", "--config",
                                 config, "--run-dir", run, "--steps", "3", "--no-publish"],
                                stdout=subprocess.DEVNULL, stderr=out)
    try:
        wait_for(lambda: "disk full" in text(err), 120, 0.1, "the disk-full line")
        wait_for(lambda: "disk_full" in status(run), 30, 0.1, "the condition in the status file")
        line = [x for x in text(err).splitlines() if "disk full" in x]
        assert len(line) == 1 and "No space left on device" in line[0]
        assert str(run / "checkpoints") in line[0] and "waiting for space" in line[0]
        time.sleep(1.0)                      # still waiting, not crashed
        assert proc.poll() is None
        os.unlink(filler)
        assert proc.wait(120) == 0, text(err)[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    said = text(err)
    assert said.count("disk full") == 1 and said.count("space again") == 1, said[-3000:]
    assert "Traceback" not in said
    assert sorted(os.listdir(run / "checkpoints"))[-2:] == ["ckpt-000000003.ckpt", "latest.ckpt"]
    check_nothing_lost(run)


def test_the_trainer_stops_cleanly_when_told_to(small_disk, tmp_path, write_tiny_config,
                                                write_shard, game_record, random_moves):
    config = write_tiny_config(tmp_path / "c.toml", checkpoint_every=1)
    run = run_with_shards(small_disk, write_shard, game_record, random_moves)
    fill(small_disk)
    out = subprocess.run([sys.executable, "-m", "fastgo_cli.main", "train", "--config", config,
                          "--run-dir", run, "--steps", "3", "--no-publish", "--quiet",
                          "--set", "cluster.on_disk_full=stop"],
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == EXIT_STATUS, out.stderr[-3000:]
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "disk full (No space left on device)" in lines[0], lines
    assert str(run / "checkpoints") in lines[0] and "stop" in lines[0]
    check_nothing_lost(run)


def test_a_role_whose_output_is_on_the_full_disk_still_stops_with_its_status(
        small_disk, tmp_path, write_tiny_config, write_shard, game_record, random_moves):
    # under a supervisor a role's stdout and stderr are files on the run's disk: the line it
    # cannot write must not turn its exit status into 1 (a crash, restarted and counted)
    config = write_tiny_config(tmp_path / "c.toml", checkpoint_every=1)
    run = run_with_shards(small_disk, write_shard, game_record, random_moves)
    fill(small_disk, leave=0)
    with open(small_disk / "train.out", "wb") as out:
        code = subprocess.run([sys.executable, "-m", "fastgo_cli.main", "train", "--config",
                               config, "--run-dir", run, "--steps", "3", "--no-publish",
                               "--quiet", "--set", "cluster.on_disk_full=stop"],
                              stdout=out, stderr=subprocess.STDOUT, timeout=180).returncode
    assert code == EXIT_STATUS
    check_nothing_lost(run)


def cluster_config(tmp_path, write_tiny_config, free_endpoint, policy):
    config = write_tiny_config(tmp_path / "c.toml", checkpoint_every=5, endpoint=free_endpoint(),
                               extra=CLUSTER + f'on_disk_full = "{policy}"\n')
    text_config = (open(config).read().replace("min_positions = 1000", "min_positions = 200")
                   .replace("samples_per_position = 4.0", "samples_per_position = 100000.0"))
    open(config, "w").write(text_config)
    return config


def start_cluster(config, run, log):
    with open(log, "ab") as out:
        return subprocess.Popen([sys.executable, "-m", "fastgo_cli.main", "cluster", "--config",
                                 config, "--run-dir", run], stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)


def keep_logs(run, tmp_path):
    """The run's logs copied beside the test's files: the tmpfs goes with the test."""
    shutil.copytree(run / "logs", tmp_path / "logs", dirs_exist_ok=True)


def stop_cluster(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(40)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
        raise AssertionError("the cluster did not stop") from None


def test_the_cluster_shows_the_wait_counts_no_restart_and_goes_on(
        small_disk, tmp_path, write_tiny_config, free_endpoint, write_shard, game_record,
        random_moves, wait_for):
    config = cluster_config(tmp_path, write_tiny_config, free_endpoint, "wait")
    run = run_with_shards(small_disk, write_shard, game_record, random_moves)
    log = tmp_path / "cluster.out"
    proc = start_cluster(config, run, log)
    try:
        wait_for(lambda: status(run).get("step", 0) >= 10, 180, 0.1, "training to start")
        filler = fill(small_disk)
        wait_for(lambda: "train: disk full" in text(log), 90, 0.1, "the supervisor's line")
        wait_for(lambda: "DISK FULL: waiting for space: train" in text(log), 30, 0.1,
                 "the condition on the status line")
        step = status(run).get("step", 0)
        assert proc.poll() is None and "keeps failing" not in text(log)
        os.unlink(filler)
        wait_for(lambda: "train: space again" in text(log), 90, 0.1, "the end of the wait")
        wait_for(lambda: status(run).get("step", 0) > step + 5, 90, 0.1, "training to go on")
    finally:
        code = stop_cluster(proc)
        keep_logs(run, tmp_path)
    said = text(log)
    assert code == 0, said[-3000:]
    assert said.count("train: disk full") == 1 and "restart" not in said.split("stopped after")[0]
    assert "restarts 0" in said
    check_nothing_lost(run)


def test_the_cluster_stops_cleanly_on_a_full_disk_when_told_to(
        small_disk, tmp_path, write_tiny_config, free_endpoint, write_shard, game_record,
        random_moves, wait_for):
    config = cluster_config(tmp_path, write_tiny_config, free_endpoint, "stop")
    run = run_with_shards(small_disk, write_shard, game_record, random_moves)
    log = tmp_path / "cluster.out"
    proc = start_cluster(config, run, log)
    try:
        wait_for(lambda: status(run).get("step", 0) >= 10, 180, 0.1, "training to start")
        fill(small_disk)
        code = proc.wait(90)
    finally:
        stop_cluster(proc)
        keep_logs(run, tmp_path)
    said = text(log)
    assert code == EXIT_STATUS, said[-3000:]
    assert "stopping: train stopped on a full disk" in said and "keeps failing" not in said
    check_nothing_lost(run)


def test_the_final_rating_never_waits_for_space(small_disk, tmp_path, write_tiny_config):
    """`fastgo evaluate --once` (the final rating of a run that reached its duration) on a full
    disk with cluster.on_disk_full = "wait": it stops at once with exit status 75 and one line
    (it used to wait for space for up to evaluator.final_rating_s), and the supervisor's summary
    says the rating was skipped and why."""
    from network.checkpoint import save_checkpoint
    from network.model import build_model
    from rundata.config import load_config
    from rundata.rundir import open_run_dir
    from supervision.local_launcher import LocalCluster

    config_path = write_tiny_config(tmp_path / "c.toml", extra="""
[cluster]
evaluate = true
on_disk_full = "wait"
[evaluator]
anchors = ["random"]
visits = 4
batch_games = 2
max_games = 2
final_rating_s = 120
""")
    config = load_config(config_path)
    run = small_disk / "run"
    run_dir = open_run_dir(run)
    save_checkpoint(run_dir.checkpoint(10), build_model(config.model, seed=1), step=10)
    fill(small_disk, leave=0)
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "fastgo_cli.main", "evaluate", "--config",
                           str(config_path), "--run-dir", str(run), "--once", "--quiet"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == EXIT_STATUS, done.stderr[-2000:]
    assert time.monotonic() - began < 60
    assert "disk full" in done.stderr and "Traceback" not in done.stderr
    # the supervisor's side: the same exit status becomes the summary's line
    cluster = LocalCluster(config, str(config_path), run_dir, workers=0, evaluate=True,
                           log=lambda line: None)
    assert cluster.final_evaluation(lambda: False) is None
    assert cluster.final_note.startswith("final rating of ckpt-10 skipped: the disk is full")
    assert cluster.final_note in cluster.summary()
