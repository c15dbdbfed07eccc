"""`fastgo bench selfplay`: the whole self-play loop (one server, W worker processes) against
its ceiling measured in the same run: the raw batched forward of the same network (same runner,
backend, threads) at the server's mean batch size, in this process, with the workers stopped.

Rounds alternate self-play and raw measurements; figures are pooled over rounds. NN evals/s,
mean batch and the server's waiting share come from the server's counters over the measured
window (after a warm-up); moves/s and games/hour from the workers' own counts.
"""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time


def add_arguments(parser):
    parser.add_argument("--config", default="configs/9x9_cpu.toml",
                        help="TOML config ([model], [server], [selfplay])")
    parser.add_argument("--workers", type=int, default=1, help="worker processes W")
    parser.add_argument("--games", type=int, help="games per worker (default: selfplay.games)")
    parser.add_argument("--visits", type=int, help="visits per move (default: selfplay.visits)")
    parser.add_argument("--seconds", type=float, default=10.0, help="measured window per round")
    parser.add_argument("--warmup", type=float, default=4.0, help="seconds before measuring")
    parser.add_argument("--rounds", type=int, default=2, help="alternating self-play/raw rounds")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--algorithm", choices=("alphazero", "reinforce", "value"),
                        help="reinforce / value: policy-only self-play (no search), moves/s "
                             "against the raw forward at the same batch (default: "
                             "trainer.algorithm of the config)")
    parser.add_argument("--remote", action="store_true",
                        help="games/s recorded through the recorder (over a veth pair between "
                             "network namespaces when this user may create them, else loopback; "
                             "CURVE on) against local shard writing, and the recorder's CPU per game")


def _selfplay_round(args, config_path, endpoint, workdir, round_index):
    from inference_server.client import InferenceClient

    procs = []
    total = args.warmup + args.seconds
    for w in range(args.workers):
        cmd = [sys.executable, "-m", "fastgo_cli.main", "selfplay", "--config", config_path,
               "--run-dir", os.path.join(workdir, f"run{round_index}"), "--server", endpoint,
               "--worker-id", str(w), "--seconds", repr(total + 1.0), "--quiet"]
        if args.games:
            cmd += ["--games", str(args.games)]
        if args.visits:
            cmd += ["--visits", str(args.visits)]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True,
                                      env=dict(os.environ, OMP_NUM_THREADS="1")))
    with InferenceClient(endpoint, timeout_s=30, retries=2) as admin:
        # the window starts once every worker's requests are flowing, plus the warm-up
        first = admin.stats()
        deadline = time.monotonic() + 60
        while admin.stats()["positions"] == first["positions"] and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(args.warmup)
        before, t0 = admin.stats(), time.perf_counter()
        time.sleep(args.seconds)
        after, t1 = admin.stats(), time.perf_counter()
    stats = []
    for proc in procs:
        out, _ = proc.communicate(timeout=total + 120)
        if proc.returncode != 0:
            raise RuntimeError(f"worker exited with {proc.returncode}: {out[-2000:]}")
        line = [x for x in out.splitlines() if x.startswith("fastgo selfplay: stats ")][-1]
        stats.append(json.loads(line.split("stats ", 1)[1]))
    elapsed = t1 - t0
    delta = {k: after[k] - before[k] for k in ("positions", "batches", "forward_s_total", "overhead_s_total")}
    return {"seconds": elapsed, "delta": delta, "workers": stats, "max_batch": after["max_batch"],
            "runner": after["runner"]}


