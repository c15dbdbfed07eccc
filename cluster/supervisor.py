"""`fastgo cluster --config C [--duration 15m] [--run-dir runs/NAME] [--backend local|ray]`: the
whole loop. Starts the inference server, the trainer, W self-play workers and the evaluator as
child processes (each with its own log in RUN/logs), supervises them, prints a status line, and
shuts them down in order on SIGINT/SIGTERM or when --duration is over. The local backend runs
them on this machine; `--backend ray` places them as Ray actors on a Ray cluster
(cluster/ray_backend.py) with the same supervision rules, status line and summary.

Supervision: a child that exits is restarted with exponential back-off (logged and counted); a
child whose heartbeat (RUN/logs/ROLE.status.json, refreshed by its main loop; the server
answers a stats request instead) is older than cluster.stuck_seconds is stuck, whether busy or
stopped, and is killed and restarted (before its first heartbeat a child is starting, and gets
STARTUP_S if that is longer); a role restarted more than cluster.max_restarts times
within cluster.restart_window_s stops the cluster with a message naming it and its log.
Shutdown: workers first (they close their shards), then the evaluator, the trainer (it writes
its checkpoint), the server; all within cluster.shutdown_s, SIGKILL for whatever is left.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import deque

DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*([smhd]?)")
UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
STARTUP_S = 60.0      # a child may take this long to its first heartbeat (when over stuck_seconds)


def add_arguments(parser):
    parser.add_argument("--config", default="configs/quickstart.toml",
                        help="TOML config (default: configs/quickstart.toml)")
    parser.add_argument("--run-dir", help="the run directory (default: runs/<config name>)")
    parser.add_argument("--duration", help="stop by itself after this long: 90s, 15m, 2h (default: run until Ctrl-C)")
    parser.add_argument("--workers", type=int, help="self-play workers (default: cluster.workers)")
    parser.add_argument("--no-evaluate", action="store_true", help="run without the evaluator")
    parser.add_argument("--backend", choices=["local", "ray"],
                        help="local: child processes here; ray: actors on a Ray cluster "
                             "(default: cluster.backend)")
    parser.add_argument("--address", help="ray: the Ray cluster to join (host:port, or auto); "
                                          "default: start a Ray instance on this machine")


def parse_duration(text):
    match = DURATION.fullmatch(text.strip().lower()) if len(text) <= 32 else None
    if not match:
        raise ValueError(f"--duration {text[:40]!r}: expected a number with s, m, h or d (e.g. 15m)")
    seconds = float(match.group(1)) * UNITS[match.group(2)]
    if not 1 <= seconds <= 365 * 86400:
        raise ValueError(f"--duration {text!r}: must be between 1 s and 365 days")
    return seconds


def server_argv(config, config_path, run_dir, endpoint=None):
    argv = ["serve", "--config", config_path, "--checkpoint",
            f"{config.trainer.publish_slot}={run_dir.latest}", "--log-file", run_dir.log("serve")]
    return argv + (["--endpoint", endpoint] if endpoint else [])


def trainer_argv(config_path, run_dir, endpoint):
    return ["train", "--config", config_path, "--run-dir", run_dir.root, "--server", endpoint, "--quiet"]


def worker_argv(config_path, run_dir, endpoint, worker_id):
    return ["selfplay", "--config", config_path, "--run-dir", run_dir.root, "--server", endpoint,
            "--worker-id", str(worker_id), "--quiet"]


def evaluator_argv(config_path, run_dir):
    return ["evaluate", "--config", config_path, "--run-dir", run_dir.root, "--quiet"]


class Restarts:
    """A role's restart bookkeeping, the same for both backends."""

    def __init__(self):
        self.restarts = 0
        self.recent = deque()                 # monotonic times of recent restarts
        self.next_start = 0.0
        self.backoff = 0.0


class Supervisor:
    """What both backends share: the restart policy (back-off, give up after max_restarts
    within restart_window_s) and the per-role restart counts of the status line."""

    def _restart(self, child, why):
        now = time.monotonic()
        while child.recent and now - child.recent[0] > self.cc.restart_window_s:
            child.recent.popleft()
        if len(child.recent) >= self.cc.max_restarts:
            self.failed = (f"{child.role} keeps failing ({why}; {len(child.recent) + 1} times within "
                           f"{self.cc.restart_window_s:g} s): see {child.log_path} and {child.out_path}")
            return
        child.backoff = self.cc.backoff_s if not child.backoff else min(self.cc.backoff_max_s, 2 * child.backoff)
        child.next_start = now + child.backoff
        child.recent.append(now)
        child.restarts += 1
        self.log(f"{child.role} {why}; restart {child.restarts} in {child.backoff:g} s "
                 f"(log {child.log_path})")

    def restarts(self):
        """{role: restarts} of the roles restarted at least once."""
        return {c.role: c.restarts for c in self.children if c.restarts}

    def close(self):
        """Releases what the backend holds once the roles are stopped."""

    def should_stop(self):
        """True once a signal asked the cluster to stop (set by run())."""
        return False


