"""The roles of a run, the same for both launchers: each role's name, kind, heartbeat and
resources (RoleSpec, in start order) and its `fastgo` command line (role_argv)."""
from __future__ import annotations

from dataclasses import dataclass, field

# kind -> the [cluster] key that holds its Ray resources
RESOURCES_KEY = {"serve": "server_resources", "train": "trainer_resources",
                 "record": "recorder_resources", "selfplay": "worker_resources",
                 "evaluate": "evaluator_resources"}


@dataclass(frozen=True)
class RoleSpec:
    """One role. `name`: serve, train, recorder, selfplay-wI or evaluate (its files are
    RUN/logs/NAME.log, .out and .status.json); `kind`: serve | train | record | selfplay |
    evaluate; `heartbeat`: the role name of its status file, None for the server (pinged
    instead); `resources`: {CPU, GPU, custom name: amount} for Ray; `worker_id`: selfplay only."""
    name: str
    kind: str
    heartbeat: str | None
    resources: dict = field(default_factory=dict)
    worker_id: int | None = None


def role_specs(cc, workers, evaluate, recorder):
    """The roles in start order: serve, train, recorder (when `recorder` and workers > 0), the
    workers selfplay-w0 .. selfplay-w{workers-1}, evaluate (when `evaluate`). `cc`: [cluster]."""
    def spec(name, kind, heartbeat, worker_id=None):
        return RoleSpec(name, kind, heartbeat, dict(getattr(cc, RESOURCES_KEY[kind])), worker_id)

    specs = [spec("serve", "serve", None), spec("train", "train", "train")]
    if recorder and workers:
        specs.append(spec("recorder", "record", "recorder"))
    specs += [spec(f"selfplay-w{i}", "selfplay", f"selfplay-w{i}", i) for i in range(workers)]
    if evaluate:
        specs.append(spec("evaluate", "evaluate", "evaluate"))
    return specs


def role_argv(spec, config, config_path, run_dir, *, endpoint=None, bind=None, recorder=None,
              overrides=()):
    """The `fastgo` argv of a role. `endpoint`: the server's, for train and selfplay; `bind`:
    what a server or recorder binds (None: the config's endpoint); `recorder`: the endpoint a
    worker sends its games to (None: it writes its shards itself); `overrides`: the cluster's
    --set items (section.key=value), given to every role with its --config."""
    root = run_dir.root
    cfg = ["--config", config_path] + [arg for item in overrides for arg in ("--set", item)]
    if spec.kind == "serve":
        argv = ["serve", *cfg, "--checkpoint",
                f"{config.trainer.publish_slot}={run_dir.latest}", "--shards", run_dir.shards,
                "--log-file", run_dir.log("serve")]
        return argv + (["--bind", bind] if bind else [])
    if spec.kind == "record":
        return ["recorder", *cfg, "--run-dir", root] + \
            (["--bind", bind] if bind else []) + ["--quiet"]
    if spec.kind == "train":
        return ["train", *cfg, "--run-dir", root, "--server", endpoint, "--quiet"]
    if spec.kind == "selfplay":
        argv = ["selfplay", *cfg, "--run-dir", root, "--server", endpoint,
                "--worker-id", str(spec.worker_id), "--quiet"]
        return argv + (["--recorder", recorder] if recorder else [])
    if spec.kind == "evaluate":
        return ["evaluate", *cfg, "--run-dir", root, "--quiet"]
    raise ValueError(f"unknown role kind {spec.kind!r}")
