"""`fastgo cluster --launcher ray [--address ADDR]`: the roles of a run as Ray actors on a Ray
cluster. Imported only by that launcher (the local launcher never imports ray).

Each role (serve, train, recorder, evaluate, selfplay-wI) is one actor, `RoleHost`, that starts
the role's `fastgo ...` command as a child process on its node and reports on it. A child process
rather than the role in the actor's own process: the roles keep their signal handling (SIGTERM
closes shards, writes the checkpoint), their own logs and torch state, and a role that crashes
leaves its actor alive to report how it ended. The child dies with its actor (PR_SET_PDEATHSIG),
so a lost actor never leaves a role behind holding a port or a worker id.

Placement comes from the config: cluster.server_resources and trainer_resources say where the
server and trainer go (e.g. {GPU = 1} or a custom node resource), workers are spread over the
nodes (SPREAD) with worker_resources, the recorder and the evaluator run on the trainer's node
(node affinity). Roles find each other only through Ray: the server's and the recorder's actors
bind their node's address (ray.util.get_node_ip_address()) on a port chosen at bind time and
return the endpoint, which the driver passes to the trainer and the workers as arguments. A
worker on the trainer's node writes its shards itself; a worker on any other node sends its games
to the recorder (`fastgo selfplay --recorder`), so no filesystem is shared. When every node of
the Ray cluster is this machine, both bind loopback instead (no CURVE needed); on a remote node
they bind the node's address, which their own config checks accept only with CURVE keys
(curve_secret_key_file and curve_allowed of [server] and [recorder]) or allow_insecure_remote.
The run directory is the same path on every node; each role writes its own node's copy, and the
driver learns everything (heartbeats, server stats, ratings) from the actors' replies.

Supervision follows the policy both launchers read (supervision.policy: the stop order, the
restart bookkeeping, the status line): Ray restarts a lost actor (max_restarts = -1; the driver's
cluster.max_restarts within restart_window_s decides when to give up), the driver sees the new
incarnation (another actor pid, or the actor's death reply), counts a restart for the role and
starts the role again in it; a child that exits, stops making progress or says it is busy for
over cluster.busy_limit_s is restarted the same way with back-off. Calls are never retried by
Ray (max_task_retries = 0): the driver polls again on its next tick, so no call runs twice. A
node that leaves takes with it only what was on it (games in progress, a worker's unconfirmed
games); Ray places its actors again wherever their resources allow. A role that no node takes
within PLACEMENT_TIMEOUT_S at start is an error (exit status 2); what the nodes must offer the
roles is supervision.ray_placement's.
"""
from __future__ import annotations

import os
import signal
import time

from roles.registry import Role, role_argv, role_specs
from rundata.rundir import RATINGS
from supervision.policy import Supervision, moves_per_s, stop_groups
from supervision.ray_placement import (
    RayUnavailable,
    actor_options,
    check_feasible,
    check_reachable,
    local_instance_options,
)
from supervision.restarts import REFUSED, Backoff
from supervision.role_host import CONFIG_TOKEN, RoleHost
from supervision.status import current_ratings, read_cgos, summary_text

PLACEMENT_TIMEOUT_S = 60.0         # a role no node can take within this is an error
POLL_EVERY_S = 1.0


def import_ray():
    try:
        import ray
    except ImportError:
        raise RayUnavailable("--launcher ray needs the optional package ray: "
                             "pip install \"fastgo[ray]\" (or pip install \"ray>=2.9\")") from None
    return ray


class RayRoleHost(RoleHost):
    """RoleHost as a Ray actor: where() names its node."""

    def where(self):
        import ray
        return {"actor": os.getpid(), "node": ray.get_runtime_context().get_node_id(),
                "ip": ray.util.get_node_ip_address()}


class RayRole:
    """The driver's view of one role's actor."""

    def __init__(self, spec, run_dir):
        self.spec = spec
        self.role = spec.name
        self.kind = spec.kind               # a roles.registry.Role
        self.worker_id = spec.worker_id
        self.heartbeat = spec.heartbeat
        self.resources = dict(spec.resources)
        self.backoff = Backoff()
        self.log_path = run_dir.log(self.role)
        self.out_path = run_dir.output(self.role)
        self.actor = None
        self.actor_pid = None               # the incarnation the driver knows
        self.node = self.ip = None
        self.child = None                   # the child's pid while it runs
        self.need_start = True
        self.expect_exit = False            # stopped on purpose (the server moved): no restart counted
        self.pending = None                 # the poll in flight
        self.last = {}                      # the last poll's reply
        self.started = 0.0