def run(args) -> int:
    import numpy as np
    import torch

    from fastgo.config import ConfigError, load_config, to_dict
    from fastgo_cli.bench.server import _measure_raw, _start_server, _stop, _write_toml
    from inference_server.model import build_model
    from inference_server.slots import make_runner

    try:
        config = load_config(args.config)
        for name, value, low, high in (("--workers", args.workers, 1, 256), ("--rounds", args.rounds, 1, 100)):
            if not low <= value <= high:
                raise ConfigError(f"{name}: must be in {low}..{high}, got {value}")
        if not 0 < args.seconds <= 3600 or not 0 <= args.warmup <= 3600:
            raise ConfigError("--seconds must be in (0, 3600] and --warmup in [0, 3600]")
    except ConfigError as err:
        print(f"fastgo bench selfplay: {err}", file=sys.stderr)
        return 2
    if args.remote:
        return _run_remote(args, config)
    if (args.algorithm or config.trainer.algorithm) in ("reinforce", "value"):
        return _run_policy(args, config)
    estimate = args.rounds * (2 * args.seconds + args.warmup + 3) + 5
    print(f"fastgo bench selfplay: about {estimate:.0f} s ({args.rounds} rounds of {args.seconds:g} s "
          f"self-play after {args.warmup:g} s warm-up, then {args.seconds:g} s raw forward)",
          file=sys.stderr, flush=True)
    server = dataclasses.replace(config.server, endpoint="tcp://127.0.0.1:*", checkpoints={},
                                 log_file="")
    if server.threads:
        torch.set_num_threads(server.threads)
    net = build_model(config.model, seed=0).eval()
    runner = make_runner(net, server)
    rounds = []
    with tempfile.TemporaryDirectory(prefix="fastgo-bench-selfplay-") as workdir:
        config_path = os.path.join(workdir, "bench.toml")
        sections = {"model": to_dict(config.model), "server": to_dict(server),
                    "selfplay": to_dict(config.selfplay), "trainer": to_dict(config.trainer)}
        _write_toml(config_path, sections)
        proc, endpoint = _start_server(config_path, os.path.join(workdir, "server.log"))
        try:
            for index in range(args.rounds):
                sp = _selfplay_round(args, config_path, endpoint, workdir, index)
                batch = max(1, round(sp["delta"]["positions"] / max(1, sp["delta"]["batches"])))
                planes = (np.random.default_rng(index).random(
                    (batch, config.model.planes, config.model.board_size, config.model.board_size))
                    < 0.3).astype(np.uint8)
                raw = _measure_raw(runner, planes, args.seconds)
                sp["raw"] = {"batch": batch, "positions": raw[0], "seconds": raw[1]}
                rounds.append(sp)
                print(f"  round {index + 1}: self-play {sp['delta']['positions'] / sp['seconds']:.0f} "
                      f"evals/s at mean batch {batch}, raw {raw[0] / raw[1]:.0f} evals/s", file=sys.stderr)
        finally:
            _stop(proc)
    seconds = sum(r["seconds"] for r in rounds)
    positions = sum(r["delta"]["positions"] for r in rounds)
    batches = max(1, sum(r["delta"]["batches"] for r in rounds))
    evals = positions / seconds
    raw = sum(r["raw"]["positions"] for r in rounds) / sum(r["raw"]["seconds"] for r in rounds)
    busy = sum(r["delta"]["forward_s_total"] + r["delta"]["overhead_s_total"] for r in rounds)
    workers = [w for r in rounds for w in r["workers"]]
    moves_per_s = sum(w["moves"] for w in workers) / (sum(w["seconds"] for w in workers) / args.workers)
    finished = sum(w["games"] for w in workers)
    # None when no game finished in the run (raise --seconds to measure it)
    games_per_hour = (3600 * finished / (sum(w["seconds"] for w in workers) / args.workers)
                      if finished else None)
    result = {
        "evals_per_s": round(evals, 1), "raw_evals_per_s": round(raw, 1),
        "ratio": round(evals / raw, 4), "moves_per_s": round(moves_per_s, 1),
        "games_per_hour": None if games_per_hour is None else round(games_per_hour, 1), "mean_batch": round(positions / batches, 2),
        "mean_batch_fill": round(positions / batches / rounds[-1]["max_batch"], 4),
        "server_wait_share": round(max(0.0, 1.0 - busy / seconds), 4),
        "evals_per_s_per_core": round(evals / (os.cpu_count() or 1), 1),
        "workers": args.workers, "games_per_worker": args.games or config.selfplay.games,
        "visits": args.visits or config.selfplay.visits, "model": config.model.name,
        "board_size": config.model.board_size, "backend": rounds[-1]["runner"]["backend"],
        "device": rounds[-1]["runner"]["device"], "threads": server.threads,
        "max_batch": rounds[-1]["max_batch"], "rounds": len(rounds), "seconds_per_round": args.seconds,
        "positions": positions, "batches": batches,
    }
    print(f"self-play {result['model']} {result['board_size']}x{result['board_size']}: "
          f"{result['evals_per_s']:.0f} NN evals/s, raw forward {result['raw_evals_per_s']:.0f} "
          f"evals/s at batch {round(result['mean_batch'])} -> ratio {result['ratio']:.3f}; "
          f"{result['moves_per_s']:.1f} moves/s, "
          + (f"{games_per_hour:.0f} games/hour; " if games_per_hour else
             "no game finished (longer --seconds for games/hour); ")
          + f"mean batch {result['mean_batch']:.1f} (fill {result['mean_batch_fill']:.2f}), "
          f"server waiting {100 * result['server_wait_share']:.0f}% "
          f"[{result['backend']} {result['device']}, {args.workers} worker(s) x "
          f"{result['games_per_worker']} games, {result['visits']} visits]")
    _write_json(args.json, result)
    return 0


