"""What `fastgo compare` found, read back from OUT and the run directories (comparison.compare
writes them): each run's last checkpoint, its progress (games, steps) and its evaluator curve;
the arena JSON of each match under OUT/matches, taken only when it is a finished match of that
checkpoint at the plan's games and pace; the head-to-head with its Elo difference; and
compare.json's dict assembled from them. A missing or stale file reads as None, never an error.
"""
from __future__ import annotations

import hashlib
import os
import re

from comparison.plan import Opponent, Plan, RunPlan
from evaluation.plots import RunCurveError, read_run
from roles.registry import Role
from rundata.match_stats import elo_from_score, wilson_interval
from rundata.rundir import RunDir
from rundata.statefiles import count, read_json
from trainer.metrics import read_metrics


def head_to_head_paths(out):
    """(json path, output path) of the match of run a's last checkpoint against run b's."""
    base = os.path.join(out, "matches", "a-vs-b")
    return base + ".json", base + ".out"


def last_checkpoint(root):
    """(step, path) of the newest numbered checkpoint of a run directory, else (None,
    latest.ckpt) when only that exists, else None."""
    run_dir = RunDir(os.path.abspath(root))
    try:
        numbered = run_dir.checkpoint_list()
    except OSError:
        numbered = []
    if numbered:
        return numbered[-1]
    return (None, run_dir.latest) if os.path.isfile(run_dir.latest) else None


def run_progress(root) -> dict:
    """{'games', 'steps'}: self-play games and training steps of a run, the larger of what the
    trainer's status file and the last row of metrics.csv say (0 without either)."""
    run_dir = RunDir(os.path.abspath(root))
    status, _ = Role.TRAIN.read_status(run_dir)
    _, rows = read_metrics(run_dir.metrics)
    found = {"games": 0, "steps": 0}
    sources = [(status or {}, "step"), (rows[-1] if rows else {}, "step")]
    for source, step_key in sources:
        for key, name in (("games", "games"), ("steps", step_key)):
            value = source.get(name)
            try:
                value = count(int(value) if isinstance(value, str) else value, key)
            except (TypeError, ValueError):
                continue
            found[key] = max(found[key], value)
    return found


def run_curve(root):
    """(points, run) of a run's evaluator: points [{'player', 'step', 'wall_s', 'games', 'elo',
    'elo_low', 'elo_high'}] in order, run the evaluation.plots.read_run dict for the figure;
    ([], an empty run) when the run has no rated checkpoint."""
    try:
        run = read_run(os.path.abspath(root))
    except RunCurveError:
        return [], {"evaluations": [], "ratings": {}, "algorithm": ""}
    points = []
    for e in run["evaluations"]:
        elo, low, high = run["ratings"][e["player"]]
        points.append({"player": e["player"], "step": int(e["step"]),
                       "wall_s": round(float(e["wall_s"]), 3), "games": int(e["games"]),
                       "elo": round(elo, 1), "elo_low": round(low, 1),
                       "elo_high": round(high, 1)})
    return points, run


def match_entry(wins: int, losses: int, draws: int) -> dict:
    """One opponent's result for compare.json: the win rate (draws count half) and its 95%
    Wilson interval."""
    games = wins + losses + draws
    score = wins + 0.5 * draws
    low, high = wilson_interval(score, games)
    return {"wins": wins, "losses": losses, "draws": draws, "games": games,
            "win_rate": round(score / games, 4) if games else 0.0,
            "interval": [round(low, 4), round(high, 4)]}


