"""The supervision policy of a run, one for both launchers (supervision.local_launcher,
supervision.ray_launcher): the order the roles stop in with each group's share of
cluster.shutdown_s (STOP_ORDER, stop_groups), and one Supervision per run keeping its
bookkeeping (restarts over supervision.restarts' policy, why the run must stop and its exit
status, why it stopped, since when it runs) and assembling the status line from the figures each
launcher gathers its own way (files here, actor replies under Ray)."""
from __future__ import annotations

import time

from fastgo import diskfull
from fastgo.coords import json_number
from roles.registry import Role
from supervision.restarts import REFUSED, RestartPolicy
from supervision.status import server_rates, status_line, write_cluster_status

# The stop order, each group with its share of cluster.shutdown_s: the workers first (they close
# their shards; remote workers' games reach the recorder), the recorder (it writes what it
# holds), the evaluator, the trainer (it writes its checkpoint), the server last (the others need
# it while they stop). The shares add up to 1 with every role there.
STOP_ORDER = ((Role.SELFPLAY, 0.25), (Role.RECORDER, 0.1), (Role.EVALUATE, 0.1),
              (Role.TRAIN, 0.35), (Role.SERVE, 0.2))


def stop_groups(roles):
    """[(the roles of one group, its share of cluster.shutdown_s)] in STOP_ORDER for `roles`
    (each with `spec.kind`, a Role); groups without a role are left out. A run without a
    recorder (the local launcher's: its workers write their shards themselves) gives the
    recorder's share to the trainer: its checkpoint is the costliest write of a stop, and so it
    has 0.45 of the whole under both launchers when nothing else needs that time."""
    kinds = {role.spec.kind for role in roles}
    spare = 0.0 if Role.RECORDER in kinds else dict(STOP_ORDER)[Role.RECORDER]
    groups = []
    for kind, share in STOP_ORDER:
        group = [role for role in roles if role.spec.kind is kind]
        if group:
            groups.append((group, share + (spare if kind is Role.TRAIN else 0.0)))
    return groups


class Supervision:
    """One run's supervision bookkeeping, which supervisor.supervise reads: `failed`: why the
    cluster must stop (a role keeps failing, refused its settings or stopped on a full disk
    under cluster.on_disk_full = "stop"), else None; `fail_code`: the exit status then (1;
    REFUSED for refused settings; diskfull.EXIT_STATUS); `stop_reason`: why it stopped, for
    the summary; `started`: monotonic start time. `cc`: the [cluster] config; `log(message)`:
    the supervisor's log line. A role is what RestartPolicy takes, with `spec` (a RoleSpec)."""

    def __init__(self, cc, log) -> None:
        self.cc = cc
        self.log = log
        self.policy = RestartPolicy(cc, log)
        self.failed: str | None = None
        self.fail_code = 1
        self.stop_reason: str | None = None
        self.started = time.monotonic()
        self._last_stats = None        # (the server's stats, monotonic time) of the last line
        self._last_rates = (0.0, 0.0)

    def restart(self, role, why, code=None):
        """A restart of `role` counted and scheduled (RestartPolicy.restart); one too many, or a
        full disk under cluster.on_disk_full = "stop", fails the run."""
        failed = self.policy.restart(role, why, code=code)
        if failed:
            self.failed = failed
            if code == diskfull.EXIT_STATUS:   # stopped cleanly on a full disk
                self.fail_code = diskfull.EXIT_STATUS

    def refused(self, role, last_line, where=""):
        """`role` exited with status REFUSED: no restart can help, the run fails with it."""
        self.fail_code = REFUSED
        self.failed = RestartPolicy.refused(role, last_line, where)

    @staticmethod
    def restarts(roles):
        """{role name: restarts} of the roles restarted at least once."""
        return RestartPolicy.counts(roles)

    def status(self, roles, *, train, moves, stats, evaluator, ratings, cgos, statuses,
               run_dir=None):
        """The status line from the launcher's figures: `train` and `evaluator` their status
        dicts, `moves` the workers' moves/s, `stats` the server's latest stats (the same dict
        again: no fresh figures, the last rates stand), `ratings` ratings.json's content,
        `cgos` read_cgos or None, `statuses` {role name: status dict or None} (the disk part);
        with `run_dir`, logs/cluster.status.json is written there too."""
        if stats and self._last_stats and stats is self._last_stats[0]:
            evals, fill = self._last_rates
        else:
            evals, fill = self._last_rates = server_rates(stats, self._last_stats)
        if stats:
            self._last_stats = (stats, time.monotonic())
        restarts = self.restarts(roles)
        line = status_line(time.monotonic() - self.started, train or {}, moves, evals, fill,
                           ratings, restarts, evaluator, cgos) \
            + self.policy.disk_note(roles, statuses)
        if run_dir is not None:
            write_cluster_status(run_dir, {"evals_per_s": round(evals, 1), "fill": round(fill, 4),
                                           "moves_per_s": round(moves, 1),
                                           "restarts": restarts, "line": line})
        return line


def moves_per_s(statuses) -> float:
    """The workers' moves/s summed over their status dicts (None: left out): a figure from
    outside, checked (finite, 0..1e9) or left out."""
    moves = 0.0
    for data in statuses:
        if data:
            try:
                moves += json_number(data.get("moves_per_s", 0.0), what="moves_per_s", low=0.0,
                                     high=1e9)
            except (ValueError, TypeError, AttributeError):
                pass
    return moves