# ---------------------------------------------------------------------------------------------
# Policy-only self-play (the AlphaGo pipeline: --algorithm reinforce or value)

def _prepare_pool(run_dir, net):
    """A run directory whose pool.json names one checkpoint of `net`: the workers load it into
    their opponent slots, as in a REINFORCE run."""
    from fastgo.files import atomic_write
    from inference_server.checkpoint import save_checkpoint

    os.makedirs(os.path.join(run_dir, "checkpoints"), exist_ok=True)
    save_checkpoint(os.path.join(run_dir, "checkpoints", "ckpt-000000000.ckpt"), net, step=0)
    pool = {"version": 1, "entries": [{"name": "ckpt-0", "path": "checkpoints/ckpt-000000000.ckpt",
                                       "step": 0, "weight": 1.0}]}
    atomic_write(os.path.join(run_dir, "pool.json"),
                 lambda handle: handle.write(json.dumps(pool).encode()))


def _run_policy(args, config) -> int:
    """Policy-only moves/s of the whole loop (server + W workers) against the raw batched
    forward at the server's mean batch and at the full batch (the games per worker), each
    measured in the same round; figures are medians over rounds."""
    import statistics

    import numpy as np
    import torch

    from fastgo.config import to_dict
    from fastgo_cli.bench.server import _measure_raw, _start_server, _stop, _write_toml
    from inference_server.model import build_model
    from inference_server.slots import make_runner

    algorithm = args.algorithm or config.trainer.algorithm
    games = args.games or config.selfplay.games
    estimate = args.rounds * (3 * args.seconds + args.warmup + 3) + 5
    print(f"fastgo bench selfplay: about {estimate:.0f} s ({args.rounds} rounds of {args.seconds:g} s "
          f"policy-only self-play ({algorithm}) after {args.warmup:g} s warm-up, then twice "
          f"{args.seconds:g} s raw forward)", file=sys.stderr, flush=True)
    server = dataclasses.replace(config.server, endpoint="tcp://127.0.0.1:*", checkpoints={},
                                 log_file="")
    trainer = dataclasses.replace(config.trainer, algorithm=algorithm)
    if server.threads:
        torch.set_num_threads(server.threads)
    net = build_model(config.model, seed=0).eval()
    runner = make_runner(net, server)
    shape = (config.model.planes, config.model.board_size, config.model.board_size)
    rounds = []
    with tempfile.TemporaryDirectory(prefix="fastgo-bench-policy-") as workdir:
        config_path = os.path.join(workdir, "bench.toml")
        _write_toml(config_path, {"model": to_dict(config.model), "server": to_dict(server),
                                  "selfplay": to_dict(config.selfplay), "trainer": to_dict(trainer)})
        proc, endpoint = _start_server(config_path, os.path.join(workdir, "server.log"))
        try:
            for index in range(args.rounds):
                if algorithm == "reinforce":
                    _prepare_pool(os.path.join(workdir, f"run{index}"), net)
                sp = _selfplay_round(args, config_path, endpoint, workdir, index)
                rng = np.random.default_rng(index)
                mean_batch = max(1, round(sp["delta"]["positions"] / max(1, sp["delta"]["batches"])))
                raw = {}
                for name, batch in (("mean", mean_batch), ("full", games)):
                    planes = (rng.random((batch, *shape)) < 0.3).astype(np.uint8)
                    positions, seconds = _measure_raw(runner, planes, args.seconds)
                    raw[name] = {"batch": batch, "evals_per_s": positions / seconds}
                moves_per_s = sp["delta"]["positions"] / sp["seconds"]
                sp.update(raw=raw, moves_per_s=moves_per_s,
                          ratio=moves_per_s / raw["mean"]["evals_per_s"],
                          ratio_full=moves_per_s / raw["full"]["evals_per_s"])
                rounds.append(sp)
                print(f"  round {index + 1}: {moves_per_s:.0f} moves/s at mean batch {mean_batch}, "
                      f"raw {raw['mean']['evals_per_s']:.0f} evals/s there and "
                      f"{raw['full']['evals_per_s']:.0f} at batch {games}", file=sys.stderr)
        finally:
            _stop(proc)
    median = statistics.median
    workers = [w for r in rounds for w in r["workers"]]
    worker_seconds = sum(w["seconds"] for w in workers) / args.workers
    finished = sum(w["games"] for w in workers)
    result = {
        "algorithm": algorithm,
        "moves_per_s": round(median(r["moves_per_s"] for r in rounds), 1),
        "raw_evals_per_s": round(median(r["raw"]["mean"]["evals_per_s"] for r in rounds), 1),
        "ratio": round(median(r["ratio"] for r in rounds), 4),
        "raw_evals_per_s_full_batch": round(median(r["raw"]["full"]["evals_per_s"] for r in rounds), 1),
        "ratio_full_batch": round(median(r["ratio_full"] for r in rounds), 4),
        "mean_batch": round(median(r["delta"]["positions"] / max(1, r["delta"]["batches"])
                                   for r in rounds), 2),
        "games_per_hour": round(3600 * finished / worker_seconds, 1) if finished else None,
        "server_wait_share": round(median(max(0.0, 1.0 - (r["delta"]["forward_s_total"]
                                                          + r["delta"]["overhead_s_total"])
                                              / r["seconds"]) for r in rounds), 4),
        "rounds_ratio": [round(r["ratio"], 4) for r in rounds],
        "workers": args.workers, "games_per_worker": games, "model": config.model.name,
        "board_size": config.model.board_size, "backend": rounds[-1]["runner"]["backend"],
        "device": rounds[-1]["runner"]["device"], "threads": server.threads,
        "max_batch": rounds[-1]["max_batch"], "rounds": len(rounds),
        "seconds_per_round": args.seconds, "cpu_count": os.cpu_count(),
    }
    print(f"policy-only self-play ({algorithm}) {result['model']} {result['board_size']}x"
          f"{result['board_size']}: {result['moves_per_s']:.0f} moves/s, raw forward "
          f"{result['raw_evals_per_s']:.0f} evals/s at the mean batch {result['mean_batch']:.1f} -> "
          f"ratio {result['ratio']:.3f}; raw {result['raw_evals_per_s_full_batch']:.0f} evals/s at "
          f"the full batch {games} -> ratio {result['ratio_full_batch']:.3f} (medians of "
          f"{len(rounds)} rounds); "
          + (f"{result['games_per_hour']:.0f} games/hour; " if finished else "no game finished; ")
          + f"server waiting {100 * result['server_wait_share']:.0f}% [{result['backend']} "
          f"{result['device']}, {args.workers} worker(s) x {games} games]")
    _write_json(args.json, result)
    return 0


