"""Helpers for the learning-loop tests: a small config, role processes started through the real
`fastgo` command, bounded stops by PID."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from cluster.process import ServerProcess

TINY = """
[model]
board_size = {size}
blocks = 2
channels = 16
value_hidden = 32

[server]
endpoint = "{endpoint}"
max_batch = 64
max_wait_us = 500
device = "cpu"
threads = 1
backend = "torch"
slots = ["current"]

[selfplay]
games = {games}
visits = {visits}
komi = 0.5
temperature_moves = 4
resign_threshold = -1.0
shard_games = {shard_games}
shard_seconds = {shard_seconds}
seed = 7
sgf_every = 50

[trainer]
batch_size = 128
lr = 0.05
min_positions = 1000
samples_per_position = 4.0
checkpoint_every = {checkpoint_every}
window_size = 20000
device = "cpu"
seed = 1
"""


def free_endpoint():
    """A loopback TCP endpoint whose port was free a moment ago."""
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{sock.getsockname()[1]}"


def write_tiny_config(path, *, size=5, games=64, visits=24, shard_games=64, shard_seconds=5.0,
                      checkpoint_every=50, endpoint="tcp://127.0.0.1:5555", extra=""):
    with open(path, "w") as handle:
        handle.write(TINY.format(size=size, games=games, visits=visits, shard_games=shard_games,
                                 shard_seconds=shard_seconds, checkpoint_every=checkpoint_every,
                                 endpoint=endpoint) + extra)
    return str(path)


def start_server(config_path, log_path):
    return ServerProcess(config_path, endpoint="tcp://127.0.0.1:*", log_path=str(log_path)).start()


def fastgo(*args, log_path=None, **kwargs):
    """A `fastgo ...` child process (stdout and stderr to log_path or a pipe)."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    out = open(log_path, "ab") if log_path else subprocess.PIPE
    try:
        return subprocess.Popen([sys.executable, "-m", "fastgo_cli.main", *map(str, args)],
                                stdout=out, stderr=subprocess.STDOUT, env=env, **kwargs)
    finally:
        if log_path:
            out.close()


def stop(proc, timeout_s=20.0):
    """SIGTERM, bounded wait, then SIGKILL; returns the exit status."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout_s)
    return proc.returncode


def wait_for(predicate, timeout_s, interval_s=0.05, what="condition"):
    """Polls predicate() until true (returns its value) or raises after timeout_s."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(interval_s)


def run_learning_loop(config_path, run, tmp_path, train_seconds, grace_s=60.0):
    """One `fastgo serve`, one `fastgo selfplay` and `fastgo train --seconds train_seconds` on
    the run directory; returns when the trainer has exited (it must exit 0 within
    train_seconds + grace_s) and the worker has been stopped; everything is stopped on failure.
    Logs go to tmp_path (serve.log, train.out, selfplay.out)."""
    server = start_server(config_path, tmp_path / "serve.log")
    worker = trainer = None
    try:
        trainer = fastgo("train", "--config", config_path, "--run-dir", run, "--server",
                         server.endpoint, "--seconds", train_seconds, "--quiet",
                         log_path=tmp_path / "train.out")
        worker = fastgo("selfplay", "--config", config_path, "--run-dir", run, "--server",
                        server.endpoint, "--quiet", log_path=tmp_path / "selfplay.out")
        trainer.wait(train_seconds + grace_s)
        assert trainer.returncode == 0, (tmp_path / "train.out").read_text()[-3000:]
        assert stop(worker) == 0, (tmp_path / "selfplay.out").read_text()[-3000:]
    finally:
        for proc in (worker, trainer):
            if proc is not None:
                stop(proc)
        server.stop()
