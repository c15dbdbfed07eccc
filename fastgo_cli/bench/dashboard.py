"""`fastgo bench dashboard`: the time of the dashboard's first snapshot (everything the page
shows: status, losses, the strength fits, checkpoints, the newest games) of a synthetic run
directory of an 8-hour run: CHECKPOINTS rated checkpoints with their results against earlier
ones and the anchors, GAMES self-play games in shards, a metrics row per checkpoint."""
from __future__ import annotations

import os
import tempfile
import time

from fastgo_cli.bench.figures import write_json


def add_arguments(parser):
    parser.add_argument("--checkpoints", type=int, default=500)
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--run-dir", default=None,
                        help="build it here (default: a temporary folder); one built already "
                             "is measured again")
    parser.add_argument("--json", default=None, metavar="FILE", help="write the figures here")


def build(root, checkpoints, games, seed=0):
    """The synthetic run directory: ratings.jsonl, evaluations.jsonl, metrics.csv, checkpoint
    files (empty: only their names are listed), shards of random 9x9 games."""
    import numpy as np

    from fastgo import bounded_json
    from rundata.ratings_table import append_result
    from rundata.rundir import checkpoint_player, open_run_dir
    from rundata.shards import ShardWriter

    run = open_run_dir(root)
    rng = np.random.default_rng(seed)
    table = run.ratings_table
    anchors = ["random", "mcts:100", "gnugo:1", "gnugo:5", "gnugo:10"]
    with open(run.evaluations, "w") as evaluations, \
            open(run.metrics, "w") as metrics:
        metrics.write("step,loss,policy_loss,value_loss\n")
        for k in range(checkpoints):
            step = 200 * (k + 1)
            name = checkpoint_player(step)
            strength = 10 * k
            for other, level in [(checkpoint_player(200 * (k - d)), 10 * (k - d)) for d in (1, 4, 16)
                                 if k - d >= 0] + list(zip(anchors, (0, 400, 1000, 1800, 2500))):
                p = 1 / (1 + 10 ** ((level - strength) / 400))
                wins = int(rng.binomial(20, p))
                append_result(table, name, other, wins, 20 - wins)
            evaluations.write(bounded_json.dumps({"player": name, "step": step,
                                                  "wall_s": 57.6 * k,
                                                  "games": games * k // checkpoints,
                                                  "opponents": anchors}) + "\n")
            metrics.write(f"{step},{3 - k / checkpoints:.3f},{2 - k / checkpoints:.3f},0.8\n")
            open(run.checkpoint(step), "wb").close()
    per_shard = 64
    record = bench_game(rng)
    for s in range((games + per_shard - 1) // per_shard):
        writer = ShardWriter(run.shards, prefix="bench", size=9, komi=7.5)
        for _ in range(min(per_shard, games - s * per_shard)):
            writer.add(record)
        writer.close(f"w0-{s:06d}.shard")
    return run.root


def bench_game(rng):
    """A finished 9x9 game as a GameRecord: 40 random legal moves drawn with `rng` (a numpy
    Generator, or a seed), then two passes."""
    import numpy as np

    from fastgo.game import Game
    from fastgo.replay import check_game
    from rundata.records import GameRecord

    rng = np.random.default_rng(rng)
    game = Game(9, 7.5)
    moves = []
    for _ in range(40):
        legal = np.flatnonzero(game.legal_moves()[:81])
        move = int(rng.choice(legal))
        game.play(move)
        moves.append(move)
    moves = np.asarray(moves + [81, 81], np.int16)
    _, _, _, score, ownership = check_game(9, 7.5, moves)
    n = len(moves)
    return GameRecord(size=9, komi=7.5, moves=moves, full=np.ones(n, np.uint8),
                      root_value=np.zeros(n, np.float32), policy_count=np.ones(n, np.uint16),
                      policy_moves=moves.copy(), policy_visits=np.ones(n, np.float32),
                      winner=1 if score > 0 else -1, score=float(score), end="passes",
                      ownership=ownership, versions=[1], seed=0)


def run(args):
    from dashboard.run_view import RunView
    from rundata.rundir import RunDir

    root = args.run_dir or tempfile.mkdtemp(prefix="fastgo-bench-dashboard-")
    started = time.perf_counter()
    if not os.path.exists(RunDir(root).evaluations):
        build(root, args.checkpoints, args.games)
    built = time.perf_counter() - started
    import dashboard.server  # noqa: F401  (the server's imports are paid at its start)
    firsts = []
    for _ in range(3):                   # a fresh view each time: nothing cached
        view = RunView(root)
        started = time.perf_counter()
        snap = view.snapshot()
        firsts.append(time.perf_counter() - started)
    first = sorted(firsts)[1]
    started = time.perf_counter()
    view.snapshot()
    again = time.perf_counter() - started
    figures = {"checkpoints": args.checkpoints, "games": args.games,
               "points": len(snap["strength"]["points"]), "first_snapshot_s": round(first, 3),
               "first_snapshot_runs_s": [round(t, 3) for t in firsts],
               "unchanged_snapshot_s": round(again, 4), "build_s": round(built, 1)}
    print(f"fastgo bench dashboard: {args.checkpoints} checkpoints, {args.games} games: first "
          f"snapshot {first:.3f} s (median of {', '.join(f'{t:.3f}' for t in firsts)}), "
          f"unchanged {again * 1000:.1f} ms ({root})")
    write_json(args.json, figures)
    return 0
