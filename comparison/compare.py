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
"""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass

from comparison.matches import arena_plan, play_arena
from comparison.report import RUNS, draw, markdown_table
from evaluation.plots import RunCurveError, read_run
from fastgo import bounded_json
from fastgo.files import atomic_write_text
from fastgo.player_spec import parse_spec
from fastgo.run.config import ConfigError, load_config, resolve_config
from fastgo.run.match_stats import elo_from_score, wilson_interval
from fastgo.run.rundir import RunDir
from fastgo.run.statefiles import count, read_json
from play.gtp.side import GtpEngineError
from play.specs import check_reference, gnugo_installed, katago_missing, make_side
from roles.registry import SUPERVISOR, Role
from supervision.role_process import Children, last_line
from supervision.status import clock
from trainer.metrics import read_metrics

MAX_OPPONENTS = 16
MAX_SEED = (1 << 62) - 1
STOP_S = 30.0                   # a child's time to stop after a signal (a cluster: beyond its
                                # shutdown_s), then SIGKILL
EXIT_SIGNAL = {"SIGINT": 130, "SIGTERM": 143}


class CompareError(ValueError):
    """One line for stderr; `code`: the exit status (2: bad input, 1: a run or match failed)."""

    def __init__(self, message, code=2):
        super().__init__(message)
        self.code = code


# --- opponents ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Opponent:
    label: str          # as the user wrote it: the key in compare.json and the table's column
    spec: str           # the arena's player spec


def parse_opponents(text) -> list:
    """'mcts:1000,gnugo:1,random,gtp:"CMD"' -> [Opponent]: player specs (play.specs; a
    checkpoint given by its absolute path). CompareError for an empty list, a duplicate or a
    malformed spec."""
    labels = [part.strip() for part in _split(text)]
    if not labels or not all(labels):
        raise CompareError(f"--opponents {str(text)[:80]!r}: expected a comma-separated list "
                           "(e.g. mcts:1000,gnugo:1)")
    if len(labels) > MAX_OPPONENTS:
        raise CompareError(f"--opponents: at most {MAX_OPPONENTS} opponents, got {len(labels)}")
    out = []
    for label in labels:
        if label in (o.label for o in out):
            raise CompareError(f"--opponents: {label!r} is named twice")
        try:
            spec = parse_spec(label)
        except ValueError as err:
            raise CompareError(f"opponent {label[:60]!r}: {err}") from None
        if spec.kind == "checkpoint" and not os.path.isfile(spec.path):
            raise CompareError(f"opponent {label[:60]!r}: no such checkpoint file")
        out.append(Opponent(label, os.path.abspath(spec.path) if spec.kind == "checkpoint"
                            else spec.text))
    return out


def _split(text):
    """Splits at commas outside double quotes (a gtp:"..." command may hold commas)."""
    parts, current, quoted = [], [], False
    for char in str(text):
        if char == '"':
            quoted = not quoted
        if char == "," and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def check_opponent(opponent: Opponent, size: int, komi: float) -> None:
    """Starts a GTP opponent (gnugo:LEVEL, gtp:COMMAND, katago:VISITS) once on a size x size
    board with `komi` and stops it again, so that a missing or unwilling engine is known before
    hours of runs; a reference player is checked in full (play.specs.check_reference: its file
    in its folder as the index says, its network loaded, both of size x size); CompareError if
    it cannot."""
    spec = parse_spec(opponent.spec)
    if spec.kind == "ref":              # its file there and as the index says, before any run
        try:
            check_reference(spec, size)
        except ValueError as err:
            raise CompareError(f"opponent {opponent.label}: {err}") from None
        return
    if spec.kind not in ("gnugo", "gtp", "katago"):
        return
    if spec.kind == "gnugo" and gnugo_installed(spec.argv[0]) is None:
        raise CompareError(f"opponent {opponent.label}: GNU Go is not installed (no "
                           f"{spec.argv[0]!r} program on PATH or in /usr/games; e.g. apt-get "
                           "install gnugo)")
    if spec.kind == "katago" and katago_missing(spec):
        raise CompareError(f"opponent {opponent.label}: {katago_missing(spec)}")
    side = make_side(spec, start_timeout=30.0)
    try:
        side.prepare(1, size, komi)
    except GtpEngineError as err:
        raise CompareError(f"opponent {opponent.label}: "
                           f"{' '.join(str(err).split())[:300]}") from None
    finally:
        side.close()


# --- the plan ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class RunPlan:
    """One side of the comparison: `name` 'a' or 'b', its config and what comes from it."""
    name: str
    config_path: str
    config_name: str
    overrides: tuple            # --set items given to `fastgo cluster` (seeds first)
    size: int
    komi: float
    backend: str                # the CPU inference backend its checkpoint plays with
    anchors: tuple              # its evaluator's anchors (evaluator.anchors)
    shutdown_s: float           # its cluster's bound on an ordered shutdown


@dataclass(frozen=True)
class Plan:
    out: str
    runs: tuple                 # (RunPlan a, RunPlan b)
    seconds: float | None
    games: int
    visits: int
    opponents: tuple
    seed: int
    skip_runs: bool = False
    skip_matches: bool = False
    seeds_from_configs: bool = False
    move_seconds: float | None = None     # equal time a move in the matches, instead of visits
    game_seconds: float | None = None     # or a game clock (arena --game-seconds)

    def root(self, name):
        return os.path.join(self.out, name)

    @property
    def pace(self) -> str:
        """What the matches are played at: '64 visits', '1 s a move' or '60 s a game'."""
        if self.move_seconds is not None:
            return f"{self.move_seconds:g} s a move"
        if self.game_seconds is not None:
            return f"{self.game_seconds:g} s a game"
        return f"{self.visits} visits"


def seed_overrides(seed: int) -> tuple:
    """The --set items that give a run the same seeds as the other: self-play, trainer and the
    server's initial weights."""
    return (f"selfplay.seed={seed}", f"trainer.seed={seed}", f"server.init_seed={seed}")