class Child(Restarts):
    """One supervised role."""

    def __init__(self, role, argv, run_dir, heartbeat):
        self.role = role
        self.argv = argv
        self.run_dir = run_dir
        self.heartbeat = heartbeat            # status-file role name, or None (pinged instead)
        self.out_path = os.path.join(run_dir.logs, f"{role}.out")
        self.log_path = run_dir.log(role)
        super().__init__()
        self.proc = None
        self.started = 0.0
        self.last_ping_ok = 0.0

    def start(self):
        env = dict(os.environ, OMP_NUM_THREADS="1")
        with open(self.out_path, "ab") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "fastgo_cli.main", *self.argv],
                                         stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         env=env, start_new_session=True)
        self.started = self.last_ping_ok = time.monotonic()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def last_progress(self):
        """(monotonic time of the last sign of progress, whether this start has shown one).
        Until a child's first heartbeat it is starting (imports, model build, a first batch),
        which on a loaded machine can take longer than a stuck loop is allowed."""
        if self.heartbeat is None:
            return self.last_ping_ok, self.last_ping_ok > self.started
        from fastgo.rundir import read_status
        _, mtime = read_status(self.run_dir, self.heartbeat)
        if mtime is None:
            return self.started, False
        # the status file's mtime is wall time; convert to this clock's age
        beat = time.monotonic() - max(0.0, time.time() - mtime)
        return max(self.started, beat), beat > self.started

    def signal(self, sig):
        if self.alive():
            try:
                os.kill(self.proc.pid, signal.SIGCONT)   # a stopped child cannot act on SIGTERM
                os.kill(self.proc.pid, sig)
            except ProcessLookupError:
                pass


