"""Hosts as network namespaces, joined by veth pairs on 10.x addresses, each with its own
temporary folder and no path in common: a GPU host (server, trainer, recorder) and two worker
hosts with CURVE keys, plus a host whose key is not allowed. Games travel to the recorder,
checkpoints to the server as bytes, training advances; the unknown key gets nothing; a worker
host whose link goes down for a while and comes back loses no confirmed game and duplicates
none. Needs root (CAP_NET_ADMIN) and `ip`; skipped with the reason where namespaces cannot be
created."""
from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time

import pytest

SERVER_PORT, RECORDER_PORT = 5555, 5557


def _ip(*args, check=True):
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=20, check=check)


class Hosts:
    """Namespaces NAME-g (the GPU host) and NAME-wK, one veth pair each to the GPU host:
    10.SUBNET.K.1 on the GPU side, 10.SUBNET.K.2 on the worker's."""

    def __init__(self, workers):
        tag = f"fg{os.getpid() % 100000}"
        self.gpu = f"{tag}g"
        self.workers = [f"{tag}w{k}" for k in range(1, workers + 1)]
        self.subnet = 100 + os.getpid() % 100
        self.links = {}
        self.created = []

    def setup(self):
        _ip("netns", "add", self.gpu)
        self.created.append(self.gpu)
        _ip("-n", self.gpu, "link", "set", "lo", "up")
        for k, ns in enumerate(self.workers, start=1):
            _ip("netns", "add", ns)
            self.created.append(ns)
            outer, inner = f"{self.gpu}{k}", f"{ns}v"
            _ip("link", "add", outer, "netns", self.gpu, "type", "veth", "peer", "name", inner,
                "netns", ns)
            _ip("-n", self.gpu, "addr", "add", f"10.{self.subnet}.{k}.1/24", "dev", outer)
            _ip("-n", ns, "addr", "add", f"10.{self.subnet}.{k}.2/24", "dev", inner)
            for name, where in ((outer, self.gpu), (inner, ns), ("lo", ns)):
                _ip("-n", where, "link", "set", name, "up")
            self.links[ns] = inner
        return self

    def gpu_address(self, k):
        return f"10.{self.subnet}.{k}.1"

    def set_link(self, ns, up):
        _ip("-n", ns, "link", "set", self.links[ns], "up" if up else "down")

    def cleanup(self):
        for ns in reversed(self.created):
            _ip("netns", "del", ns, check=False)


def _namespaces_work():
    if shutil.which("ip") is None:
        return "the `ip` command is missing"
    name = f"fgprobe{os.getpid() % 100000}"
    result = _ip("netns", "add", name, check=False)
    if result.returncode != 0:
        return f"cannot create a network namespace: {result.stderr.strip()[:200]}"
    _ip("netns", "del", name, check=False)
    return ""