class RayCluster:
    """The interface supervisor.supervise drives (start_all, supervise_once, status, shutdown,
    summary, close) over Ray actors."""

    def __init__(self, config, config_path, run_dir, workers, evaluate, log, *, address=None,
                 overrides=()):
        self.ray = ray = import_ray()
        self.config = config
        self.overrides = tuple(overrides)
        self.cc = config.cluster
        self.run_dir = run_dir
        self.log = log
        self.supervision = Supervision(self.cc, log)
        self.should_stop = lambda: False
        with open(config_path, encoding="utf-8") as handle:
            self.config_text = handle.read()
        self.children = [RayRole(spec, run_dir)
                         for spec in role_specs(self.cc, workers, evaluate, recorder=True)]
        self.server, self.trainer = self.children[0], self.children[1]
        self.workers = [c for c in self.children if c.kind is Role.SELFPLAY]
        self.recorder = next((c for c in self.children if c.kind is Role.RECORDER), None)
        self.evaluator = next((c for c in self.children if c.kind is Role.EVALUATE), None)
        self.endpoint = None                # the server's, as it reported it
        self.recorder_endpoint = None
        self._next_poll = 0.0
        self._actors_by_kind = {}
        if address:
            check_reachable(address)
        try:
            if address:
                ray.init(address=address, include_dashboard=False, log_to_driver=False,
                         logging_level="WARNING", configure_logging=True)
                self.where = f"Ray cluster at {address}"
            else:
                ray.init(**local_instance_options(c.resources for c in self.children))
                self.where = "a Ray instance on this machine"
        except Exception as err:             # ConnectionError, RuntimeError, ValueError ...
            raise RayUnavailable(f"--address {address}: cannot join the Ray cluster: "
                                 f"{str(err).splitlines()[0] if str(err) else type(err).__name__}"
                                 if address else f"cannot start Ray on this machine: {err}") from None
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        self.where += f", {len(nodes)} node(s)"
        try:
            check_feasible(self.children, nodes)
        except RayUnavailable:
            ray.shutdown()
            raise
        # Every node on this machine: loopback endpoints, no CURVE needed.
        here = ray.util.get_node_ip_address()
        self.loopback = all(n.get("NodeManagerAddress") == here for n in nodes)

    # -- actors ---------------------------------------------------------------------------------

    def _make_actor(self, child, strategy=None):
        ray = self.ray
        cls = self._actors_by_kind.get("host")
        if cls is None:
            cls = self._actors_by_kind["host"] = ray.remote(RayRoleHost)
        options = dict(actor_options(child.resources), max_restarts=-1, max_task_retries=0)
        if strategy is not None:
            options["scheduling_strategy"] = strategy
        files = (RATINGS,) if child.kind is Role.EVALUATE else ()
        child.actor = cls.options(**options).remote(child.role, self.run_dir.root, child.heartbeat,
                                                    self.config_text, os.getcwd(), files)

    def _get(self, ref, timeout_s, what):
        ray = self.ray
        try:
            return ray.get(ref, timeout=timeout_s)
        except ray.exceptions.GetTimeoutError:
            raise RuntimeError(f"{what}: no reply within {timeout_s:g} s") from None

    def _place(self, children):
        """Waits until each actor runs somewhere; records its node."""
        refs = [c.actor.where.remote() for c in children]
        deadline = time.monotonic() + PLACEMENT_TIMEOUT_S
        ready = []
        while len(ready) < len(refs) and time.monotonic() < deadline:
            if self.should_stop():
                raise RuntimeError("stopped while the roles were being placed")
            ready, _ = self.ray.wait(refs, num_returns=len(refs), timeout=0.5)
        for child, ref in zip(children, refs):
            if ref not in ready:
                self.supervision.fail_code = REFUSED
                raise RuntimeError(f"{child.role}: no node of the Ray cluster took it within "
                                   f"{PLACEMENT_TIMEOUT_S:g} s (it needs {child.resources})")
            info = self.ray.get(ref)
            child.actor_pid, child.node, child.ip = info["actor"], info["node"], info["ip"]

    def start_all(self):
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
        self._make_actor(self.server)
        self._make_actor(self.trainer)
        self._place([self.server, self.trainer])
        if not self._start(self.server):
            raise RuntimeError(self.supervision.failed or "the server did not start")
        beside = NodeAffinitySchedulingStrategy(node_id=self.trainer.node, soft=False)
        for child in (self.recorder, self.evaluator):
            if child is not None:
                self._make_actor(child, beside)
        for child in self.workers:
            self._make_actor(child, "SPREAD")
        self._place([c for c in self.children
                     if c.kind in (Role.RECORDER, Role.SELFPLAY, Role.EVALUATE)])
        if self.recorder is not None and not self._start(self.recorder):
            raise RuntimeError(self.supervision.failed or "the recorder did not start")
        for child in self.children[1:]:
            if child is not self.recorder:
                self._start(child)
        for child in self.children:
            print(f"fastgo cluster: {child.role:<12} node {child.node} ({child.ip}) actor pid "
                  f"{child.actor_pid} pid {child.child} log {child.log_path}", flush=True)

    def _bind(self, child):
        """tcp://HOST:* on the child's node: loopback when every node is this machine."""
        host = "127.0.0.1" if self.loopback else child.ip
        return f"tcp://[{host}]:*" if ":" in host else f"tcp://{host}:*"

    def _argv(self, child):
        bind = self._bind(child) if child.kind.ready else None
        # A worker on another node than the trainer's sends its games to the recorder.
        recorder = (self.recorder_endpoint if child.kind is Role.SELFPLAY and self.recorder_endpoint
                    and child.node != self.trainer.node else None)
        return role_argv(child.spec, self.config, CONFIG_TOKEN, self.run_dir,
                         endpoint=self.endpoint, bind=bind, recorder=recorder,
                         overrides=self.overrides)

    def _start(self, child):
        """Starts the role in its actor; False when it could not (a lost actor is polled again
        next tick; a server that fails to bind is a failure)."""
        try:
            reply = self._get(child.actor.start.remote(self._argv(child), child.kind.ready),
                              90.0, f"{child.role} start")
        except (self.ray.exceptions.RayActorError, RuntimeError) as err:
            self.log(f"{child.role}: could not start it: {str(err).splitlines()[0]}")
            return False
        self._seen(child, reply)
        child.started = time.monotonic()
        child.need_start = False
        child.child = reply["child"]
        if child.backoff.count and child.child is not None:
            self.log(f"{child.role} running: node {child.node} ({child.ip}) actor pid "
                     f"{child.actor_pid} pid {child.child}")
        if child.kind.ready:
            if reply["endpoint"] is None:
                if reply["code"] == REFUSED:
                    self.supervision.refused(child, reply["last_line"], f" on node {child.ip}")
                else:
                    self.supervision.restart(child, f"did not start ({reply['last_line']})")
                    child.need_start = True
                return False
            if child.kind is Role.SERVE:
                moved = self.endpoint is not None and reply["endpoint"] != self.endpoint
                self.endpoint = reply["endpoint"]
                followers = (Role.TRAIN, Role.SELFPLAY)
            else:
                moved = self.recorder_endpoint is not None and reply["endpoint"] != self.recorder_endpoint
                self.recorder_endpoint = reply["endpoint"]
                followers = (Role.SELFPLAY,)
            self.log(f"{child.role} on {reply['endpoint']} (node {child.node})")
            if moved:                      # the roles that talk to it must follow it
                for other in self.children:
                    if other.kind in followers and other.child is not None and (
                            child.kind is Role.SERVE or other.node != self.trainer.node):
                        other.expect_exit = True
                        other.actor.signal.remote(signal.SIGTERM)
        return True

    def _seen(self, child, reply):
        """A reply from `child`'s actor: a new incarnation means Ray restarted it."""
        if child.actor_pid is not None and reply["actor"] != child.actor_pid:
            self._lost(child)
        if child.actor_pid is None:
            info = None
            try:
                info = self.ray.get(child.actor.where.remote(), timeout=10)
            except Exception:
                pass
            if info is not None:
                child.node, child.ip = info["node"], info["ip"]
            child.actor_pid = reply["actor"]

    def _lost(self, child):
        if child.actor_pid is None:
            return                          # counted already
        child.actor_pid = None
        child.child = None
        child.need_start = True
        child.expect_exit = False
        self.supervision.restart(child, "lost its actor (process or node gone); Ray restarts it")

    # -- supervision ----------------------------------------------------------------------------

    def supervise_once(self):
        now = time.monotonic()
        if now < self._next_poll:
            return
        self._next_poll = now + POLL_EVERY_S
        ray = self.ray
        for child in self.children:
            if child.pending is None:
                child.pending = child.actor.poll.remote()
        pending = [c.pending for c in self.children]
        ready, _ = ray.wait(pending, num_returns=len(pending), timeout=1.0)   # the rest: next tick
        ready = set(ready)
        for child in self.children:
            if child.pending not in ready:
                continue
            ref, child.pending = child.pending, None
            try:
                reply = ray.get(ref)
            except ray.exceptions.RayActorError:
                self._lost(child)
                continue
            self._seen(child, reply)
            self._handle(child, reply)
            if self.supervision.failed:
                return
        now = time.monotonic()
        for child in self.children:
            if child.need_start and child.actor_pid is not None and now >= child.backoff.next_start:
                if child.kind is not Role.SERVE and self.endpoint is None:
                    continue                       # the server first: the others need its address
                self._start(child)
                if self.supervision.failed:
                    return

    def _handle(self, child, reply):
        child.last = reply
        code = reply["code"]
        if code is not None:
            child.child = None
            child.need_start = True
            if child.expect_exit:
                child.expect_exit = False
            elif code == REFUSED:                # a restart cannot help
                self.supervision.refused(child, reply["last_line"], f" on node {child.ip}")
            else:
                self.supervision.restart(child, f"exited with status {code}", code)
            return
        if reply["child"] is None:
            if child.child is not None:            # the actor no longer has it (a new incarnation)
                child.child = None
                child.need_start = True
            return
        child.child = reply["child"]
        why = self.supervision.policy.busy_past(child, reply.get("busy"),
                                                (child.started, child.child))
        if why is None and reply["age"] > self.cc.stuck_seconds:
            why = f"made no progress for {reply['age']:.0f} s (stuck or stopped); killed"
        if why is not None:
            try:
                self._get(child.actor.kill.remote(), 20.0, f"{child.role} kill")
            except (self.ray.exceptions.RayActorError, RuntimeError):
                pass
            child.child = None
            child.need_start = True
            self.supervision.restart(child, why)
        else:
            self.supervision.policy.healthy(child.backoff, child.started, time.monotonic())

    # -- the status line, shutdown, summary -----------------------------------------------------

    def _train_status(self):
        return self.trainer.last.get("status") or {}

    def _evaluator_status(self):
        return self.evaluator.last.get("status") if self.evaluator else None

    def _ratings(self):
        return (self.evaluator.last.get("files") or {}).get(RATINGS) if self.evaluator else None

    def status(self):
        statuses = {child.role: child.last.get("status") for child in self.children}
        moves = moves_per_s(statuses[w.role] for w in self.workers if w.child is not None)
        # the run directory is the driver's own where the trainer's node is this one: the
        # CGOS estimate from its table, and logs/cluster.status.json for `fastgo dashboard`
        local = os.path.isdir(self.run_dir.logs)
        ratings = current_ratings(self._ratings(), self.run_dir) if local else self._ratings()
        return self.supervision.status(
            self.children, train=self._train_status(), moves=moves,
            stats=self.server.last.get("stats"), evaluator=self._evaluator_status(),
            ratings=ratings, cgos=read_cgos(self.run_dir) if local else None,
            statuses=statuses, run_dir=self.run_dir if local else None)

    def shutdown(self):
        """The roles in supervision.policy's stop order (workers, recorder, evaluator, trainer,
        server): each actor stops its child (SIGTERM, then SIGKILL at its group's share of
        shutdown_s); then the actors themselves."""
        ray = self.ray
        deadline = time.monotonic() + self.cc.shutdown_s - 0.5
        for group, share in stop_groups(self.children):
            group = [c for c in group if c.actor is not None]
            if not group:
                continue
            wait_s = max(0.1, min(deadline - time.monotonic(), share * self.cc.shutdown_s))
            refs = [c.actor.stop.remote(wait_s) for c in group]
            ready, _ = ray.wait(refs, num_returns=len(refs), timeout=wait_s + 2.0)
            for child, ref in zip(group, refs):
                if ref in ready:
                    try:
                        child.last = ray.get(ref)
                        child.child = None
                        continue
                    except ray.exceptions.RayActorError:
                        pass
                self.log(f"{child.role} did not stop in time; its actor is killed")
        for child in self.children:
            if child.actor is not None:
                try:
                    ray.kill(child.actor, no_restart=True)   # the child dies with it
                except Exception:
                    pass

    def final_evaluation(self, stopping):
        """No final rating under Ray (the evaluator's actor has gone with the others, and the
        checkpoints are on the trainer's node): says how to make one there. Returns None."""
        if self.evaluator is not None and self.config.evaluator.final_rating_s > 0:
            self.log(f"no final rating with the ray launcher: on the trainer's node, `fastgo "
                     f"evaluate --config CONFIG --run-dir {self.run_dir.root} --once` rates the "
                     f"run's last checkpoint")
        return None

    def summary(self):
        supervision = self.supervision
        return summary_text(time.monotonic() - supervision.started, supervision.stop_reason,
                            self._train_status(), supervision.restarts(self.children),
                            self._ratings(), self.run_dir, self._evaluator_status())

    def close(self):
        self.ray.shutdown()
