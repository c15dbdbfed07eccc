"""The sections of the running loop: `ClusterConfig` (which roles run and how they are
supervised) and `RecorderConfig` (games from other hosts). How checkpoints are evaluated is the
`[evaluator]` section (rundata.config.evaluator). Stdlib only at import.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from rundata.config.endpoints import check_bind
from rundata.config.evaluator import FROM_CLUSTER
from rundata.config.fields import ConfigError, mapping_setting, setting


@dataclass(frozen=True)
class ClusterConfig:
    """`fastgo cluster`: which roles run and how they are supervised."""

    # keys the schema no longer takes -> what replaced each (the refusal names it): the
    # evaluator's settings moved to their own section
    RENAMED_KEYS = {old: f"{new} in [evaluator] (evaluator.{new})"
                    for old, new in FROM_CLUSTER.items()}

    workers: int = setting(1, min=0, max=1024, doc="self-play worker processes")
    evaluate: bool = setting(True, doc="run the evaluator (ratings and curve.png)")
    stuck_seconds: float = setting(120.0, min=1.0, max=86_400.0,
                                   doc="a child whose heartbeat is older than this is restarted")
    # 15 minutes: the trainer's torch.compile of its training step took 94 s on a loaded 2-core
    # AMD EPYC; slower or busier cores take several times that, and a restart throws the
    # compile away, so the bound is what only a hang reaches
    busy_limit_s: float = setting(
        900.0, min=1.0, max=86_400.0,
        doc="a child that says it is busy for longer than this (its status file's \"busy\": the "
            "trainer's torch.compile; the server's 'starting:' lines: its backend timing) is "
            "killed and restarted as a stuck one is, in a line naming this key; a child's own "
            "busy heartbeat stops beating after it too")
    selfplay_nice: int = setting(
        0, min=0, max=19,
        doc="the server and the self-play workers run this much nicer (Unix nice) than the "
            "trainer and the evaluator, so where the cores are short the trainer takes its share "
            "first and self-play the rest; 0 = all at one priority")
    backoff_s: float = setting(1.0, min=0.0, max=3600.0, doc="first restart delay (doubles)")
    backoff_max_s: float = setting(30.0, min=0.0, max=3600.0)
    max_restarts: int = setting(5, min=0, max=1_000_000,
                                doc="restarts of one role within restart_window_s before giving up")
    restart_window_s: float = setting(300.0, min=1.0, max=86_400.0)
    status_interval_s: float = setting(5.0, min=0.1, max=3600.0, doc="plain status lines (no terminal)")
    shutdown_s: float = setting(10.0, min=1.0, max=600.0, doc="bound on an ordered shutdown")
    on_disk_full: Literal["wait", "stop"] = setting(
        "wait", doc="a role whose disk is full (ENOSPC, EDQUOT): wait = says so in one line, "
                    "waits with back-off until there is room and goes on by itself; stop = says "
                    "so and the run stops cleanly (exit status 75); neither counts as a crash")
    launcher: Literal["local", "ray"] = setting(
        "local", doc="how the roles are launched: local = child processes on this machine; ray = "
                     "Ray actors on a Ray cluster (optional package ray; fastgo cluster --launcher "
                     "overrides)")
    server_resources: dict[str, float] = mapping_setting(
        {"CPU": 1.0}, doc="ray: resources the server's actor needs, e.g. {GPU = 1}; CPU and GPU "
                          "are Ray's own, any other name a custom node resource")
    trainer_resources: dict[str, float] = mapping_setting(
        {"CPU": 1.0}, doc="ray: resources the trainer's actor needs; the recorder and the "
                          "evaluator run on the same node")
    worker_resources: dict[str, float] = mapping_setting(
        {"CPU": 1.0}, doc="ray: resources of each self-play worker's actor (spread over nodes)")
    evaluator_resources: dict[str, float] = mapping_setting(
        {"CPU": 0.0}, doc="ray: resources of the evaluator's actor (on the trainer's node)")
    recorder_resources: dict[str, float] = mapping_setting(
        {"CPU": 0.0}, doc="ray: resources of the recorder's actor (on the trainer's node; workers "
                          "on other nodes send their games to it)")

    def check(self):
        if self.backoff_max_s < self.backoff_s:
            raise ConfigError("backoff_max_s must be >= backoff_s")
        for key in ("server_resources", "trainer_resources", "worker_resources",
                    "evaluator_resources", "recorder_resources"):
            table = getattr(self, key)
            if len(table) > 64:
                raise ConfigError(f"{key}: at most 64 resources, got {len(table)}")
            for name, amount in table.items():
                if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}", name):
                    raise ConfigError(f"{key}: {name[:40]!r} is not a resource name")
                if isinstance(amount, bool) or not isinstance(amount, (int, float)) \
                        or not 0 <= amount <= 1e6:
                    raise ConfigError(f"{key}.{name}: expected a number in 0..1e6, got {amount!r}")


@dataclass(frozen=True)
class RecorderConfig:
    """The recorder (`fastgo recorder`): games from workers on other hosts into shards (closed
    by selfplay.shard_games and selfplay.shard_seconds)."""

    endpoint: str = setting("tcp://127.0.0.1:5557", pattern=r"(tcp|ipc|inproc)://.+",
                            doc="ROUTER bind address; loopback by default")
    curve_secret_key_file: str = setting("", doc="the recorder's CURVE secret key file")
    curve_allowed: tuple[str, ...] = setting(
        (), doc="worker public keys allowed: key files, folders of *.key files or Z85 keys")
    allow_insecure_remote: bool = setting(False, doc="bind a non-loopback address without CURVE")
    max_game_bytes: int = setting(16 << 20, min=1 << 10, max=1 << 30,
                                  doc="largest game message accepted (refused before decoding)")
    dedup_games: int = setting(1_000_000, min=1, max=1 << 30,
                               doc="game ids remembered to drop resent games (newest kept)")

    def check(self):
        check_bind(self)
