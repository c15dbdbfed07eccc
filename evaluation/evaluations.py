"""RUN/evaluations.jsonl, one row per rated checkpoint in the order rated, never rewritten: its
one writer (`append_evaluation`, used by the evaluator), its row check and its one reader;
and the copies of rated checkpoints its rows name in RUN/evaluated/ (`keep_copy`).
A row: {'player': 'ckpt-STEP', 'step', 'wall_s' (when the checkpoint was written, in seconds
the run has been running: a resumed run's pauses do not count, RunClock), 'games' (self-play
games by then), 'time' (unix seconds the checkpoint was written), 'rated' (unix seconds its
first rating was written), 'path' (the kept copy), 'opponents' (names it played), 'eval_cpu_s',
'eval_wall_s' (the evaluator's budget so far)}."""
from __future__ import annotations

import math
import os

from fastgo import bounded_json
from fastgo.coords import json_number
from fastgo.files import append_bytes, atomic_write
from rundata.config import ConfigError
from rundata.rundir import kept_steps
from rundata.statefiles import MAX_COUNT, read_jsonl
from trainer.metrics import read_metrics


def evaluation_row(row):
    """An evaluations.jsonl row ({'player': str, 'step', 'wall_s', 'games': finite and >= 0})
    with its numbers checked, or None; of the other fields only a string 'path', a number
    'time', the list of 'opponents' names and the evaluator's 'eval_cpu_s' and 'eval_wall_s'
    are kept."""
    if not isinstance(row.get("player"), str) or not 0 < len(row["player"]) <= 200:
        return None
    out = {"player": row["player"]}
    for key in ("step", "wall_s", "games"):
        json_number(row.get(key), what=key, low=0, high=MAX_COUNT)
        out[key] = row[key]
    # optional: where the checkpoint was, when it was written (unix seconds); dropped when odd
    path = row.get("path")
    if isinstance(path, str) and 0 < len(path) <= 4096 and "\0" not in path:
        out["path"] = path
    opponents = row.get("opponents")
    if isinstance(opponents, list) and len(opponents) <= 64 and all(
            isinstance(o, str) and 0 < len(o) <= 200 for o in opponents):
        out["opponents"] = opponents
    for key in ("eval_cpu_s", "eval_wall_s"):        # the evaluator's budget, carried over
        value = row.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) \
                and math.isfinite(value) and 0 <= value <= 1e12:
            out[key] = value
    for key in ("time", "rated"):                    # unix seconds: written, and rated
        stamp = row.get(key)
        if isinstance(stamp, (int, float)) and not isinstance(stamp, bool) \
                and math.isfinite(stamp) and 0 <= stamp <= 1e11:
            out[key] = stamp
    return out


def read_evaluations(path) -> list:
    """The evaluator's rows of evaluations.jsonl in file order (rundata.statefiles: a bad line is
    skipped and counted, a FIFO or directory is not read, a huge file only in its tail).
    Missing file: []."""
    return list(read_jsonl(path, evaluation_row))


def append_evaluation(path, row: dict):
    """Appends `row` (checked by evaluation_row first: a row its reader would drop is a bug
    here, ValueError) as one fsynced line, on a fresh line after a torn one (a crash
    mid-append); a FIFO or device at `path` is refused (ConfigError), not waited on."""
    try:
        checked = evaluation_row(dict(row))
    except (ValueError, TypeError) as err:
        checked, why = None, f" ({err})"
    else:
        why = ""
    if checked is None:
        raise ValueError(f"not an evaluations.jsonl row{why}: {row!r}"[:300])
    try:
        append_bytes(path, (bounded_json.dumps(row) + "\n").encode("utf-8"), sync=True, line=True)
    except OSError as err:
        raise ConfigError(f"{path}: {err.strerror or err}") from None


def written_times(run_dir) -> list:
    """The unix times of metrics.csv's rows (the trainer writes one with each checkpoint), in
    file order; rows without a number there are skipped."""
    _, metrics = read_metrics(run_dir.metrics, columns=("time",))
    out = []
    for row in metrics:
        try:
            out.append(float(row["time"]))
        except (KeyError, TypeError, ValueError):
            continue
    return out


PAUSE_S = 300.0     # no file of the run written this long before the evaluator starts: stopped


