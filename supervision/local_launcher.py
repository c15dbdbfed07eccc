"""The local launcher of `fastgo cluster`: every role (server, trainer, W workers, evaluator) is a
child process on this machine with its own log in RUN/logs. A child that exits is restarted with
back-off; one whose heartbeat (RUN/logs/ROLE.status.json; the server answers a stats request
instead) is older than cluster.stuck_seconds is stuck, whether busy or stopped, and is killed and
restarted, and so is one that says it is busy (its status file's "busy"; the server's start-up
lines) for over cluster.busy_limit_s. Never imports ray.
"""
from __future__ import annotations

import signal
import time

from evaluation.evaluations import unrated_newest
from fastgo import diskfull
from fastgo.variants import Backend
from roles.registry import Role, role_argv, role_specs
from rundata.rundir import checkpoint_player, read_status
from rundata.statefiles import read_ratings
from supervision.policy import Supervision, moves_per_s, stop_groups
from supervision.restarts import REFUSED, STARTUP_S, Backoff
from supervision.role_child import RoleChild
from supervision.role_process import RoleStartError
from supervision.status import current_ratings, read_cgos, summary_text


def serving_line(server_config, stats) -> str:
    """What the server runs and why, from its stats reply: the backend `auto` measured fastest
    here among those that agree with fp32 (its table in the server's log), or the configured one."""
    runner = stats.get("runner") if isinstance(stats, dict) else None
    backend = str((runner or {}).get("backend", "?"))[:40]
    if server_config.backend == Backend.AUTO:
        why = "the fastest on this CPU of the backends that agree with fp32, timed at the start"
    else:
        why = f"server.backend = {str(server_config.backend)!r}"
    return f"server backend {backend} ({why}; the table is in logs/serve.log)"


def unwell(policy, role, now):
    """Why `role` (a LocalRole whose process runs) must be killed and restarted, for
    RestartPolicy.restart, or None: it says it is busy past cluster.busy_limit_s, or it has made
    no progress for longer than the stuck rule allows (RestartPolicy.busy_past, .stuck).
    `now`: monotonic time."""
    child = role.child
    data, last, beaten = child.progress()
    why = policy.busy_past(role, child.busy(data, beaten), child.started, now)
    if why is None and policy.stuck(now - last, beaten):
        why = f"made no progress for {now - last:.0f} s (stuck or stopped); killed"
    return why


FINAL_POLL_S = 0.5              # how often the final rating's deadline and signals are looked at


class LocalRole:
    """One role under the local launcher: its spec, its fixed argv, its process, its back-off."""

    def __init__(self, spec, argv, run_dir):
        self.spec = spec
        self.role = spec.name
        self.argv = argv
        self.child = RoleChild(spec.name, run_dir, spec.heartbeat, starting=spec.kind.starting)
        self.backoff = Backoff()
        self.log_path = self.child.log_path
        self.out_path = self.child.out_path


