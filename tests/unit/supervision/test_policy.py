"""supervision.policy: the stop order, the time shares, the restart bookkeeping and the status
line once, read by both launchers (the Ray launcher's module imports ray only when it starts one,
so it is read here without ray)."""
from __future__ import annotations

import ast
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

import supervision.local_launcher as local_launcher
import supervision.policy as policy
import supervision.ray_launcher as ray_launcher
from fastgo.diskfull import EXIT_STATUS
from roles.registry import Role, role_specs
from rundata.config import Config
from rundata.rundir import open_run_dir
from supervision.policy import STOP_ORDER, Supervision, moves_per_s, stop_groups
from supervision.restarts import REFUSED, Backoff

ROOT = Path(__file__).resolve().parents[3]
CC = SimpleNamespace(restart_window_s=100.0, max_restarts=1, backoff_s=0.5, backoff_max_s=1.5,
                     stuck_seconds=10.0, on_disk_full="stop")


def roles(workers, recorder, evaluate=True):
    return [SimpleNamespace(spec=spec, role=spec.name, backoff=Backoff(), log_path="L.log",
                            out_path="L.out")
            for spec in role_specs(Config().cluster, workers, evaluate, recorder=recorder)]


def test_both_launchers_read_the_one_policy():
    for launcher in (local_launcher, ray_launcher):
        assert launcher.stop_groups is policy.stop_groups, launcher
        assert launcher.Supervision is policy.Supervision, launcher
        assert launcher.moves_per_s is policy.moves_per_s, launcher


@pytest.mark.parametrize("path", ["supervision/local_launcher.py", "supervision/ray_launcher.py"])
def test_no_launcher_keeps_a_copy_of_the_policy(path):
    """No shares written in a launcher (a list or tuple of fractions), no RestartPolicy of its
    own, no status line of its own."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    floats = [ast.unparse(node) for node in ast.walk(tree)
              if isinstance(node, (ast.List, ast.Tuple)) and len(node.elts) > 1
              and all(isinstance(e, ast.Constant) and isinstance(e.value, float)
                      for e in node.elts)]
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)} \
        | {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
           for alias in node.names}
    assert floats == []
    assert not names & {"RestartPolicy", "status_line", "server_rates", "write_cluster_status"}


def test_the_stop_order_and_its_shares():
    with_recorder = stop_groups(roles(2, recorder=True))
    assert [([r.role for r in group], share) for group, share in with_recorder] == [
        (["selfplay-w0", "selfplay-w1"], 0.25), (["recorder"], 0.1), (["evaluate"], 0.1),
        (["train"], 0.35), (["serve"], 0.2)]
    assert sum(share for _, share in STOP_ORDER) == pytest.approx(1.0)
    # no recorder (the local launcher): its share goes to the trainer, 0.35 + 0.1
    without = stop_groups(roles(1, recorder=False, evaluate=False))
    assert [([r.role for r in group], share) for group, share in without] == [
        (["selfplay-w0"], 0.25), (["train"], pytest.approx(0.45)), (["serve"], 0.2)]


def test_the_bookkeeping_of_failures():
    lines = []
    run = Supervision(CC, lines.append)
    train = roles(0, recorder=False, evaluate=False)[1]
    run.restart(train, "exited with status 1", 1)
    assert run.failed is None and run.restarts([train]) == {"train": 1}
    run.restart(train, "exited with status 1", 1)
    assert run.failed.startswith("train keeps failing") and run.fail_code == 1
    full = Supervision(CC, lines.append)
    full.restart(train, "exited with status 75", EXIT_STATUS)
    assert full.failed.startswith("train stopped on a full disk") and full.fail_code == EXIT_STATUS
    refused = Supervision(CC, lines.append)
    refused.refused(train, "bad key", " on node 10.0.0.2")
    assert refused.fail_code == REFUSED
    assert refused.failed == "train refused to run (exit status 2): bad key (see L.out on node 10.0.0.2)"


def test_the_status_line_from_either_launchers_figures(tmp_path):
    run_dir = open_run_dir(tmp_path / "run")
    run = Supervision(CC, lambda line: None)
    some = roles(1, recorder=False, evaluate=False)
    some[2].backoff.count = 2
    stats = {"positions": 1000, "batches": 10, "max_batch": 100}
    figures = dict(train={"games": 3, "step": 7}, moves=12.0, evaluator=None, ratings=None,
                   cgos=None, statuses={})
    first = run.status(some, stats=stats, run_dir=run_dir, **figures)
    assert "games 3  moves/s 12  evals/s 0  fill 0.00  step 7" in first
    assert first.endswith("restarts 2 (selfplay-w0 2)")
    written = json.loads(Path(run_dir.status("cluster")).read_text())
    assert written["line"] == first and written["restarts"] == {"selfplay-w0": 2}
    # 5000 positions in 50 batches of 100 over 100 s (and the moments the calls take)
    later = {"positions": 6000, "batches": 60, "max_batch": 100}
    run._last_stats = (stats, run._last_stats[1] - 100.0)
    assert "evals/s 50  fill 1.00" in run.status(some, stats=later, **figures)
    # the same stats dict again (no fresh reply under Ray): the last rates stand
    assert "evals/s 50  fill 1.00" in run.status(some, stats=later, **figures)


def test_moves_per_s_leaves_out_what_is_not_a_figure():
    assert moves_per_s([{"moves_per_s": 10.5}, None, {"moves_per_s": "x"},
                        {"moves_per_s": float("inf")}, {"moves_per_s": 1e12}, {}, ["odd"]]) == 10.5


def test_the_supervisor_reads_the_bookkeeping_of_the_policy():
    source = (ROOT / "supervision" / "supervisor.py").read_text(encoding="utf-8")
    assert "cluster.supervision" in source and "cluster.failed" not in source
    assert Role.SERVE is STOP_ORDER[-1][0]              # the server stops last
