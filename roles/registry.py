"""The roles of a run, each one named thing: its name (Role), the `fastgo` command that runs it,
the module holding its body, the line it prints once bound, the [cluster] key of its Ray
resources, and its files in RUN/logs (NAME.log, NAME.out, NAME.status.json; a worker's NAME is
selfplay-wID). The supervisor, both launchers, the status line and the dashboard read roles
here; RoleSpec is one role of a cluster, role_specs the roles in start order and role_argv a
role's command line, its own flags written as roles.flags declares them. Beside the roles, the
variants a run chooses between (fastgo.variants: Algorithm, Search, and the self-play Worker an
algorithm's games are played by, selfplay_worker), defined on the kernel's floor where every
user can import them and re-exported here. Stdlib, fastgo.variants, rundata and roles.flags only."""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from fastgo.variants import Algorithm, Search, Worker, selfplay_worker
from roles.flags import CONFIG, OVERRIDES, QUIET, RECORDER, RUN_DIR, SELFPLAY, SERVE, TRAIN
from rundata.rundir import StatusFile, read_status

__all__ = ["Algorithm", "READY", "RESOURCES_KEY", "Role", "RoleSpec", "SUPERVISOR", "Search",
           "Worker", "is_worker_file", "role_argv", "role_specs", "selfplay_worker"]

SUPERVISOR = "cluster"              # the files of `fastgo cluster` itself: its output, its figures


class Role(StrEnum):
    """A role by its name, which is also its `fastgo` command and (but for a worker's id) the
    name of its files in RUN/logs."""
    SERVE = "serve"
    TRAIN = "train"
    RECORDER = "recorder"
    SELFPLAY = "selfplay"
    EVALUATE = "evaluate"

    @property
    def command(self) -> str:
        """The `fastgo` command that runs it (fastgo_cli.main)."""
        return self.value

    @property
    def body(self) -> str:
        """The module whose run(args) is its body, called with the command's parsed options."""
        return f"roles.{self.value}"

    @property
    def ready(self) -> str | None:
        """The start of the line it prints on stdout once bound (its endpoint follows), for
        the roles others connect to; None for the rest."""
        return READY.get(self)

    @property
    def starting(self) -> str | None:
        """The start of the lines it prints on stdout while a long start is under way (`auto`'s
        timing of the backends), before its ready line; None for roles without one."""
        ready = READY.get(self)
        return ready.replace("ready on ", "starting: ") if ready else None

    @property
    def resources_key(self) -> str:
        """The [cluster] key of its Ray resources."""
        return RESOURCES_KEY[self]

    @property
    def heartbeat(self) -> bool:
        """Whether it beats a status file (the server is pinged with a stats request
        instead)."""
        return self is not Role.SERVE

    def file_name(self, worker_id=None) -> str:
        """NAME of its files in RUN/logs: the role's name, a worker's with its id."""
        if self is Role.SELFPLAY:
            return f"selfplay-w{int(worker_id or 0)}"
        return self.value

    def log(self, run_dir, worker_id=None) -> str:
        """RUN/logs/NAME.log: its own log (roles.start.setup_logging)."""
        return run_dir.log(self.file_name(worker_id))

    def status_file(self, run_dir, worker_id=None) -> StatusFile:
        """Its heartbeat, RUN/logs/NAME.status.json, to write."""
        return StatusFile(run_dir, self.file_name(worker_id))

    def read_status(self, run_dir, worker_id=None):
        """(content dict or None, mtime or None) of its heartbeat."""
        return read_status(run_dir, self.file_name(worker_id))


READY = {Role.SERVE: "fastgo serve: ready on ", Role.RECORDER: "fastgo recorder: ready on "}
RESOURCES_KEY = {Role.SERVE: "server_resources", Role.TRAIN: "trainer_resources",
                 Role.RECORDER: "recorder_resources", Role.SELFPLAY: "worker_resources",
                 Role.EVALUATE: "evaluator_resources"}


def is_worker_file(name: str) -> bool:
    """Whether NAME (of a file in RUN/logs, without its suffix) is a self-play worker's."""
    return name.startswith(f"{Role.SELFPLAY.value}-w")


@dataclass(frozen=True)
class RoleSpec:
    """One role of a cluster. `name`: its files' NAME (Role.file_name); `kind`: the Role;
    `heartbeat`: the name of its status file, None for the server (pinged instead);
    `resources`: {CPU, GPU, custom name: amount} for Ray; `worker_id`: selfplay only."""
    name: str
    kind: Role
    heartbeat: str | None
    resources: dict = field(default_factory=dict)
    worker_id: int | None = None


def role_specs(cc, workers, evaluate, recorder):
    """The roles in start order: serve, train, recorder (when `recorder` and workers > 0), the
    workers selfplay-w0 .. selfplay-w{workers-1}, evaluate (when `evaluate`). `cc`: [cluster]."""
    def spec(role, worker_id=None):
        name = role.file_name(worker_id)
        return RoleSpec(name, role, name if role.heartbeat else None,
                        dict(getattr(cc, role.resources_key)), worker_id)

    specs = [spec(Role.SERVE), spec(Role.TRAIN)]
    if recorder and workers:
        specs.append(spec(Role.RECORDER))
    specs += [spec(Role.SELFPLAY, i) for i in range(workers)]
    if evaluate:
        specs.append(spec(Role.EVALUATE))
    return specs


def role_argv(spec, config, config_path, run_dir, *, endpoint=None, bind=None, recorder=None,
              overrides=()):
    """The `fastgo` argv of a role. `endpoint`: the server's, for train and selfplay; `bind`:
    what a server or recorder binds (None: the config's endpoint); `recorder`: the endpoint a
    worker sends its games to (None: it writes its shards itself); `overrides`: the cluster's
    --set items (section.key=value), given to every role with its --config."""
    role = Role(spec.kind)
    cfg = CONFIG.argv(config_path) + OVERRIDES.argv(list(overrides))
    quiet = QUIET.argv(True)
    if role is Role.SERVE:
        slot = f"{config.trainer.publish_slot}={run_dir.latest}"
        return [role.command, *cfg, *SERVE["checkpoint"].argv([slot]),
                *SERVE["shards"].argv(run_dir.shards), *SERVE["log_file"].argv(role.log(run_dir)),
                *quiet, *SERVE["bind"].argv(bind)]
    run = RUN_DIR.argv(run_dir.root)
    if role is Role.RECORDER:
        return [role.command, *cfg, *run, *RECORDER["bind"].argv(bind), *quiet]
    if role is Role.TRAIN:
        return [role.command, *cfg, *run, *TRAIN["server"].argv(endpoint), *quiet]
    if role is Role.SELFPLAY:
        return [role.command, *cfg, *run, *SELFPLAY["server"].argv(endpoint),
                *SELFPLAY["worker_id"].argv(spec.worker_id), *quiet,
                *SELFPLAY["recorder"].argv(recorder)]
    return [role.command, *cfg, *run, *quiet]          # evaluate