class RunClock:
    """The run's wall time of a checkpoint (a row's 'wall_s'): seconds since the run's start
    while it was running. A run stopped and resumed from its directory (a piece at a time)
    does not count the pause: when the newest of the run's own writes (the last row's 'time'
    and 'rated', `written`: metrics.csv's row times) is more than PAUSE_S before `now` (the
    evaluator's start), checkpoints written after that pause are reckoned without it.

    RunClock(rows, written, now, fallback_start): `fallback_start` (the first checkpoint's
    time) where no row says when the run started."""

    def __init__(self, rows, written, now, fallback_start):
        rows = [r for r in rows if "time" in r and "wall_s" in r]
        self.pause_s, self.paused_at = 0.0, None
        if not rows:
            self.start = float(fallback_start)
            return
        last = rows[-1]
        self.start = float(last["time"]) - float(last["wall_s"])   # the last piece's reckoning
        latest = max([float(last["time"]), float(last.get("rated", 0.0))]
                     + [float(t) for t in written if t <= now])
        if now - latest > PAUSE_S:
            self.pause_s, self.paused_at = now - latest, latest

    def wall_s(self, stamp) -> float:
        """Seconds the run had been running when `stamp` (unix seconds) came."""
        seconds = float(stamp) - self.start
        if self.paused_at is not None and stamp > self.paused_at:
            seconds -= self.pause_s
        return max(0.0, seconds)


def running_seconds(a, b, pauses) -> float:
    """Seconds from unix time `a` to `b` (0 when b <= a) less their overlap with `pauses`
    [(from, to)]."""
    if b <= a:
        return 0.0
    paused = sum(max(0.0, min(b, to) - max(a, since)) for since, to in pauses)
    return max(0.0, b - a - paused)


def cadence(rows, checkpoint_times, start, end) -> dict:
    """How closely the curve followed the run between unix times `start` and `end`: rows are
    evaluations.jsonl's (those with 'rated'), checkpoint_times the unix times the run's
    checkpoints were written (metrics.csv). Returns {'points': first ratings written in the
    window, 'max_gap_s': the longest time without a new point (the window's edges included),
    'max_lag_s': the most the newest point's checkpoint was behind the newest checkpoint (just
    before each point and at the end), 'cpu_share': the evaluator's cores over the window (from
    its carried CPU and wall seconds; None without two rows)}. Gaps and lags count running time
    only: a stretch of more than PAUSE_S without a checkpoint written is a pause of a run
    resumed from its directory, left out (running_seconds)."""
    rated = sorted((r for r in rows if "rated" in r and "time" in r), key=lambda r: r["rated"])
    inside = [r for r in rated if start <= r["rated"] <= end]
    times = sorted(checkpoint_times)
    pauses = [(a, b) for a, b in zip(times, times[1:]) if b - a > PAUSE_S]

    def running(a, b):
        return running_seconds(a, b, pauses)

    def newest_checkpoint(at):
        return max((t for t in times if t <= at), default=None)

    moments = [r["rated"] for r in inside] + [end]
    edges = [start] + moments
    gaps = [running(a, b) for a, b in zip(edges, edges[1:])]
    lags = []
    for moment in moments:
        shown = [r for r in rated if r["rated"] < moment]
        newest = newest_checkpoint(moment)
        if shown and newest is not None:
            lags.append(running(shown[-1]["time"], newest))
    budget = [r for r in inside if "eval_cpu_s" in r and "eval_wall_s" in r]
    share = None
    if len(budget) >= 2 and budget[-1]["eval_wall_s"] > budget[0]["eval_wall_s"]:
        share = (budget[-1]["eval_cpu_s"] - budget[0]["eval_cpu_s"]) / \
            (budget[-1]["eval_wall_s"] - budget[0]["eval_wall_s"])
    return {"points": len(inside), "max_gap_s": max(gaps), "max_lag_s": max(lags, default=None),
            "cpu_share": share}


def last_rated_step(evaluations):
    """The step of the newest checkpoint in the rows of evaluations.jsonl, -1 without any."""
    return max((e["step"] for e in evaluations), default=-1)


def unrated_newest(run_dir):
    """(step, path) of the run's newest checkpoint (RunDir.checkpoint_list) when the evaluator
    has not rated it (nor anything newer), else None: what a final rating (`fastgo evaluate
    --once`) would play."""
    steps = run_dir.checkpoint_list()
    if not steps:
        return None
    rated = last_rated_step(read_evaluations(run_dir.evaluations))
    return steps[-1] if steps[-1][0] > rated else None


def keep_copy(folder, evaluations, step, path, data, log) -> str:
    """FOLDER/NAME (RUN/evaluated/): a copy of checkpoint `path`, its bytes `data`, kept as a
    later opponent (the trainer prunes its own); the copies that earlier `evaluations` rows name
    there are thinned to rundata.rundir.kept_steps. Returns the copy's path, or `path` when it cannot
    be written (one warning to `log`)."""
    kept = os.path.join(folder, os.path.basename(path))
    try:
        os.makedirs(folder, exist_ok=True)
        atomic_write(kept, lambda handle: handle.write(data))
    except OSError as err:
        log.warning("cannot keep a copy of %s: %s", path, err.strerror or err)
        return path
    keep = kept_steps([e["step"] for e in evaluations] + [step])
    for e in evaluations:
        copy = e.get("path", "")
        if e["step"] not in keep and os.path.dirname(copy) == folder and os.path.exists(copy):
            try:
                os.remove(copy)
            except OSError:
                pass
    return kept
