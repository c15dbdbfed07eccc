"""`fastgo bench run-length`: what a run's length costs. Synthetic run directories of a day and
of a week (built at a 2-core Zen 4's pace, without playing them: an evaluator point every 5
minutes with its games against the previous point, the kept checkpoint nearest half its step
and the two shipped rungs nearest its strength; 14,000 self-play games an hour; the shards a
trainer with trainer.shards_kept_mb and trainer.window_max leaves), and on each, every operation
that reads the whole run, timed in a fresh process with its peak memory:

- ratings:   `fastgo ratings RUN/ratings.jsonl`'s fit (rundata.strength, calibration included)
- evaluator: the bookkeeping of an evaluator point besides its games: the refit, the predictions
             of its pairings, ratings.json and curve.png
- dashboard: the dashboard's first snapshot of the run (everything the page draws) and its size
- resume:    the trainer started again on the run (quickstart config): its checkpoint, the
             shard listing and the window refilled from the newest shards (refill_s: that
             part alone; the rest, torch.compile's 9 s among it, is the same at any length)

A day, a week and a month (24, 168, 720 hours): a day is within the fit's window (400 points,
33 hours) and under trainer.window_max; past both, a month costs what a week does, and the
week's figure is the month's ceiling."""
from __future__ import annotations

import json
import math
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from unittest import mock

from fastgo_cli.bench.figures import write_json

HOURS = (24, 168, 720)
POINTS_PER_HOUR = 12          # an evaluator point every 5 minutes (evaluator.interval_s)
STEPS_PER_HOUR = 14_000       # the trainer's steps in an hour of the quickstart (2-core Zen 4)
GAMES_PER_HOUR = 14_000       # self-play games in that hour
POSITIONS_PER_GAME = 60       # the quickstart's mean game length on 9x9
CHECKPOINT_EVERY = 100
OPS = ("ratings", "evaluator", "dashboard", "resume")


def add_arguments(parser):
    parser.add_argument("--hours", type=int, nargs="+", default=list(HOURS), metavar="H",
                        help="run lengths to build and measure, in hours")
    parser.add_argument("--root", default=None,
                        help="build the run directories here (default: a temporary folder); "
                             "ones built already are measured again")
    parser.add_argument("--json", default=None, metavar="FILE", help="write the figures here")


def truth(k: int) -> float:
    """The CGOS rating of evaluator point k: 1000 at the start, +600 a decade of points."""
    return 1000.0 + 600.0 * math.log10(1.0 + k / 12.0)


def rung_ratings() -> dict:
    """{spec: CGOS rating} of the shipped rungs every machine plays (ref: and mcts:)."""
    from rundata.elo_fit import cgos_ratings
    from rundata.ladder import calibration

    return {name: value[0] for name, value in cgos_ratings(calibration()).items()
            if name.startswith(("ref:", "mcts:"))}