def match_paths(out, run_name, opponent: Opponent):
    """(json path, output path) of one match under OUT/matches."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", opponent.label).strip("-")[:40] or "opponent"
    digest = hashlib.sha1(opponent.label.encode()).hexdigest()[:8]
    base = os.path.join(out, "matches", f"{run_name}-{slug}-{digest}")
    return base + ".json", base + ".out"


def read_match(path, checkpoint, games, visits, opponent_checkpoint=None, move_seconds=None,
               game_seconds=None):
    """match_entry of the arena's JSON at `path` when it is a finished match of `checkpoint`
    (its player A) of `games` games at `visits` visits (or, given `move_seconds` or
    `game_seconds`, at that time a move or a game), written after that file (and, given
    `opponent_checkpoint`, against that file as player B, written after it too); else None."""
    data = read_json(path)
    pace_ok = data is not None and data.get("move_seconds") == move_seconds \
        and data.get("game_seconds") == game_seconds \
        and (move_seconds is not None or game_seconds is not None
             or data.get("visits") == visits)
    if data is None or data.get("interrupted") or not pace_ok or data.get("games") != games:
        return None
    players = [(data.get("a"), checkpoint)]
    if opponent_checkpoint is not None:
        players.append((data.get("b"), opponent_checkpoint))
    for name, file in players:
        if not isinstance(name, str) or not name.startswith(os.path.normpath(file) + "#"):
            return None
    try:
        if any(os.path.getmtime(path) < os.path.getmtime(file) for _, file in players):
            return None
        entry = match_entry(count(data.get("wins_a")), count(data.get("wins_b")),
                            count(data.get("draws", 0)))
    except (OSError, ValueError):
        return None
    return entry if entry["games"] == games else None      # results that add up to the games


def run_summary(plan: Plan, run: RunPlan, *, exit_status=None) -> tuple:
    """(compare.json entry of one run, its read_run dict for the figure)."""
    root = plan.root(run.name)
    latest = last_checkpoint(root)
    points, curve_run = run_curve(root)
    matches = {}
    if latest is not None:
        for opponent in plan.opponents:
            entry = read_match(match_paths(plan.out, run.name, opponent)[0], latest[1],
                               plan.games, plan.visits, move_seconds=plan.move_seconds,
                               game_seconds=plan.game_seconds)
            if entry is not None:
                matches[opponent.label] = entry
    entry = {"config": run.config_name, "config_path": run.config_path,
             "overrides": list(run.overrides), "run_dir": os.path.abspath(root),
             **run_progress(root),
             "checkpoint": None if latest is None else os.path.basename(latest[1]),
             "checkpoint_step": None if latest is None else latest[0],
             "last_elo": points[-1]["elo"] if points else None,
             "matches": matches, "curve": points}
    if exit_status is not None:
        entry["cluster_exit_status"] = exit_status
    return entry, curve_run


def assemble(plan: Plan, exit_statuses=None) -> tuple:
    """(compare.json dict, [read_run dicts of a and b])."""
    exit_statuses = exit_statuses or {}
    data = {"duration_s": plan.seconds, "games": plan.games, "visits": plan.visits,
            "move_seconds": plan.move_seconds, "game_seconds": plan.game_seconds,
            "seed": None if plan.seeds_from_configs else plan.seed,
            "opponents": [o.label for o in plan.opponents]}
    curves = []
    for run in plan.runs:
        data[run.name], curve = run_summary(plan, run, exit_status=exit_statuses.get(run.name))
        curves.append(curve)
    data["a_vs_b"] = head_to_head(plan)
    return data, curves


def head_to_head(plan: Plan):
    """match_entry of run a's last checkpoint against run b's, with the Elo difference a - b
    and its 95% interval (from the Wilson interval of the score); None before that match."""
    latest = [last_checkpoint(plan.root(run.name)) for run in plan.runs]
    if any(one is None for one in latest):
        return None
    entry = read_match(head_to_head_paths(plan.out)[0], latest[0][1], plan.games, plan.visits,
                       move_seconds=plan.move_seconds, game_seconds=plan.game_seconds,
                       opponent_checkpoint=latest[1][1])
    if entry is not None:
        entry["elo"] = [round(elo_from_score(x), 1)
                        for x in (entry["win_rate"], *entry["interval"])]
    return entry