def _in(ns, *args, log_path):
    """`ip netns exec NS python -m fastgo_cli.main ARGS` (stdout piped, stderr to log_path)."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    with open(log_path, "ab") as log:
        return subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-m",
                                 "fastgo_cli.main", *map(str, args)],
                                stdout=subprocess.PIPE, stderr=log, text=True, env=env)


def _ready(proc, log_path, timeout_s=60):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        line = proc.stdout.readline()
        if "ready on" in line:
            return line.strip().rsplit(" ", 1)[-1]
        if not line:
            break
    raise AssertionError(f"no ready line: {open(log_path).read()[-1500:]}")


@pytest.fixture
def host_config(tiny_config_text):
    """host_config(folder, *, selfplay="", trainer="", server="", recorder="") -> the path of
    FOLDER/fastgo.toml: the tiny 5x5 config with these keys added to each section."""
    return lambda folder, **sections: _host_config(tiny_config_text, folder, **sections)


def _host_config(template, folder, *, selfplay="", trainer="", server="", recorder=""):
    text = template.format(size=5, games=8, visits=4, shard_games=1000, shard_seconds=0.5,
                       checkpoint_every=5, endpoint="tcp://127.0.0.1:5555")
    text = text.replace("[selfplay]\n", "[selfplay]\n" + selfplay, 1)
    text = text.replace("[trainer]\n", "[trainer]\n" + trainer, 1)
    text = text.replace("batch_size = 128", "batch_size = 32").replace(
        "min_positions = 1000", "min_positions = 150")
    text = text.replace('endpoint = "tcp://127.0.0.1:5555"\n', server, 1)
    text += "\n[recorder]\n" + recorder
    path = os.path.join(folder, "fastgo.toml")
    with open(path, "w") as handle:
        handle.write(text)
    return path


def _keys(folder, name):
    result = subprocess.run([sys.executable, "-m", "fastgo_cli.main", "keys", "new", name,
                             "-o", folder], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return os.path.join(folder, f"{name}.key"), os.path.join(folder, f"{name}.key_secret")


def _server_stats(ns, config, port):
    code = ("import json, sys; from rundata.config import load_config; "
            "from wire.keys import client_keys; "
            "from wire.client import InferenceClient; "
            "c = load_config(sys.argv[1]).trainer; s, k = client_keys(c.curve_key_file, "
            "c.server_public_key, 'trainer'); "
            f"print(json.dumps(InferenceClient('tcp://127.0.0.1:{port}', timeout_s=5, retries=1, "
            "server_public_key=s, key_pair=k).stats()))")
    result = subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c", code, config],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr[-1500:]
    return json.loads(result.stdout)


def test_three_hosts_with_curve_and_a_cut_link(tmp_path, host_config, wait_for, stop, confirmed_ids,
                                               outbox_ids, shard_ids):
    reason = _namespaces_work()
    if reason:
        pytest.skip(reason)
    hosts = Hosts(workers=3)
    gpu_dir, *worker_dirs = [tmp_path / name for name in ("gpu", "w1", "w2", "w3")]
    for folder in (gpu_dir, *worker_dirs):
        os.makedirs(folder / "keys")
    procs = []
    try:
        hosts.setup()
        # keys: each host makes its own pair; public halves are handed out by copying files
        server_pub, _ = _keys(str(gpu_dir / "keys"), "server")
        recorder_pub, _ = _keys(str(gpu_dir / "keys"), "recorder")
        trainer_pub, _ = _keys(str(gpu_dir / "keys"), "trainer")
        allowed = gpu_dir / "keys" / "allowed"
        os.makedirs(allowed)
        shutil.copy(trainer_pub, allowed)
        for k, folder in enumerate(worker_dirs, start=1):
            public, _ = _keys(str(folder / "keys"), f"worker{k}")
            if k < 3:                                   # host 3's key is never allowed
                shutil.copy(public, allowed)
            shutil.copy(server_pub, folder / "keys")
            shutil.copy(recorder_pub, folder / "keys")
        gkeys = gpu_dir / "keys"
        gpu_config = host_config(
            gpu_dir,
            server=f'endpoint = "tcp://*:{SERVER_PORT}"\ncurve_secret_key_file = '
                   f'"{gkeys}/server.key_secret"\ncurve_allowed = ["{allowed}"]\n',
            recorder=f'endpoint = "tcp://*:{RECORDER_PORT}"\ncurve_secret_key_file = '
                     f'"{gkeys}/recorder.key_secret"\ncurve_allowed = ["{allowed}"]\n',
            trainer=f'curve_key_file = "{gkeys}/trainer.key_secret"\n'
                    f'server_public_key = "{gkeys}/server.key"\n')
        gpu_run = gpu_dir / "run"
        server = _in(hosts.gpu, "serve", "--config", gpu_config, log_path=gpu_dir / "serve.log")
        procs.append(server)
        recorder = _in(hosts.gpu, "recorder", "--config", gpu_config, "--run-dir", gpu_run,
                       "--quiet", log_path=gpu_dir / "recorder.log")
        procs.append(recorder)
        _ready(server, gpu_dir / "serve.log")
        _ready(recorder, gpu_dir / "recorder.log")
        trainer = _in(hosts.gpu, "train", "--config", gpu_config, "--run-dir", gpu_run,
                      "--server", f"tcp://127.0.0.1:{SERVER_PORT}", "--quiet",
                      log_path=gpu_dir / "train.log")
        procs.append(trainer)
        workers = []
        for k, folder in enumerate(worker_dirs, start=1):
            config = host_config(
                folder,
                selfplay=f'curve_key_file = "{folder}/keys/worker{k}.key_secret"\n'
                         f'server_public_key = "{folder}/keys/server.key"\n'
                         f'recorder_public_key = "{folder}/keys/recorder.key"\n'
                         f'recorder_timeout_s = 2.0\ntimeout_s = 5.0\n')
            address = hosts.gpu_address(k)
            workers.append(_in(hosts.workers[k - 1], "selfplay", "--config", config, "--run-dir",
                               folder / "run", "--server", f"tcp://{address}:{SERVER_PORT}",
                               "--recorder", f"tcp://{address}:{RECORDER_PORT}",
                               "--worker-id", k, "--quiet", log_path=folder / "selfplay.log"))
        procs.extend(workers)
        w1_run, w2_run, w3_run = (folder / "run" for folder in worker_dirs)
        wait_for(lambda: len(confirmed_ids(w1_run, 1)) >= 8 and len(confirmed_ids(w2_run, 2)) >= 8,
                 60, what="games from both worker hosts confirmed")
        # host 1's link goes down for a while and comes back
        hosts.set_link(hosts.workers[0], up=False)
        before = confirmed_ids(w1_run, 1)
        wait_for(lambda: len(confirmed_ids(w2_run, 2)) >= 16, 30, what="host 2 going on")
        assert confirmed_ids(w1_run, 1) == before
        hosts.set_link(hosts.workers[0], up=True)
        wait_for(lambda: len(confirmed_ids(w1_run, 1)) >= len(before) + 8, 30,
                 what="host 1 confirmed again after its link came back")
        # training advanced and its checkpoint reached the server as bytes
        wait_for(lambda: _server_stats(hosts.gpu, gpu_config, SERVER_PORT)["versions"]["current"] > 0,
                 60, interval_s=1.0, what="the server serving a published checkpoint")
        stats = _server_stats(hosts.gpu, gpu_config, SERVER_PORT)
        assert stats["curve_denied"] >= 1
        # host 3 (unknown key) got nothing: no game played, nothing recorded from it
        assert not confirmed_ids(w3_run, 3)
        w3_status = json.loads((w3_run / "logs" / "selfplay-w3.status.json").read_text()) \
            if (w3_run / "logs" / "selfplay-w3.status.json").exists() else {"evals": 0, "games": 0}
        assert w3_status["evals"] == 0 and w3_status["games"] == 0
        # Every role ran to here (the checks above also hold for a host-3 worker that crashed
        # at start): host 3 got past its setup and is refused, not dead of its own fault.
        for proc in (server, recorder, trainer, *workers[:2]):
            assert proc.poll() is None, \
                f"fastgo {proc.args[7]} in {proc.args[3]} exited with status {proc.returncode}"
        w3_log = (w3_run / "logs" / "selfplay-w3.log").read_text()
        assert "worker 3: 8 games at once" in w3_log, w3_log[-1500:]
        assert workers[2].poll() is None or (workers[2].returncode == 1
                                             and "unavailable" in w3_log), w3_log[-1500:]
        for worker in workers[:2]:
            assert stop(worker) == 0
        assert not outbox_ids(w1_run, 1) and not outbox_ids(w2_run, 2)
        recorded = shard_ids(gpu_run / "shards")
        assert len(recorded) == len(set(recorded)), "a game was recorded twice"
        assert confirmed_ids(w1_run, 1) | confirmed_ids(w2_run, 2) == set(recorded)
        assert sum(1 for n in os.listdir(gpu_run / "checkpoints") if n.startswith("ckpt-")) >= 1
    finally:
        for proc in reversed(procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in procs:
            stop(proc, timeout_s=10)
            if proc.stdout:
                proc.stdout.close()
        hosts.cleanup()
