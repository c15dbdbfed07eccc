"""`fastgo bench selfplay --remote`: games per second recorded through the recorder against a
worker writing its own shards, both over the same path to the same server: a veth pair between
two network namespaces where this user may create them (server and recorder in one, the worker in
the other), else loopback; CURVE on. Also the recorder's CPU per game."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile


class _Namespaces:
    """Two network namespaces joined by a veth pair: NAME-a (server, recorder) on 10.SUB.0.1,
    NAME-b (the worker) on 10.SUB.0.2. setup() returns False where they cannot be made."""

    def __init__(self):
        tag = f"fgb{os.getpid() % 100000}"
        self.a, self.b = f"{tag}a", f"{tag}b"
        self.sub = 100 + os.getpid() % 100
        self.created = []

    def _ip(self, *args):
        return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=20).returncode == 0

    def setup(self):
        import shutil
        if shutil.which("ip") is None or not self._ip("netns", "add", self.a):
            return False
        self.created.append(self.a)
        ok = self._ip("netns", "add", self.b)
        if ok:
            self.created.append(self.b)
        ok = ok and self._ip("link", "add", f"{self.a}v", "netns", self.a, "type", "veth", "peer",
                             "name", f"{self.b}v", "netns", self.b)
        for ns, address in ((self.a, 1), (self.b, 2)):
            ok = ok and self._ip("-n", ns, "addr", "add", f"10.{self.sub}.0.{address}/24", "dev", f"{ns}v")
            ok = ok and self._ip("-n", ns, "link", "set", f"{ns}v", "up")
            ok = ok and self._ip("-n", ns, "link", "set", "lo", "up")
        if not ok:
            self.cleanup()
        return ok

    @property
    def host(self):
        return f"10.{self.sub}.0.1"

    def cleanup(self):
        for ns in reversed(self.created):
            self._ip("netns", "del", ns)
        self.created = []


def _free_port():
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _cpu_seconds(pid):
    """utime + stime of a process from /proc (seconds)."""
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _write_config(config, workdir, host, ports):
    """The bench's config with CURVE keys for the server, the recorder and the worker (allowed
    by both); returns (config path, server endpoint, recorder endpoint)."""
    from rundata.config import to_dict
    from supervision.role_process import write_toml
    from wire.keys import write_key_pair

    keys = os.path.join(workdir, "keys")
    allowed = os.path.join(keys, "allowed")
    os.makedirs(allowed)
    for name in ("server", "recorder"):
        write_key_pair(keys, name)
    write_key_pair(allowed, "worker")
    server_ep, recorder_ep = (f"tcp://{host}:{port}" for port in ports)
    sections = {
        "model": to_dict(config.model),
        "server": {**to_dict(config.server), "endpoint": server_ep, "checkpoints": {},
                   "log_file": "", "curve_secret_key_file": f"{keys}/server.key_secret",
                   "curve_allowed": [allowed]},
        "selfplay": {**to_dict(config.selfplay), "curve_key_file": f"{allowed}/worker.key_secret",
                     "server_public_key": f"{keys}/server.key",
                     "recorder_public_key": f"{keys}/recorder.key", "recorder": ""},
        "trainer": to_dict(config.trainer),
        "recorder": {**to_dict(config.recorder), "endpoint": recorder_ep,
                     "curve_secret_key_file": f"{keys}/recorder.key_secret",
                     "curve_allowed": [allowed]},
    }
    return write_toml(os.path.join(workdir, "bench.toml"), sections), server_ep, recorder_ep


def _round(args, mode, index, workdir, config_path, server_ep, recorder_ep, near, far):
    """One worker for warmup + seconds writing its shards (mode "local") or sending its games
    to a recorder started for the round (mode "remote"): {"mode", "games" (in shards),
    "finished" (by the worker), "seconds" (the worker's), "recorder_cpu_s"}."""
    from fastgo_cli.bench.harness import SERVER_START_S, WORKER_GRACE_S, finish_worker, worker_argv
    from roles.flags import CONFIG, QUIET, RUN_DIR
    from roles.registry import Role
    from rundata.shards import list_shards, read_shard
    from supervision.role_process import RoleProcess

    run_dir = os.path.join(workdir, f"{mode}{index}")
    recorder = cpu0 = cpu = None
    extra = []
    if mode == "remote":
        recorder = RoleProcess([Role.RECORDER.command, *CONFIG.argv(config_path),
                                *RUN_DIR.argv(run_dir), *QUIET.argv(True)],
                               os.path.join(workdir, "rec.log"), ready=Role.RECORDER.ready,
                               ready_timeout_s=SERVER_START_S, prefix=near).start()
        cpu0 = _cpu_seconds(recorder.pid)
        extra = ["--recorder", recorder_ep]
    seconds = args.warmup + args.seconds
    worker = RoleProcess(worker_argv(args, config_path, run_dir, server_ep, seconds, *extra),
                         os.path.join(workdir, f"selfplay-{mode}{index}.out"), prefix=far)
    try:
        stats = finish_worker(worker.start(), seconds + WORKER_GRACE_S)
        if recorder is not None:
            cpu = _cpu_seconds(recorder.pid) - cpu0
    finally:
        worker.stop()
        if recorder is not None:
            recorder.stop()                           # closes its last shard
    shard_dir = os.path.join(run_dir, "shards")
    recorded = sum(len(read_shard(os.path.join(shard_dir, n), check_rules=False).games)
                   for n in list_shards(shard_dir))
    print(f"  round {index + 1} {mode}: {recorded} games in shards "
          f"({stats['games']} finished) in {stats['seconds']:.1f} s"
          + (f", recorder CPU {cpu:.2f} s" if cpu is not None else ""), file=sys.stderr, flush=True)
    return {"mode": mode, "games": recorded, "finished": stats["games"],
            "seconds": stats["seconds"], "recorder_cpu_s": cpu}


def run_remote(args, config) -> int:
    """Rounds alternate a worker writing its own shards and the same worker sending its games
    to a recorder; both talk to the same server over the same path. games/s: games in shards
    (the worker's, or the recorder's after it closed its last shard) over the worker's own
    seconds. The recorder's CPU: /proc, from its ready line to the end of the round."""
    from fastgo_cli.bench.figures import write_json
    from fastgo_cli.bench.harness import SERVER_START_S
    from roles.flags import CONFIG
    from roles.registry import Role
    from supervision.role_process import RoleProcess

    estimate = args.rounds * 2 * (args.seconds + args.warmup + 4) + 15
    print(f"fastgo bench selfplay --remote: about {estimate:.0f} s ({args.rounds} rounds of "
          f"{args.warmup + args.seconds:g} s with local shards, then as long through the recorder)",
          file=sys.stderr, flush=True)
    spaces = _Namespaces()
    rounds = []
    with tempfile.TemporaryDirectory(prefix="fastgo-bench-remote-") as workdir:
        try:
            on_veth = spaces.setup()
            host = spaces.host if on_veth else "127.0.0.1"
            near = ["ip", "netns", "exec", spaces.a] if on_veth else []
            far = ["ip", "netns", "exec", spaces.b] if on_veth else []
            ports = (5555, 5557) if on_veth else (_free_port(), _free_port())
            config_path, server_ep, recorder_ep = _write_config(config, workdir, host, ports)
            with RoleProcess([Role.SERVE.command, *CONFIG.argv(config_path)],
                             os.path.join(workdir, "serve.log"),
                             ready=Role.SERVE.ready, ready_timeout_s=SERVER_START_S, prefix=near):
                for index in range(args.rounds):
                    for mode in ("local", "remote"):
                        rounds.append(_round(args, mode, index, workdir, config_path, server_ep,
                                             recorder_ep, near, far))
        finally:
            spaces.cleanup()
    local = [r for r in rounds if r["mode"] == "local"]
    remote = [r for r in rounds if r["mode"] == "remote"]
    local_rate = sum(r["games"] for r in local) / sum(r["seconds"] for r in local)
    remote_rate = sum(r["games"] for r in remote) / sum(r["seconds"] for r in remote)
    remote_games = sum(r["games"] for r in remote)
    cpu = sum(r["recorder_cpu_s"] for r in remote)
    result = {
        "transport": "veth between network namespaces" if on_veth else "loopback",
        "curve": True, "local_games_per_s": round(local_rate, 3),
        "remote_games_per_s": round(remote_rate, 3),
        "ratio": round(remote_rate / local_rate, 4) if local_rate else None,
        "recorder_cpu_ms_per_game": round(1000 * cpu / remote_games, 3) if remote_games else None,
        "lost_games": sum(r["finished"] - r["games"] for r in remote),
        "rounds": rounds, "model": config.model.name, "board_size": config.model.board_size,
        "games_per_worker": args.games_at_once or config.selfplay.games,
        "visits": args.visits or config.selfplay.visits,
    }
    print(f"self-play through the recorder ({result['transport']}, CURVE): "
          f"{result['remote_games_per_s']:.2f} games/s recorded against {result['local_games_per_s']:.2f} "
          f"with local shards -> ratio "
          + (f"{result['ratio']:.3f}" if result["ratio"] is not None else "n/a (no game finished)")
          + "; recorder CPU "
          + (f"{result['recorder_cpu_ms_per_game']:.2f} ms per game" if remote_games else "n/a")
          + f" [{result['model']} {result['board_size']}x{result['board_size']}, "
          f"{result['games_per_worker']} games x {result['visits']} visits]")
    write_json(args.json, result)
    return 0
