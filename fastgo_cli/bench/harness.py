"""What the benches of the served loop share: the raw batched forward they are measured against,
a server and self-play workers started as role processes (supervision.role_process), the stats line
a
worker prints at its end, and the JSON result file."""
from __future__ import annotations

import contextlib
import dataclasses
import os
import tempfile
import time
from types import SimpleNamespace

from fastgo import bounded_json
from fastgo_cli.parser import MIN_DURATION_S
from roles.flags import CONFIG, QUIET, RUN_DIR, SELFPLAY
from roles.registry import Role
from supervision.role_process import RoleProcess, ServerProcess, write_toml

SERVER_START_S = 120.0            # a bench's server may take this long to its ready line
WORKER_GRACE_S = 120.0            # a worker may end this long after its --seconds
STATS_PREFIX = "fastgo selfplay: stats "


def measure_raw(runner, planes, seconds):
    """(positions, elapsed seconds) of back-to-back forward passes of `planes` [B, P, N, N]
    through `runner` for about `seconds`, after one untimed pass."""
    runner.forward(planes)
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        runner.forward(planes)
        count += 1
    return count * planes.shape[0], time.perf_counter() - start


def random_planes(rng, batch, model):
    """uint8 planes [batch, model.planes, N, N], each 1 with probability 0.3."""
    import numpy as np
    shape = (batch, model.planes, model.board_size, model.board_size)
    return (rng.random(shape) < 0.3).astype(np.uint8)


def start_serve_process(config_path, log_path):
    """`fastgo serve --config CONFIG` once it is ready (its endpoint in
    `.endpoint`), with this process's environment (its threads are the config's)."""
    return ServerProcess(config_path, log_path=str(log_path), start_timeout_s=SERVER_START_S,
                         env={}).start()


@contextlib.contextmanager
def served_loop(config, prefix, trainer=None, checkpoint=None, path=None):
    """A temporary folder, the bench's config in it (the config's model, selfplay and trainer
    sections, `trainer` replacing the latter; its server on a free loopback port with no log
    file, serving fresh weights (seed 0) or `checkpoint`, a network.checkpoint.Checkpoint the
    server reads from `path`, whose network then replaces the config's), a server running it,
    and in this process the same network behind the same runner. Yields a namespace: workdir,
    config_path, endpoint, server (the ServerConfig), net, runner. The server is stopped on the
    way out."""
    import torch

    from inference_server.slots import make_runner
    from network.model import build_model
    from rundata.config import to_dict

    served = {} if checkpoint is None else {config.server.slots[0]: os.path.abspath(path)}
    server = dataclasses.replace(config.server, endpoint="tcp://127.0.0.1:*", checkpoints=served,
                                 log_file="")
    if server.threads:
        torch.set_num_threads(server.threads)
    if checkpoint is None:
        net, model = build_model(config.model, seed=0).eval(), config.model
    else:
        net, model = checkpoint.model.eval(), checkpoint.config
    runner = make_runner(net, server)
    with tempfile.TemporaryDirectory(prefix=prefix) as workdir:
        config_path = write_toml(os.path.join(workdir, "bench.toml"), {
            "model": to_dict(model), "server": to_dict(server),
            "selfplay": to_dict(config.selfplay), "trainer": to_dict(trainer or config.trainer)})
        process = start_serve_process(config_path, os.path.join(workdir, "server.log"))
        try:
            yield SimpleNamespace(workdir=workdir, config_path=config_path, endpoint=process.endpoint,
                                  server=server, net=net, runner=runner)
        finally:
            process.stop()


def worker_argv(args, config_path, run_dir, endpoint, seconds, *extra):
    """`fastgo selfplay` for `seconds` on run_dir with the bench's --games-at-once and --visits."""
    argv = [Role.SELFPLAY.command, *CONFIG.argv(config_path), *RUN_DIR.argv(run_dir),
            *SELFPLAY["server"].argv(endpoint), *extra,
            "--duration", repr(max(float(seconds), MIN_DURATION_S)), *QUIET.argv(True)]
    if args.games_at_once:
        argv += ["--games-at-once", str(args.games_at_once)]
    if args.visits:
        argv += ["--visits", str(args.visits)]
    return argv


def finish_worker(process, timeout_s):
    """The stats dict a worker prints on its last line (`fastgo selfplay: stats {...}`) once
    it has ended with status 0; RuntimeError (the worker killed if still running) otherwise."""
    code = process.wait(timeout_s)
    if code is None:
        process.kill()
        raise RuntimeError(f"worker did not end within {timeout_s:g} s: {process.tail()}")
    out = process.output()
    if code != 0:
        raise RuntimeError(f"worker exited with {code}: {out[-2000:]}")
    lines = [x for x in out.splitlines() if x.startswith(STATS_PREFIX)]
    if not lines:
        raise RuntimeError(f"worker printed no stats line: {out[-2000:]}")
    try:
        return bounded_json.loads(lines[-1][len(STATS_PREFIX):])
    except ValueError as err:
        raise RuntimeError(f"worker's stats line is not JSON: {err}") from None


def selfplay_round(args, config_path, endpoint, workdir, round_index):
    """args.workers worker processes for args.warmup + args.seconds (+1) on a fresh run
    directory; the server's counters over the measured window (from args.warmup after the
    first request, for args.seconds) and the workers' own stats: {"seconds", "delta" (positions,
    batches, forward_s_total, overhead_s_total), "workers", "max_batch", "runner"}."""
    from wire.client import InferenceClient

    total = args.warmup + args.seconds
    run_dir = os.path.join(workdir, f"run{round_index}")
    workers = []
    try:
        for w in range(args.workers):
            argv = worker_argv(args, config_path, run_dir, endpoint, total + 1.0, "--worker-id", str(w))
            out_path = os.path.join(workdir, f"selfplay-r{round_index}-w{w}.out")
            workers.append(RoleProcess(argv, out_path).start())
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
        stats = [finish_worker(process, total + WORKER_GRACE_S) for process in workers]
    finally:
        for process in workers:
            process.stop()
    delta = {k: after[k] - before[k] for k in ("positions", "batches", "forward_s_total", "overhead_s_total")}
    return {"seconds": t1 - t0, "delta": delta, "workers": stats, "max_batch": after["max_batch"],
            "runner": after["runner"]}