def load_run_plan(name, config, overrides, seed=None) -> RunPlan:
    """The RunPlan of config `config` (a shipped name or a path) with `overrides`, preceded by
    seed_overrides(seed) unless seed is None; CompareError naming the run for a bad config."""
    items = (seed_overrides(seed) if seed is not None else ()) + tuple(overrides)
    try:
        path = os.path.abspath(resolve_config(config))
        loaded = load_config(path, overrides=items)
    except ConfigError as err:
        raise CompareError(f"config {name.upper()}: {err}") from None
    return RunPlan(name=name, config_path=path,
                   config_name=os.path.splitext(os.path.basename(path))[0], overrides=items,
                   size=loaded.model.board_size, komi=loaded.selfplay.komi,
                   backend=loaded.server.backend, anchors=tuple(loaded.evaluator.anchors),
                   shutdown_s=loaded.cluster.shutdown_s)


def check_out_dirs(plan: Plan) -> None:
    """Fresh runs need OUT/a and OUT/b absent or empty; --skip-runs needs both present."""
    for name in RUNS:
        root = plan.root(name)
        if plan.skip_runs:
            if not os.path.isdir(root):
                raise CompareError(f"--skip-runs: no run directory {root} to reuse")
        elif os.path.exists(root) and (not os.path.isdir(root) or os.listdir(root)):
            raise CompareError(f"{root} exists and is not empty: remove it, choose another "
                               "--out, or reuse the runs with --skip-runs")
    if os.path.exists(plan.out) and not os.path.isdir(plan.out):
        raise CompareError(f"--out {plan.out}: exists and is not a directory")


# --- children ----------------------------------------------------------------------------------

def duration_text(seconds: float) -> str:
    """Seconds as `fastgo cluster --duration` reads them: '1800', '20.5'."""
    return f"{seconds:.3f}".rstrip("0").rstrip(".")


def cluster_argv(run: RunPlan, root: str, seconds: float) -> list:
    argv = ["cluster", "--config", run.config_path, "--run-dir", root,
            "--duration", duration_text(seconds)]
    for item in run.overrides:
        argv += ["--set", item]
    return argv


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