def build_ratings(run, hours, rng):
    """ratings.jsonl, evaluations.jsonl and the checkpoint names of `hours` of evaluator points;
    returns the steps of the points."""
    from fastgo import bounded_json
    from fastgo.files import append_bytes
    from rundata.ratings_table import result_line
    from rundata.rundir import checkpoint_player, kept_steps

    rungs = rung_ratings()
    start = time.time() - hours * 3600.0
    step_per_point = STEPS_PER_HOUR // POINTS_PER_HOUR // CHECKPOINT_EVERY * CHECKPOINT_EVERY
    lines, evaluations, steps, kept = [], [], [], set()

    def play(a, b, ra, rb, games, when):
        p = 1.0 / (1.0 + 10.0 ** ((rb - ra) / 400.0))
        wins = sum(rng.random() < p for _ in range(games))
        lines.append(result_line(a, b, wins, games - wins, 0, time=when, source="evaluator")[1])

    for k in range(hours * POINTS_PER_HOUR):
        step = step_per_point * (k + 1)
        name, when, me = checkpoint_player(step), start + 300.0 * (k + 1), truth(k)
        if k % POINTS_PER_HOUR == 1:
            kept = kept_steps(steps)
        opponents = []
        if steps:
            play(name, checkpoint_player(steps[-1]), me, truth(k - 1), 32, when)
            half = min(kept, key=lambda s: abs(s - step / 2))
            play(name, checkpoint_player(half), me, truth(half // step_per_point - 1), 16, when)
            opponents += [checkpoint_player(steps[-1]), checkpoint_player(half)]
        for rung in sorted(rungs, key=lambda r: abs(rungs[r] - me))[:2]:
            play(name, rung, me, rungs[rung], 16, when)
            opponents.append(rung)
        steps.append(step)
        evaluations.append({"player": name, "step": step,
                            "path": evaluated_copy(run, step),
                            "time": when, "games": GAMES_PER_HOUR * (k + 1) // POINTS_PER_HOUR,
                            "wall_s": 300.0 * (k + 1), "opponents": opponents,
                            "rated": when + 30.0, "eval_cpu_s": 60.0 * (k + 1),
                            "eval_wall_s": 300.0 * (k + 1)})
    append_bytes(run.ratings_table, b"".join(lines))
    with open(run.evaluations, "w") as handle:
        for row in evaluations:
            handle.write(bounded_json.dumps(row) + "\n")
    for step in kept_steps(steps):                # the copies the evaluator keeps
        open(evaluated_copy(run, step), "wb").close()
    return steps


def evaluated_copy(run, step) -> str:
    """RUN/evaluated/ckpt-STEP.ckpt: where the evaluator keeps a copy of the checkpoint."""
    return os.path.join(run.evaluated, os.path.basename(run.checkpoint(step)))


def window_positions(config, hours) -> int:
    """The positions the trainer's window holds after `hours` of the quickstart."""
    from trainer.window import power_window

    tc = config.trainer
    target = power_window(hours * GAMES_PER_HOUR * POSITIONS_PER_GAME, tc.window_size,
                          tc.window_alpha, tc.window_beta)
    return min(target, tc.window_max) if tc.window_max > 0 else target


def build_shards(run, positions, rng_seed=0):
    """Shards of 64 random 9x9 games each (fastgo_cli.bench.dashboard.bench_game's), named in
    time order, holding `positions` positions: the window a resumed trainer reads back."""
    from fastgo_cli.bench.dashboard import bench_game
    from rundata.shards import ShardWriter

    record = bench_game(rng_seed)
    games = -(-positions // len(record.moves))
    per_shard, start = 64, int(time.time() * 1000) - 10_000_000
    for s in range(-(-games // per_shard)):
        writer = ShardWriter(run.shards, prefix="bench", size=9, komi=7.5)
        for _ in range(min(per_shard, games - s * per_shard)):
            writer.add(record)
        writer.close(f"{start + s:015d}-w0-bench-{s:06d}.shard")


def build_trainer(run, config, hours, steps):
    """checkpoints/: the trainer's newest checkpoint carrying a run of `hours`' state (every
    shard on disk used, the positions and games of the whole run, its step); the 20 names before
    it as empty files (the dashboard lists them)."""
    from rundata.shards import list_shards
    from trainer.factory import make_trainer

    trainer = make_trainer(config, run)
    trainer.used_shards = set(list_shards(run.shards))
    trainer.window.total_positions = hours * GAMES_PER_HOUR * POSITIONS_PER_GAME
    trainer.window.total_games = hours * GAMES_PER_HOUR
    trainer.core.step = steps[-1]
    trainer.save_checkpoint()
    for step in range(steps[-1] - 20 * CHECKPOINT_EVERY, steps[-1], CHECKPOINT_EVERY):
        open(run.checkpoint(step), "wb").close()


METRICS = ("step,time,positions,games,window,samples,samples_per_s,loss,policy_loss,value_loss,"
           "ownership_loss,policy_acc,value_mse,score_loss,lead_loss,opponent_policy_loss,lr,"
           "version,quarantined")


def build_metrics(run, hours):
    """metrics.csv: a row every 100 steps, as the trainer writes it."""
    start = time.time() - hours * 3600.0
    rows = hours * STEPS_PER_HOUR // CHECKPOINT_EVERY
    with open(run.metrics, "w") as handle:
        handle.write(METRICS + "\n")
        for k in range(1, rows + 1):
            f = k / rows
            handle.write(f"{k * CHECKPOINT_EVERY},{start + 3600.0 * hours * f:.3f},"
                         f"{k * 8400},{k * 140},{min(k * 8400, 4_000_000)},{k * 25600},480.0,"
                         f"{7.3 - 3 * f:.5f},{4.4 - 2 * f:.5f},{0.6 - 0.2 * f:.5f},0.7,0.3,0.5,"
                         f"0.4,0.5,4.3,0.01,{k * CHECKPOINT_EVERY},0\n")


def quickstart():
    from rundata.config import load_config
    from rundata.config.loader import resolve_config

    return load_config(resolve_config("quickstart"), overrides=["trainer.device=cpu"])


def build_run(root, hours, seed=0):
    """The synthetic run directory of `hours` at `root` (see the module); returns its root."""
    from rundata.rundir import open_run_dir

    run = open_run_dir(root)
    os.makedirs(run.evaluated, exist_ok=True)
    rng = random.Random(seed)
    steps = build_ratings(run, hours, rng)
    config = quickstart()
    build_shards(run, window_positions(config, hours), seed)
    build_trainer(run, config, hours, steps)
    build_metrics(run, hours)
    from roles.registry import Role

    for path in (Role.SERVE.log(run), Role.TRAIN.log(run), Role.EVALUATE.log(run),
                 Role.SELFPLAY.log(run, 0)):                      # 40 KB a role an hour
        with open(path, "w") as handle:
            line = "2026-12-07 00:00:00,000 fastgo.role INFO a line of an hour's log\n"
            handle.write(line * min(hours * 40_000 // len(line), (16 << 20) // len(line)))
    return run.root


def time_operation(op, root) -> dict:
    """One operation on the run at `root` (in this process): its seconds and what it produced."""
    from fastgo import bounded_json
    from fastgo.files import atomic_write_text
    from rundata.rundir import RunDir

    run = RunDir(root)
    started = time.perf_counter()
    if op == "ratings":
        from rundata.strength import read_strength

        strength = read_strength(run.ratings_table)
        out = {"players": len(strength.elo), "left_out": strength.left_out,
               "rows": len(strength.rows), "error": strength.error}
    elif op == "evaluator":
        from evaluation.evaluations import read_evaluations
        from evaluation.pairings import predictor
        from evaluation.plots import draw_curve
        from rundata.ladder import LADDER
        from rundata.strength import read_strength

        evaluations = read_evaluations(run.evaluations)
        strength = read_strength(run.ratings_table)
        predict = predictor(strength)
        newest = evaluations[-1]["player"]
        predictions = [predict(newest, other) for other in LADDER + (evaluations[-2]["player"],)]
        ratings = {"ratings": {k: list(v) for k, v in strength.elo.items()}}
        atomic_write_text(run.ratings, bounded_json.dumps(ratings))
        draw_curve(run.curve, evaluations, strength.elo, list(LADDER), strength=strength)
        out = {"evaluations": len(evaluations),
               "predicted": sum(p is not None for p in predictions),
               "ratings_json_bytes": os.path.getsize(run.ratings)}
    elif op == "dashboard":
        import dashboard.server  # noqa: F401  (the server's imports are paid at its start)
        from dashboard.run_view import RunView

        started = time.perf_counter()
        snapshot = RunView(root).snapshot()
        out = {"points": len(snapshot["strength"]["points"]),
               "loss_rows": len(snapshot["losses"]["step"]),
               "json_bytes": len(bounded_json.dumps(snapshot, default=str))}
    elif op == "resume":
        from trainer.factory import make_trainer
        from trainer.window_trainer import WindowTrainer

        refill = WindowTrainer._refill_window
        took = []

        def timed(self, state):          # the part that reads the run: shards into the window
            began = time.perf_counter()
            refill(self, state)
            took.append(time.perf_counter() - began)
        with mock.patch.object(WindowTrainer, "_refill_window", timed):
            trainer = make_trainer(quickstart(), run)
        out = {"step": trainer.step, "window_positions": trainer.window.positions,
               "used_shards": len(trainer.used_shards), "refill_s": round(sum(took), 3)}
    else:
        raise ValueError(f"unknown operation {op!r}")
    out["seconds"] = round(time.perf_counter() - started, 3)
    out["peak_mb"] = round(peak_kb() / 1024.0, 1)
    return out


def peak_kb() -> float:
    """This process's peak resident memory in KB: VmHWM (this program's own, reset by exec,
    where getrusage's maxrss keeps what the parent held when it forked), else maxrss."""
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return float(line.split()[1])
    except OSError:
        pass
    return float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def measured(op, root) -> dict:
    """time_operation(op, root) in a fresh process (its peak memory is the operation's and its
    imports')."""
    code = (f"from fastgo import bounded_json; "
            f"from fastgo_cli.bench.run_length import time_operation; "
            f"print(bounded_json.dumps(time_operation({op!r}, {os.fspath(root)!r})))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"{op} on {root}: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def disk(root) -> dict:
    """MB of the run directory's parts that grow with a run, by file or folder name."""
    from rundata.rundir import RunDir

    def size(path):
        if os.path.isfile(path):
            return os.path.getsize(path)
        total = 0
        for folder, _, names in os.walk(path):
            total += sum(os.path.getsize(os.path.join(folder, n)) for n in names)
        return total
    run = RunDir(root)
    parts = (run.shards, run.evaluated, run.checkpoints, run.logs, run.ratings_table,
             run.evaluations, run.metrics)
    return {os.path.basename(part): round(size(part) / (1 << 20), 1) for part in parts
            if os.path.exists(part)}


def run(args):
    from rundata.rundir import RunDir

    root = args.root or tempfile.mkdtemp(prefix="fastgo-bench-run-length-")
    figures = {}
    for hours in args.hours:
        folder = os.path.join(root, f"{hours}h")
        started = time.perf_counter()
        if not os.path.exists(RunDir(folder).evaluations):
            build_run(folder, hours)
        built = time.perf_counter() - started
        figures[hours] = {"build_s": round(built, 1), "disk_mb": disk(folder),
                          **{op: measured(op, folder) for op in OPS}}
        print(f"fastgo bench run-length: {hours} hours built in {built:.0f} s ({folder})",
              flush=True)
    print(f"{'operation':<10} " + " ".join(f"{h:>5} h: s, peak MB" for h in args.hours))
    for op in OPS:
        print(f"{op:<10} " + " ".join(
            f"{figures[h][op]['seconds']:>8.2f} s {figures[h][op]['peak_mb']:>6.0f}"
            for h in args.hours))
    for hours in args.hours:
        f = figures[hours]
        print(f"{hours} h: fit {f['ratings']['players']} players ({f['ratings']['left_out']} "
              f"checkpoints left out), dashboard JSON {f['dashboard']['json_bytes'] >> 10} KB "
              f"with {f['dashboard']['points']} points, resume window "
              f"{f['resume']['window_positions']} positions from {f['resume']['used_shards']} "
              f"shards in {f['resume']['refill_s']:.1f} s; disk MB {f['disk_mb']}")
    write_json(args.json, figures)
    return 0
