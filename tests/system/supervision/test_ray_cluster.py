"""`fastgo cluster --launcher ray` on a local multi-node Ray cluster (ray.cluster_utils.Cluster):
a "trainer" node (server, trainer, evaluator) and two "worker" nodes. The roles land on the
nodes their resources name (the driver's report checked against the cluster's own node ids and
against the process tree of each node's raylet), games are recorded, the trainer publishes a
checkpoint the server serves, a worker's actor killed with SIGKILL is restarted by Ray and counted
in the status line, and SIGTERM stops everything within the bound. The local launcher never
imports ray."""
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

CLUSTER = """
[cluster]
launcher = "ray"
workers = 2
evaluate = true
stuck_seconds = 30
backoff_s = 0.2
status_interval_s = 0.5
shutdown_s = 8
server_resources = {CPU = 0, trainer_node = 0.25}
trainer_resources = {CPU = 0, trainer_node = 0.25}
evaluator_resources = {CPU = 0}
worker_resources = {CPU = 0, worker_node = 1}
[evaluator]
every = 1000000
batch_games = 2
max_games = 2
anchors = ["random"]
"""
LINE = re.compile(r"fastgo cluster: (\S+)\s+node ([0-9a-f]+) \(\S+\) actor pid (\d+) pid (\d+)")


def text(path):
    return open(path, errors="replace").read()


def placements(log):
    """{role: (node id, actor pid, child pid)} as the driver printed them."""
    return {m.group(1): (m.group(2), int(m.group(3)), int(m.group(4))) for m in LINE.finditer(text(log))}


def ancestors(pid):
    out = []
    while pid > 1:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                pid = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
        out.append(pid)
    return out


def cmdline(pid):
    with open(f"/proc/{pid}/cmdline", "rb") as handle:
        return handle.read().replace(b"\0", b" ").decode(errors="replace")