class Cluster(Supervisor):
    def __init__(self, config, config_path, run_dir, workers, evaluate, log):
        self.config = config
        self.cc = config.cluster
        self.config_path = config_path
        self.run_dir = run_dir
        self.log = log
        self.endpoint = config.server.endpoint
        self.server = Child("serve", server_argv(config, config_path, run_dir), run_dir, None)
        self.trainer = Child("train", trainer_argv(config_path, run_dir, self.endpoint), run_dir, "train")
        self.workers = [Child(f"selfplay-w{i}", worker_argv(config_path, run_dir, self.endpoint, i),
                              run_dir, f"selfplay-w{i}") for i in range(workers)]
        self.evaluator = Child("evaluate", evaluator_argv(config_path, run_dir),
                               run_dir, "evaluate") if evaluate else None
        self.children = [self.server, self.trainer, *self.workers] + ([self.evaluator] if evaluate else [])
        self.stop_reason = None
        self.failed = None
        self.fail_code = 1             # 2: a role refused its settings (a restart cannot help)
        self.started = time.monotonic()
        self._admin = None
        self._last_stats = None

    # -- the server's liveness and figures ------------------------------------------------------

    def server_stats(self, timeout_s=1.0):
        """The stats of OUR server (its pid must be our child's: another server answering on
        the endpoint is not ours), or None."""
        from inference_server.client import InferenceClient
        try:
            if self._admin is None:
                self._admin = InferenceClient(self.endpoint, timeout_s=timeout_s, retries=0)
            stats = self._admin.stats(timeout_s=timeout_s)
            if self.server.proc is None or stats.get("pid") != self.server.proc.pid:
                return None
            self.server.last_ping_ok = time.monotonic()
            return stats
        except Exception:
            if self._admin is not None:
                self._admin.close()
            self._admin = None
            return None

    # -- supervision ----------------------------------------------------------------------------

    def start_all(self):
        self.server.start()
        deadline = time.monotonic() + 60
        while self.server_stats() is None:
            if not self.server.alive() or time.monotonic() > deadline:
                if self.server.proc.poll() == 2:
                    self.fail_code = 2
                raise RuntimeError(f"the server did not start: {_last_line(self.server.out_path)} "
                                   f"(see {self.server.out_path})")
            time.sleep(0.2)
        for child in self.children[1:]:
            child.start()
        for child in self.children:
            print(f"fastgo cluster: {child.role:<12} pid {child.proc.pid:<7} log {child.log_path}",
                  flush=True)

    def supervise_once(self):
        now = time.monotonic()
        for child in self.children:
            if child.proc is None:
                if now >= child.next_start:
                    child.start()
                continue
            code = child.proc.poll()
            if code is not None:
                child.proc = None
                if code == 2:                  # the child refuses its settings: a restart cannot help
                    self.fail_code = 2
                    self.failed = (f"{child.role} refused to run (exit status 2): "
                                   f"{_last_line(child.out_path)} (see {child.out_path})")
                    return
                self._restart(child, f"exited with status {code}")
                continue
            if child is self.server and now - child.last_ping_ok > 2.0:
                self.server_stats(timeout_s=0.5)
            last, beaten = child.last_progress()
            idle = now - last
            if idle > (self.cc.stuck_seconds if beaten else max(self.cc.stuck_seconds, STARTUP_S)):
                child.signal(signal.SIGKILL)
                child.proc.wait(10)
                child.proc = None
                self._restart(child, f"made no progress for {idle:.0f} s (stuck or stopped); killed")
            elif now - child.started > 60 and child.backoff and child.alive():
                child.backoff = 0.0            # a minute of health resets the back-off

    def shutdown(self):
        """Workers, evaluator, trainer, server in that order; the whole within shutdown_s."""
        deadline = time.monotonic() + self.cc.shutdown_s - 0.5
        groups = [self.workers, [self.evaluator] if self.evaluator else [], [self.trainer], [self.server]]
        shares = [0.25, 0.1, 0.45, 0.2]
        for group, share in zip(groups, shares):
            for child in group:
                child.signal(signal.SIGTERM)
            group_deadline = min(deadline, time.monotonic() + share * self.cc.shutdown_s)
            for child in group:
                if child.proc is None:
                    continue
                try:
                    child.proc.wait(max(0.0, group_deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    pass
        for child in self.children:
            if child.alive():
                self.log(f"{child.role} did not stop in time; killed")
                child.signal(signal.SIGKILL)
                child.proc.wait(5)
        if self._admin is not None:
            self._admin.close()

    # -- the status line ------------------------------------------------------------------------

    def status(self):
        from fastgo.rundir import read_status
        elapsed = time.monotonic() - self.started
        train, _ = read_status(self.run_dir, "train")
        train = train or {}
        moves = 0.0
        for w in self.workers:
            data, _ = read_status(self.run_dir, w.heartbeat)
            if data and w.alive():
                moves += float(data.get("moves_per_s", 0.0))
        stats = self.server_stats(timeout_s=0.5)
        evals, fill = server_rates(stats, self._last_stats)
        if stats:
            self._last_stats = (stats, time.monotonic())
        return status_line(elapsed, train, moves, evals, fill, read_ratings(self.run_dir.root),
                           self.restarts())

    def summary(self):
        from fastgo.rundir import read_status
        train, _ = read_status(self.run_dir, "train")
        return summary_text(time.monotonic() - self.started, self.stop_reason, train or {},
                            self.restarts(), read_ratings(self.run_dir.root), self.run_dir)


# -- the status line and the summary, the same for both backends ------------------------------

def server_rates(stats, last):
    """(NN evals/s, mean batch fill) between the server stats `last` = (stats, monotonic time)
    and `stats` (now); zeros without both."""
    if not stats or not last:
        return 0.0, 0.0
    prev, t_prev = last
    dt = max(1e-6, time.monotonic() - t_prev)
    dp = stats["positions"] - prev["positions"]
    db = stats["batches"] - prev["batches"]
    return dp / dt, dp / max(1, db) / max(1, stats["max_batch"])


def read_ratings(root):
    """The evaluator's ratings.json of a run directory, or None."""
    try:
        with open(os.path.join(root, "ratings.json")) as handle:
            data = json.load(handle)
        return data if isinstance(data, dict) else None
    except (OSError, ValueError):
        return None


def _restart_text(restarts):
    total = sum(restarts.values())
    return f"{total} (" + ", ".join(f"{role} {n}" for role, n in sorted(restarts.items())) + ")"


def status_line(elapsed, train, moves, evals, fill, ratings, restarts):
    """One status line: train is the trainer's status, ratings the evaluator's ratings.json
    (or None), restarts {role: count}."""
    elo = "-"
    try:
        latest = ratings["latest"]
        elo = f"{latest['elo']:.0f} ({latest['player']})"
    except (KeyError, TypeError, ValueError):
        pass
    loss = train.get("loss")
    latest = train.get("latest")
    return (f"{_clock(elapsed)}  games {train.get('games', 0)}  moves/s {moves:.0f}  "
            f"evals/s {evals:.0f}  fill {fill:.2f}  step {train.get('step', 0)}  "
            f"loss {loss if loss is not None else '-'}  ckpt {'-' if latest is None else latest}  "
            f"Elo {elo}" + (f"  restarts {_restart_text(restarts)}" if restarts else ""))


def summary_text(elapsed, stop_reason, train, restarts, ratings, run_dir):
    lines = [f"fastgo cluster: stopped after {_clock(elapsed)}"
             + (f" ({stop_reason})" if stop_reason else ""),
             f"  self-play games {train.get('games', 0)}, training steps {train.get('step', 0)}, "
             f"restarts {_restart_text(restarts) if restarts else 0}"]
    try:
        latest = ratings["latest"]
        lines.append(f"  {latest['player']}: Elo {latest['elo']:.0f} "
                     f"({latest['elo_low']:.0f}..{latest['elo_high']:.0f}); last results: "
                     + ", ".join(latest["results"]))
        for name, value in sorted(ratings["ratings"].items(), key=lambda kv: -kv[1][0]):
            if not name.startswith("ckpt-"):
                lines.append(f"  reference {name}: Elo {value[0]:.0f}")
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        lines.append("  no evaluation yet")
    root = run_dir.root
    lines.append(f"  curve {os.path.join(root, 'curve.png')}, SGFs {run_dir.sgf}, "
                 f"checkpoint {run_dir.latest}")
    return "\n".join(lines)


def _last_line(path):
    try:
        with open(path, errors="replace") as handle:
            lines = [line.strip() for line in handle.read()[-4000:].splitlines() if line.strip()]
        return lines[-1] if lines else "(no output)"
    except OSError:
        return "(no output)"


def _clock(seconds):
    seconds = int(seconds)
    return f"{seconds // 3600:d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def run(args) -> int:
    from fastgo.config import ConfigError, load_config
    from fastgo.rundir import open_run_dir

    try:
        config = load_config(args.config)
        duration = parse_duration(args.duration) if args.duration else None
        workers = config.cluster.workers if args.workers is None else args.workers
        if not 0 <= workers <= 1024:
            raise ConfigError(f"--workers: must be in 0..1024, got {workers}")
        backend = args.backend or config.cluster.backend
        if args.address is not None and backend != "ray":
            raise ConfigError("--address: only with --backend ray (or cluster.backend = \"ray\")")
        if args.address is not None and not re.fullmatch(r"auto|(ray://)?[A-Za-z0-9_.:\[\]-]{1,260}",
                                                         args.address):
            raise ConfigError(f"--address {args.address[:60]!r}: expected auto or HOST:PORT")
        name = os.path.splitext(os.path.basename(args.config))[0]
        run_dir = open_run_dir(args.run_dir or os.path.join("runs", name))
    except (ConfigError, ValueError, OSError) as err:
        print(f"fastgo cluster: {err}", file=sys.stderr)
        return 2
    tty = sys.stdout.isatty()

    def log(message):
        print(("\r\033[K" if tty else "") + f"fastgo cluster: {message}", flush=True)

    evaluate = config.cluster.evaluate and not args.no_evaluate
    if backend == "ray":
        from cluster.ray_backend import RayCluster, RayUnavailable
        try:
            cluster = RayCluster(config, os.path.abspath(args.config), run_dir, workers, evaluate,
                                 log, address=args.address)
        except RayUnavailable as err:
            print(f"fastgo cluster: {err}", file=sys.stderr)
            return 2
    else:
        cluster = Cluster(config, os.path.abspath(args.config), run_dir, workers, evaluate, log)
    stop = {"flag": None}
    cluster.should_stop = lambda: stop["flag"] is not None

    def handler(signum, frame):
        stop["flag"] = signal.Signals(signum).name
    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    print(f"fastgo cluster: {config.model.name} {config.model.board_size}x{config.model.board_size}, "
          f"{workers} worker(s), run directory {run_dir.root}"
          + (f", {cluster.where}" if backend == "ray" else "")
          + (f", stopping after {_clock(duration)}" if duration else ", Ctrl-C stops it"), flush=True)
    status_every = 1.0 if tty else config.cluster.status_interval_s
    next_status = time.monotonic() + status_every
    code = 0
    try:
        cluster.start_all()
        while stop["flag"] is None and cluster.failed is None:
            if duration is not None and time.monotonic() - cluster.started >= duration:
                cluster.stop_reason = "duration reached"
                break
            cluster.supervise_once()
            if time.monotonic() >= next_status:
                line = cluster.status()
                print(("\r\033[K" + line) if tty else line, end="" if tty else "\n", flush=True)
                next_status = time.monotonic() + status_every
            time.sleep(0.2)
        if stop["flag"]:
            cluster.stop_reason = stop["flag"]
    except RuntimeError as err:
        if stop["flag"]:                      # a signal cut the start short
            cluster.stop_reason = stop["flag"]
        else:
            cluster.failed = str(err)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if tty:
            print()
        cluster.shutdown()
    summary = cluster.summary()
    cluster.close()
    if cluster.failed:
        print(f"fastgo cluster: stopping: {cluster.failed}", file=sys.stderr, flush=True)
        code = cluster.fail_code
    print(summary, flush=True)
    return code
