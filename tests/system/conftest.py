"""Fixtures for the system tests: the reference forward pass a served reply is compared with, and
the recorder as a real process with the game ids it and a worker's outbox hold."""
import os
import select
import subprocess
import sys

import pytest


@pytest.fixture(scope="session")
def forward():
    """forward(model, x) -> (logits float32 [B, N*N+1], values float32 [B]) as numpy arrays:
    the eval-mode torch model on uint8 planes x [B, P, N, N], the reference evaluation."""
    import torch

    def evaluate(model, x):
        with torch.no_grad():
            logits, values = model.eval()(torch.from_numpy(x).float())
        return logits.numpy(), values.numpy()
    return evaluate


@pytest.fixture(scope="session")
def recorder_config(write_tiny_config):
    """recorder_config(path, endpoint, recorder, *, shard_seconds, max_unconfirmed=256,
    timeout_s=3.0) -> str(path): the tiny 5x5 config with the [selfplay] recorder keys and a
    [recorder] section bound to `recorder`."""
    def write(path, endpoint, recorder, *, shard_seconds, max_unconfirmed=256, timeout_s=3.0):
        write_tiny_config(path, size=5, games=8, visits=4, shard_games=1000,
                          shard_seconds=shard_seconds, endpoint=endpoint,
                          extra=f'\n[recorder]\nendpoint = "{recorder}"\n')
        with open(path) as handle:
            text = handle.read()
        text = text.replace("[selfplay]\n", f'[selfplay]\nrecorder = "{recorder}"\n'
                            f'max_unconfirmed = {max_unconfirmed}\nrecorder_timeout_s = {timeout_s}\n', 1)
        with open(path, "w") as handle:
            handle.write(text)
        return str(path)
    return write


@pytest.fixture(scope="session")
def start_recorder(stop):
    """start_recorder(config, run_dir, log_path) -> a `fastgo recorder` process, returned once
    it printed its ready line (within 30 s, else the test fails)."""
    def start(config, run_dir, log_path):
        env = dict(os.environ, OMP_NUM_THREADS="1")
        with open(log_path, "ab") as log:
            proc = subprocess.Popen([sys.executable, "-m", "fastgo_cli.main", "recorder", "--config",
                                     str(config), "--run-dir", str(run_dir), "--quiet"],
                                    stdout=subprocess.PIPE, stderr=log, text=True, env=env)
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        line = proc.stdout.readline() if ready else ""
        if "ready on" not in line:
            stop(proc)
            with open(log_path) as log:
                raise AssertionError(f"recorder did not start: {line!r} {log.read()[-1500:]}")
        return proc
    return start


def _shard_ids(shard_dir):
    """Every game id in the complete shards of shard_dir, in order (duplicates kept)."""
    from rundata.shards import list_shards, read_shard

    ids = []
    for name in list_shards(shard_dir):
        ids.extend(g.id for g in read_shard(os.path.join(shard_dir, name)).games)
    return ids


def _outbox_ids(run_dir, worker=0):
    """The ids of the games waiting in worker `worker`'s outbox (a set; empty when none)."""
    folder = os.path.join(run_dir, f"outbox-w{worker}")
    try:
        return {n[:-5] for n in os.listdir(folder) if n.endswith(".game")}
    except FileNotFoundError:
        return set()


def _confirmed_ids(run_dir, worker=0):
    """The ids worker `worker` saw the recorder confirm (a set; empty when none)."""
    path = os.path.join(run_dir, f"outbox-w{worker}", "confirmed.ids")
    try:
        with open(path) as handle:
            return {line.strip() for line in handle if line.strip()}
    except FileNotFoundError:
        return set()


@pytest.fixture(scope="session")
def shard_ids():
    return _shard_ids


@pytest.fixture(scope="session")
def outbox_ids():
    return _outbox_ids


@pytest.fixture(scope="session")
def confirmed_ids():
    return _confirmed_ids