def worker_status(run, role):
    import json
    try:
        with open(os.path.join(run, "logs", f"{role}.status.json")) as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return {}


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_local_launcher_does_not_import_ray(tmp_path, write_tiny_config):
    config = write_tiny_config(tmp_path / "c.toml")
    code = ("import sys\n"
            "from rundata.config import load_config\n"
            "from rundata.rundir import open_run_dir\n"
            "from supervision.local_launcher import LocalCluster\n"
            "import fastgo_cli.cluster_cmd\n"
            f"config = load_config({config!r})\n"
            f"run_dir = open_run_dir({str(tmp_path / 'run')!r})\n"
            f"cluster = LocalCluster(config, {config!r}, run_dir, 2, True, print)\n"
            "print(cluster.summary())\n"
            "sys.exit(1 if 'ray' in sys.modules else 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "self-play games 0" in out.stdout


def test_address_needs_the_ray_launcher(tmp_path, write_tiny_config):
    config = write_tiny_config(tmp_path / "c.toml")
    out = subprocess.run([sys.executable, "-m", "fastgo_cli.main", "cluster", "--config", config,
                          "--run-dir", str(tmp_path / "run"), "--address", "127.0.0.1:1"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "fastgo cluster: --address: only with --launcher ray (or cluster.launcher = \"ray\")"]


def test_ray_launcher_errors_are_one_line(tmp_path, write_tiny_config):
    """Without the ray package, or with an address where no Ray cluster listens: one line, 2."""
    import socket
    config = write_tiny_config(tmp_path / "c.toml")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]                 # nothing listens there once closed
    no_ray = ("import sys; sys.modules['ray'] = None\n"
              "from fastgo_cli.main import main\n"
              f"sys.exit(main(['cluster', '--config', {config!r}, '--launcher', 'ray']))")
    for argv, expected in (([sys.executable, "-c", no_ray], "needs the optional package ray"),
                           ([sys.executable, "-m", "fastgo_cli.main", "cluster", "--config", config,
                             "--launcher", "ray", "--address", f"127.0.0.1:{closed}"],
                            f"--address 127.0.0.1:{closed}: no Ray cluster there")):
        out = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert out.returncode == 2, out.stdout + out.stderr
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and expected in lines[0], out.stderr


@pytest.mark.needs("ray")
def test_ray_cluster_places_restarts_and_stops(tmp_path, monkeypatch, wait_for, write_tiny_config):
    from ray.cluster_utils import Cluster

    from rundata.shards import list_shards, read_shard
    from wire.client import InferenceClient

    config = write_tiny_config(tmp_path / "c.toml", games=16, visits=8, shard_games=8,
                               shard_seconds=1.0, checkpoint_every=10, extra=CLUSTER)
    tiny = text(config).replace("min_positions = 1000", "min_positions = 200")
    with open(config, "w") as handle:
        handle.write(tiny)
    bad = tmp_path / "bad.toml"
    bad.write_text(tiny.replace("worker_node = 1}", "worker_node = 1, GPU = 4}"))
    run = tmp_path / "run"
    log = tmp_path / "cluster.out"
    small = {"object_store_memory": 80 << 20}
    # A node that leaves is declared dead after 3 missed health checks a second apart (not 15 s).
    monkeypatch.setenv("RAY_health_check_period_ms", "1000")
    monkeypatch.setenv("RAY_health_check_failure_threshold", "3")
    cluster = Cluster(initialize_head=True, head_node_args=dict(
        num_cpus=1, resources={"trainer_node": 1}, include_dashboard=False, **small))
    proc = None
    try:
        workers = [cluster.add_node(num_cpus=1, resources={"worker_node": 2}, **small) for _ in range(2)]
        cluster.wait_for_nodes()
        head = cluster.head_node
        raylets = {n.node_id: n.all_processes["raylet"][0].process.pid for n in [head, *workers]}

        # A role no node can take: one line, exit status 2, before anything starts.
        out = subprocess.run([sys.executable, "-m", "fastgo_cli.main", "cluster", "--config", str(bad),
                              "--run-dir", str(tmp_path / "bad"), "--address", cluster.address],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 2, out.stdout + out.stderr
        assert "cluster.worker_resources" in out.stderr and "no node of the Ray cluster" in out.stderr
        assert "Traceback" not in out.stderr

        with open(log, "ab") as handle:
            proc = subprocess.Popen([sys.executable, "-m", "fastgo_cli.main", "cluster", "--config",
                                     config, "--run-dir", str(run), "--address", cluster.address],
                                    stdout=handle, stderr=subprocess.STDOUT, start_new_session=True)
        roles = ("serve", "train", "recorder", "evaluate", "selfplay-w0", "selfplay-w1")
        where = wait_for(lambda: (lambda p: p if all(r in p for r in roles) else None)(placements(log)),
                         60, 0.2, "the roles to start")
        # 1. placed by their resources: server, trainer, recorder, evaluator on the trainer node, one worker
        #    on each worker node (SPREAD); each actor's process lives under its node's raylet
        assert {where[r][0] for r in ("serve", "train", "recorder", "evaluate")} == {head.node_id}
        assert {where["selfplay-w0"][0], where["selfplay-w1"][0]} == {w.node_id for w in workers}
        for role, (node, actor, child) in where.items():
            assert raylets[node] in ancestors(actor), (role, node)
            assert actor in ancestors(child), role
        # 2. workers on other nodes than the trainer's send their games to the recorder, which
        #    writes the shards; the trainer publishes a checkpoint the server serves
        for role in ("selfplay-w0", "selfplay-w1"):
            assert "--recorder" in cmdline(where[role][2]), role
        wait_for(lambda: len([n for n in list_shards(os.path.join(run, "shards")) if "-rec-" in n]) >= 2,
                 60, 0.2, "shards written by the recorder")
        assert not [n for n in list_shards(os.path.join(run, "shards")) if "-rec-" not in n]
        for role in ("selfplay-w0", "selfplay-w1"):
            wait_for(lambda: worker_status(run, role).get("confirmed", 0) > 0, 30, 0.2,
                     f"games of {role} confirmed by the recorder")
        endpoint = (re.findall(r"serve on (tcp://\S+)", text(log)) or [None])[-1]
        recorder = (re.findall(r"recorder on (tcp://\S+)", text(log)) or [None])[-1]
        assert endpoint.startswith("tcp://127.0.0.1:"), endpoint     # every node is this machine
        assert recorder.startswith("tcp://127.0.0.1:"), recorder

        def served_version():
            client = InferenceClient(endpoint, timeout_s=2.0, retries=0)
            try:
                return client.stats()["versions"]["current"]
            except Exception:
                return 0
            finally:
                client.close()
        wait_for(lambda: served_version() > 0, 60, 0.5, "a published checkpoint")
        # 3. SIGKILL a worker's actor process: Ray restarts it, the role comes back and is counted
        node, actor, child = where["selfplay-w0"]
        os.kill(actor, signal.SIGKILL)
        killed = time.time()
        wait_for(lambda: "selfplay-w0 lost its actor" in text(log), 30, 0.2, "the loss to be seen")
        wait_for(lambda: not alive(child), 10, 0.1, "the worker's process to die with its actor")
        wait_for(lambda: re.search(r"restarts 1 \(selfplay-w0 1\)", text(log)), 40, 0.2,
                 "the restart in the status line")
        again = wait_for(lambda: re.search(r"selfplay-w0 running: node (\S+) \(\S+\) actor pid (\d+) "
                                           r"pid (\d+)", text(log)), 30, 0.2, "the worker to run again")
        assert again.group(1) in {w.node_id for w in workers}
        assert int(again.group(2)) != actor and int(again.group(3)) != child
        assert "--recorder" in cmdline(int(again.group(3)))
        wait_for(lambda: (lambda s: s.get("confirmed", 0) > 0 and s["seconds"] < time.time() - killed)(
            worker_status(run, "selfplay-w0")), 60, 0.2, "games of the restarted worker recorded")
        # 4. the node of worker 1 leaves: Ray places its actor on the other worker node, the
        #    role runs there and its games reach the recorder again
        gone = next(w for w in workers if w.node_id == where["selfplay-w1"][0])
        cluster.remove_node(gone, allow_graceful=False)
        moved = wait_for(lambda: re.search(r"selfplay-w1 running: node (\S+) \(\S+\) actor pid (\d+) "
                                           r"pid (\d+)", text(log)), 60, 0.2, "worker 1 on another node")
        assert moved.group(1) != gone.node_id and moved.group(1) in {w.node_id for w in workers}
        left = time.time()
        wait_for(lambda: (lambda s: s.get("confirmed", 0) > 0 and s["seconds"] < time.time() - left)(
            worker_status(run, "selfplay-w1")), 60, 0.2, "games of the moved worker recorded")
        # 5. SIGTERM: everything stops within the bound
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
        took = time.monotonic() - started
    finally:
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        cluster.shutdown()
    out = text(log)
    assert proc.returncode == 0, out[-3000:]
    assert took < 8 + 10, f"the driver took {took:.1f} s to stop"
    assert "stopped after" in out and "SIGTERM" in out
    assert re.search(r"restarts 2 \(selfplay-w0 1, selfplay-w1 1\)", out.split("stopped after")[1])
    pids = [child for role, (node, actor, child) in where.items() if role != "selfplay-w0"]
    for pid in pids + [int(again.group(3)), int(moved.group(3))]:
        assert not alive(pid), f"pid {pid} outlived the cluster"
    for name in list_shards(os.path.join(run, "shards")):      # no partial shard
        read_shard(os.path.join(run, "shards", name))
    # the driver shares this machine's run directory: the dashboard's status file is there,
    # with the restarts counted by its last status line (the first one at least)
    status = json.loads(open(os.path.join(run, "logs", "cluster.status.json")).read())
    assert status["restarts"] and set(status["restarts"]) <= {"selfplay-w0", "selfplay-w1"}
    assert status["line"].startswith("0:") and "games" in status["line"]
