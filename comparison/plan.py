"""What `fastgo compare` is asked to do, checked before anything runs: its opponents (player
specs; a GTP engine started once, a reference player checked in full), each side's RunPlan (a
config, its --set items and what the comparison takes from it) and the whole Plan (OUT, the
runs' duration, the matches' games, pace and seed, and how its checkpoints play them).
CompareError is the command's one-line failure, with its exit status.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from comparison.report import RUNS
from fastgo.player_spec import parse_spec
from play.gtp.side import GtpEngineError
from play.player_settings import PlayerSettings
from play.specs import check_reference, gnugo_installed, katago_missing, make_spec_side
from rundata.config import ConfigError, load_config, resolve_config

MAX_OPPONENTS = 16


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
    out: list[Opponent] = []
    for label in labels:
        if label in (o.label for o in out):
            raise CompareError(f"--opponents: {label!r} is named twice")
        try:
            spec = parse_spec(label)
        except ValueError as err:
            raise CompareError(f"opponent {label[:60]!r}: {err}") from None
        player = spec.text
        if spec.kind == "checkpoint":
            assert spec.path is not None    # parse_spec: a checkpoint's path is its text
            if not os.path.isfile(spec.path):
                raise CompareError(f"opponent {label[:60]!r}: no such checkpoint file")
            player = os.path.abspath(spec.path)
        out.append(Opponent(label, player))
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
    side = make_spec_side(spec, start_timeout=30.0)
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
    seconds: float | None       # the runs' duration; None only with skip_runs
    games: int
    visits: int
    opponents: tuple
    seed: int
    player: PlayerSettings      # how a checkpoint plays its matches (its backend: its run's)
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

