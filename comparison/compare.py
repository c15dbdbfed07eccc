"""`fastgo compare`: two configs learn for the same wall time on this machine, one after the other
(`fastgo cluster` into OUT/a, then into OUT/b), then each run's last checkpoint plays the same
opponents in the arena (play.arena.loop.run_arena, in this process, from an ArenaPlan), and the
two last checkpoints play each other (the most sensitive of the matches: no reference's strength
stands between them). OUT/compare.json, OUT/compare.png (both evaluator Elo curves against wall
time) and a Markdown table hold the result.

OUT/matches/RUN-OPPONENT.json is the arena's JSON of one match, RUN-OPPONENT.out its output,
OUT/matches/a-vs-b.json and .out the head-to-head match; RUN/logs/cluster.out the output of `fastgo
cluster`. The clusters are children (supervision.role_process.Children) in sessions of their own:
a SIGINT or SIGTERM to this process is passed on to the running child, which stops cleanly, and
nothing further is started; a cluster outlives a killed parent (it stops at its --duration and
shuts its roles down in order). A match stops at a signal as `fastgo arena` does (its finished
games reported), and nothing further is started.

The plan and its checks before any run: comparison.plan; what the runs and matches left, read
back: comparison.results; the matches: comparison.matches; the table and figure:
comparison.report.
"""
from __future__ import annotations

import os

from comparison.matches import arena_plan, play_arena
from comparison.plan import CompareError, Opponent, Plan, RunPlan
from comparison.report import draw, markdown_table
from comparison.results import assemble, head_to_head_paths, last_checkpoint, match_paths
from fastgo import bounded_json
from fastgo.files import atomic_write_text
from roles.flags import CONFIG, OVERRIDES, RUN_DIR
from roles.registry import SUPERVISOR
from rundata.rundir import RunDir
from supervision.role_process import Children, last_line
from supervision.status import clock

STOP_S = 30.0                   # a child's time to stop after a signal (a cluster: beyond its
                                # shutdown_s), then SIGKILL
EXIT_SIGNAL = {"SIGINT": 130, "SIGTERM": 143}


# --- children ----------------------------------------------------------------------------------

def duration_text(seconds: float) -> str:
    """Seconds as `fastgo cluster --duration` reads them: '1800', '20.5'."""
    return f"{seconds:.3f}".rstrip("0").rstrip(".")


def cluster_argv(run: RunPlan, root: str, seconds: float) -> list:
    return ["cluster", *CONFIG.argv(run.config_path), *RUN_DIR.argv(root),
            "--duration", duration_text(seconds), *OVERRIDES.argv(list(run.overrides))]


# --- the whole comparison ----------------------------------------------------------------------

def _play_head_to_head(plan: Plan, out):
    """Run a's last checkpoint against run b's, each on its own run's backend; the name of the
    signal that stopped it, else None."""
    run_a, run_b = plan.runs
    checkpoint_a, checkpoint_b = (last_checkpoint(plan.root(r.name))[1] for r in plan.runs)
    json_path, log_path = head_to_head_paths(plan.out)
    out(f"fastgo compare: run a ({os.path.basename(checkpoint_a)}) against run b "
        f"({os.path.basename(checkpoint_b)}), {plan.games} games at {plan.pace}")
    if os.path.exists(log_path):
        os.remove(log_path)
    arena = arena_plan(run_a, checkpoint_a, Opponent("b", checkpoint_b), plan,
                       plan.seed + len(plan.opponents), json_path, backend_b=run_b.backend)
    code, stopped = play_arena(arena, log_path, "[a vs b] ", out)
    if stopped:
        return stopped
    if code != 0:
        raise CompareError(f"run a against run b: fastgo arena exited with status {code}: "
                           f"{last_line(log_path)} (see {log_path})", code=1)
    return None


def compare(plan: Plan, out=print) -> int:
    """Runs the plan (see the module); returns the exit status. CompareError for a failure that
    is one line (a run without a checkpoint, a match that could not be played)."""
    os.makedirs(plan.out, exist_ok=True)
    statuses = {}
    with Children(out) as children:
        if not plan.skip_runs:
            assert plan.seconds is not None     # None only with skip_runs (Plan)
            for run in plan.runs:
                root = plan.root(run.name)
                out(f"fastgo compare: run {run.name}: {run.config_name} for "
                    f"{clock(plan.seconds)} into {root}")
                code = children.run(cluster_argv(run, root, plan.seconds),
                                    RunDir(root).output(SUPERVISOR), f"[{run.name}] ",
                                    stop_s=run.shutdown_s + STOP_S, die_with_parent=False)
                statuses[run.name] = code
                if children.stopped:
                    return _stopped(out, children.stopped, f"run {run.name}")
                if code != 0:
                    out(f"fastgo compare: run {run.name}: fastgo cluster exited with status "
                        f"{code} (see {RunDir(root).logs})")
                _require_checkpoint(plan, run)         # before the other run's time is spent
        for run in plan.runs:
            _require_checkpoint(plan, run)
        if not plan.skip_matches:
            for run in plan.runs:
                _, checkpoint = last_checkpoint(plan.root(run.name))
                for i, opponent in enumerate(plan.opponents):
                    json_path, log_path = match_paths(plan.out, run.name, opponent)
                    out(f"fastgo compare: run {run.name}: {os.path.basename(checkpoint)} against "
                        f"{opponent.label}, {plan.games} games at {plan.pace}")
                    if children.stopped:        # a signal between two matches
                        return _stopped(out, children.stopped,
                                        f"run {run.name} against {opponent.label}")
                    arena = arena_plan(run, checkpoint, opponent, plan, plan.seed + i,
                                       json_path)
                    if os.path.exists(log_path):
                        os.remove(log_path)
                    code, stopped = play_arena(arena, log_path,
                                               f"[{run.name} vs {opponent.label}] ", out)
                    if stopped:
                        return _stopped(out, stopped, f"run {run.name} against {opponent.label}")
                    if code != 0:
                        raise CompareError(f"run {run.name} against {opponent.label}: fastgo "
                                           f"arena exited with status {code}: "
                                           f"{last_line(log_path)} (see {log_path})", code=1)
            stopped = children.stopped or _play_head_to_head(plan, out)
            if stopped:
                return _stopped(out, stopped, "run a against run b")
    data, curves = assemble(plan, statuses)
    json_path = os.path.join(plan.out, "compare.json")
    atomic_write_text(json_path, bounded_json.dumps(data, indent=1) + "\n")
    anchors = [a for run in plan.runs for a in run.anchors]
    anchors = sorted(set(anchors), key=anchors.index)
    png = os.path.join(plan.out, "compare.png")
    out("")
    out(markdown_table(data))
    out("")
    out(f"wrote {json_path}")
    if draw(png, data, curves, anchors):
        out(f"wrote {png}")
    else:
        out(f"no rated checkpoint in either run (the evaluator's evaluations.jsonl): "
            f"{png} not drawn")
    return 0


def _require_checkpoint(plan, run):
    root = plan.root(run.name)
    if last_checkpoint(root) is None:
        raise CompareError(f"run {run.name} ({root}) produced no checkpoint; see "
                           f"{RunDir(root).logs}", code=1)


def _stopped(out, name, during):
    out(f"fastgo compare: stopped by {name} during {during}")
    return EXIT_SIGNAL.get(name, 1)