# ---------------------------------------------------------------------------------------------
# Games through the recorder (--remote)

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


def _role(prefix, args, log_path):
    """A `fastgo ROLE` process (under `ip netns exec` when prefix says so), once ready."""
    import select

    proc = subprocess.Popen([*prefix, sys.executable, "-m", "fastgo_cli.main", *args],
                            stdout=subprocess.PIPE, stderr=open(log_path, "ab"), text=True,
                            env=dict(os.environ, OMP_NUM_THREADS="1"))
    ready, _, _ = select.select([proc.stdout], [], [], 120)
    line = proc.stdout.readline() if ready else ""
    if "ready on" not in line:
        proc.kill()
        proc.wait(10)
        raise RuntimeError(f"{args[0]} did not start; see {log_path}")
    return proc


def _run_remote(args, config) -> int:
    """Rounds alternate a worker writing its own shards and the same worker sending its games
    to a recorder; both talk to the same server over the same path. games/s: games in shards
    (the worker's, or the recorder's after it closed its last shard) over the worker's own
    seconds. The recorder's CPU: /proc, from its ready line to the end of the round."""
    from fastgo.config import to_dict
    from fastgo_cli.bench.server import _stop, _write_toml
    from inference_server.keys import write_key_pair
    from fastgo.shards import list_shards, read_shard

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
            keys = os.path.join(workdir, "keys")
            allowed = os.path.join(keys, "allowed")
            os.makedirs(allowed)
            for name in ("server", "recorder"):
                write_key_pair(keys, name)
            write_key_pair(allowed, "worker")
            ports = (5555, 5557) if on_veth else (_free_port(), _free_port())
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
            config_path = os.path.join(workdir, "bench.toml")
            _write_toml(config_path, sections)
            server = _role(near, ["serve", "--config", config_path], os.path.join(workdir, "serve.log"))
            try:
                for index in range(args.rounds):
                    for mode in ("local", "remote"):
                        run_dir = os.path.join(workdir, f"{mode}{index}")
                        recorder = cpu0 = None
                        if mode == "remote":
                            recorder = _role(near, ["recorder", "--config", config_path, "--run-dir",
                                                    run_dir, "--quiet"], os.path.join(workdir, "rec.log"))
                            cpu0 = _cpu_seconds(recorder.pid)
                        cmd = [*far, sys.executable, "-m", "fastgo_cli.main", "selfplay", "--config",
                               config_path, "--run-dir", run_dir, "--server", server_ep,
                               "--seconds", repr(args.warmup + args.seconds), "--quiet"]
                        if mode == "remote":
                            cmd += ["--recorder", recorder_ep]
                        if args.games:
                            cmd += ["--games", str(args.games)]
                        if args.visits:
                            cmd += ["--visits", str(args.visits)]
                        out = subprocess.run(cmd, capture_output=True, text=True,
                                             timeout=args.warmup + args.seconds + 120,
                                             env=dict(os.environ, OMP_NUM_THREADS="1"))
                        if out.returncode != 0:
                            raise RuntimeError(f"worker exited with {out.returncode}: {out.stderr[-1500:]}")
                        line = [x for x in out.stdout.splitlines() if x.startswith("fastgo selfplay: stats ")][-1]
                        stats = json.loads(line.split("stats ", 1)[1])
                        cpu = None
                        if recorder is not None:
                            cpu = _cpu_seconds(recorder.pid) - cpu0
                            _stop(recorder)             # closes its last shard
                        shard_dir = os.path.join(run_dir, "shards")
                        recorded = sum(len(read_shard(os.path.join(shard_dir, n), check_rules=False).games)
                                       for n in list_shards(shard_dir))
                        rounds.append({"mode": mode, "games": recorded, "finished": stats["games"],
                                       "seconds": stats["seconds"], "recorder_cpu_s": cpu})
                        print(f"  round {index + 1} {mode}: {recorded} games in shards "
                              f"({stats['games']} finished) in {stats['seconds']:.1f} s"
                              + (f", recorder CPU {cpu:.2f} s" if cpu is not None else ""),
                              file=sys.stderr, flush=True)
            finally:
                _stop(server)
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
        "games_per_worker": args.games or config.selfplay.games,
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
    _write_json(args.json, result)
    return 0


def _write_json(path, result):
    """The result as JSON at `path` (temporary name + rename), when one was asked for."""
    if path:
        from fastgo.files import atomic_write
        atomic_write(path, lambda handle: handle.write(json.dumps(result, indent=2) + "\n"),
                     binary=False)
