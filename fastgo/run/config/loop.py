"""The sections of the running loop: `ClusterConfig` (which roles run, how they are supervised
and how checkpoints are evaluated) and `RecorderConfig` (games from other hosts). Stdlib only at
import.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from fastgo.run.config.endpoints import check_bind
from fastgo.run.config.fields import ConfigError, mapping_setting, setting
from fastgo.run.ladder import LADDER

MATCH_VISITS = 200                      # a checkpoint's visits per move in the arena and evaluator


def check_anchors(anchors):
    """ConfigError naming `anchors` for more than 32 specs, one named twice or a malformed one.
    Each is read by fastgo.player_spec.parse_spec, the one grammar of player specs (imported
    here, not at the top: this module is stdlib only at import), so a spec the arena takes is
    an anchor the config takes, and its error is the arena's."""
    if len(anchors) > 32:
        raise ConfigError(f"anchors: at most 32 player specs, got {len(anchors)}")
    from fastgo.player_spec import parse_spec

    names = set()
    for anchor in anchors:
        if len(anchor) > 1000:
            raise ConfigError(f"anchors: {anchor[:40]!r}... is longer than 1000 characters")
        try:
            name = parse_spec(anchor).name
        except ValueError as error:
            raise ConfigError(f"anchors: {error}") from None
        if name.lower() in names:
            raise ConfigError(f"anchors: {name!r} is named twice (each player spec once)")
        names.add(name.lower())


@dataclass(frozen=True)
class ClusterConfig:
    """`fastgo cluster`: which roles run, how they are supervised, how checkpoints are evaluated."""

    workers: int = setting(1, min=0, max=1024, doc="self-play worker processes")
    evaluate: bool = setting(True, doc="run the evaluator (ratings and curve.png)")
    evaluate_every: int = setting(1, min=1, max=1_000_000,
                                  doc="evaluate at most every k-th new checkpoint (the newest)")
    eval_interval_s: float = setting(
        200.0, min=0.0, max=86_400.0,
        doc="a new curve point about this often: the newest checkpoint gets a first rating (one "
            "batch against the previous rated one) once the last point is this old, and between "
            "points the newest rating is refined (anchors, more games, older checkpoints) as far "
            "as the CPU budget leaves room before the next point; 0: each checkpoint is rated in "
            "full before the next one is looked at")
    eval_visits: int = setting(MATCH_VISITS, min=1, max=100_000,
                               doc="the networks' visits per move in evaluation (the arena's "
                                   "default: the strength players have)")
    eval_move_seconds: float = setting(
        0.0, min=0.0, max=3600.0,
        doc="evaluate at equal time instead: each side this many seconds a move on one thread "
            "(a network the visits its measured speed fits in them, a GTP anchor the time "
            "control; play.equal_time); 0: off, eval_visits a move")
    anchors: tuple[str, ...] = setting(
        LADDER,
        doc="fixed opponents in rising strength, player specs as the arena's (random, mcts:N, "
            "gnugo:LEVEL, gtp:\"COMMAND\", katago:VISITS[,t=T], ref:NAME, a checkpoint path); "
            "each checkpoint plays those whose expected score is informative; gnugo ones are "
            "skipped where GNU Go is not installed (apt-get install gnugo), katago ones where "
            "KataGo or its network is not found (`fastgo katago fetch`); the ref and katago "
            "rungs are calibrated against gnugo:10 (fastgo.run.ladder) "
            "(mcts:10000 is no default: it costs several times what the others do, "
            "docs/guide.md#the-evaluator)")
    eval_anchors: int = setting(2, min=0, max=64,
                                doc="anchors played within the informative range per checkpoint")
    eval_batch_games: int = setting(8, min=2, max=4096,
                                    doc="games of a pairing played at once (one batched search); "
                                        "the stopping rule is checked after each batch")
    eval_max_games: int = setting(32, min=2, max=100_000, doc="games of one pairing at most")
    eval_elo_width: float = setting(300.0, min=1.0, max=10_000.0,
                                    doc="a pairing stops once the 95% interval of its Elo "
                                        "difference is at most this wide (or its result is "
                                        "one-sided)")
    eval_cpu_share: float = setting(0.2, min=0.01, max=1024.0,
                                    doc="the evaluator's CPU at most, in cores, on average over "
                                        "the run (its own time and its GTP engines'); it waits "
                                        "when over")
    final_eval_s: float = setting(
        600.0, min=0.0, max=86_400.0,
        doc="once a run has reached its --duration, its newest checkpoint not yet rated is "
            "rated with the whole machine (self-play and training have stopped, no CPU budget) "
            "within this many seconds, so that curve.png and the summary end at the run's last "
            "checkpoint; 0: no final rating (local launcher)")
    stuck_seconds: float = setting(120.0, min=1.0, max=86_400.0,
                                   doc="a child whose heartbeat is older than this is restarted")
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
        check_anchors(self.anchors)
        if self.eval_max_games < self.eval_batch_games:
            raise ConfigError("eval_max_games must be >= eval_batch_games")
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