class LocalCluster:
    """The roles of one run as child processes here; the interface supervisor.supervise drives
    (start_all, supervise_once, status, shutdown, summary, close)."""

    def __init__(self, config, config_path, run_dir, workers, evaluate, log, *, overrides=()):
        self.config = config
        self.cc = config.cluster
        self.config_path = config_path
        self.run_dir = run_dir
        self.log = log
        self.supervision = Supervision(self.cc, log)
        self.endpoint = config.server.endpoint
        self.children = [LocalRole(spec, role_argv(spec, config, config_path, run_dir,
                                                   endpoint=self.endpoint, overrides=overrides),
                                   run_dir)
                         for spec in role_specs(self.cc, workers, evaluate, recorder=False)]
        self.server, self.trainer = self.children[0], self.children[1]
        self.workers = [c for c in self.children if c.spec.kind is Role.SELFPLAY]
        self.evaluator = next((c for c in self.children if c.spec.kind is Role.EVALUATE), None)
        self.where = "this machine"
        self.final_note = None         # what became of the final rating, for the summary
        self.should_stop = lambda: False

    def server_stats(self, timeout_s=1.0):
        """The stats of OUR server (the process answering on the endpoint must be our child),
        or None."""
        return self.server.child.server_stats(self.endpoint, timeout_s)

    # -- supervision ----------------------------------------------------------------------------

    def start_all(self):
        """The server first (its ready line, then its answer to a stats request), then the
        others; RuntimeError when the server does not start."""
        server = self.server.child
        try:
            server.start(self.server.argv, ready=Role.SERVE.ready, ready_timeout_s=STARTUP_S,
                         ready_cap_s=self.cc.busy_limit_s)
        except RoleStartError as err:
            if err.code == REFUSED:
                self.supervision.fail_code = REFUSED
            busy = (f" (busy starting past cluster.busy_limit_s = {self.cc.busy_limit_s:g} s)"
                    if err.capped else "")
            raise RuntimeError(f"the server did not start{busy}: {err.last_line} "
                               f"(see {self.server.out_path})") from None
        deadline = time.monotonic() + STARTUP_S
        while (stats := self.server_stats()) is None:
            if not server.alive() or time.monotonic() > deadline:
                if server.process.poll() == REFUSED:
                    self.supervision.fail_code = REFUSED
                raise RuntimeError(f"the server did not start: {server.last_line()} "
                                   f"(see {self.server.out_path})")
            time.sleep(0.2)
        for role in self.children[1:]:
            role.child.start(role.argv)
        for role in self.children:
            print(f"fastgo cluster: {role.role:<12} pid {role.child.pid:<7} log {role.log_path}",
                  flush=True)
        print(f"fastgo cluster: {serving_line(self.config.server, stats)}", flush=True)

    def supervise_once(self):
        now = time.monotonic()
        supervision = self.supervision
        for role in self.children:
            child = role.child
            if child.process is None:
                if now >= role.backoff.next_start:
                    child.start(role.argv)
                continue
            code = child.poll()
            if code is not None:
                if code == REFUSED:
                    supervision.refused(role, child.last_line())
                    return
                supervision.restart(role, f"exited with status {code}", code)
                continue
            if role is self.server and now - child.ping.last_ok > 2.0:
                self.server_stats(timeout_s=0.5)
            why = unwell(supervision.policy, role, now)
            if why is not None:
                child.kill()
                supervision.restart(role, why)
            elif child.alive():
                supervision.policy.healthy(role.backoff, child.started, now)

    def shutdown(self):
        """The roles in supervision.policy's stop order (workers, evaluator, trainer, server),
        each group SIGTERM and up to its share of cluster.shutdown_s; the whole within
        cluster.shutdown_s, SIGKILL for what is left."""
        deadline = time.monotonic() + self.cc.shutdown_s - 0.5
        for group, share in stop_groups(self.children):
            for role in group:
                role.child.signal(signal.SIGTERM)
            group_deadline = min(deadline, time.monotonic() + share * self.cc.shutdown_s)
            for role in group:
                role.child.wait(group_deadline - time.monotonic())
        for role in self.children:
            if role.child.alive():
                self.log(f"{role.role} did not stop in time; killed")
                role.child.kill()
        self.server.child.close()

    def final_evaluation(self, stopping):
        """Once the run has reached its duration and its roles have stopped: the evaluator rates
        the newest checkpoint it has not rated (`fastgo evaluate --once`, the whole machine
        free, outside its CPU budget) within evaluator.final_rating_s; `stopping()`: true once a
        signal asks the cluster to stop (then SIGTERM, as at the deadline). Returns the rated
        checkpoint's name, or None (nothing to rate, no evaluator, or not finished)."""
        if self.evaluator is None or self.config.evaluator.final_rating_s <= 0:
            return None
        job = unrated_newest(self.run_dir)
        if job is None:
            return None
        name = checkpoint_player(job[0])
        self.log(f"final rating of {name}, the run's last checkpoint, with the whole machine "
                 f"(at most {self.config.evaluator.final_rating_s:g} s: evaluator.final_rating_s)")
        child = self.evaluator.child
        started = time.monotonic()
        try:
            child.start(self.evaluator.argv + ["--once"])
        except Exception as err:
            return self._final(None, f"final rating of {name} skipped: could not start the "
                                     f"evaluator: {err}")
        deadline = started + self.config.evaluator.final_rating_s
        code = None
        while code is None and time.monotonic() < deadline and not stopping():
            code = child.wait(min(FINAL_POLL_S, max(0.0, deadline - time.monotonic())))
        cut = None
        if code is None:
            cut = "a signal" if stopping() else f"its {self.config.evaluator.final_rating_s:g} s"
            child.stop(self.cc.shutdown_s)
        else:
            child.poll()
        if code == diskfull.EXIT_STATUS:     # --once never waits for space: an optional step
            return self._final(None, f"final rating of {name} skipped: the disk is full "
                                     f"({self.evaluator.log_path}); the curve ends before it")
        # a rating cut short may still have made its point (the first rating is written before
        # any refining): the curve ends before the checkpoint only where it did not
        latest = read_ratings(self.run_dir.ratings)["latest"]
        if latest.get("player") != name:
            if cut is not None:
                return self._final(None, f"final rating of {name} stopped at {cut}; the curve "
                                         f"ends before it")
            return self._final(None, f"final rating of {name} did not finish (evaluator exit "
                                     f"status {code}; {self.evaluator.log_path})")
        rating = (f"{name} Elo {latest['elo']:.0f} ({latest['elo_low']:.0f}.."
                  f"{latest['elo_high']:.0f})")
        if cut is not None:
            return self._final(name, f"final rating: {rating}, its refining stopped at {cut}")
        return self._final(name, f"final rating: {rating} in "
                                 f"{time.monotonic() - started:.0f} s")

    def _final(self, name, note):
        """Logs what became of the final rating and keeps it for the summary; returns `name`."""
        self.log(note)
        self.final_note = note
        return name

    # -- the status line ------------------------------------------------------------------------

    def status(self):
        statuses = {role.role: read_status(self.run_dir, role.spec.heartbeat)[0]
                    for role in self.children if role.spec.heartbeat}
        moves = moves_per_s(statuses[w.role] for w in self.workers if w.child.alive())
        return self.supervision.status(
            self.children, train=statuses[self.trainer.role], moves=moves,
            stats=self.server_stats(timeout_s=0.5),
            evaluator=Role.EVALUATE.read_status(self.run_dir)[0],
            ratings=current_ratings(read_ratings(self.run_dir.ratings), self.run_dir),
            cgos=read_cgos(self.run_dir), statuses=statuses, run_dir=self.run_dir)

    def summary(self):
        train, _ = Role.TRAIN.read_status(self.run_dir)
        evaluator, _ = Role.EVALUATE.read_status(self.run_dir)
        supervision = self.supervision
        return summary_text(time.monotonic() - supervision.started, supervision.stop_reason,
                            train or {}, supervision.restarts(self.children),
                            current_ratings(read_ratings(self.run_dir.ratings), self.run_dir),
                            self.run_dir, evaluator, final=self.final_note,
                            cgos=read_cgos(self.run_dir))

    def close(self):
        """Nothing is held once the roles are stopped."""
