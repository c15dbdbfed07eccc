"""The evaluator role (`fastgo evaluate --once`) on a tiny run: each new checkpoint's first rating
is one batch against the previous rated checkpoint (the first: against the weakest anchor); its
refinement then plays the anchors chosen where its score is informative and the earlier
evaluated ones spaced in steps (the previous one, the ones nearest to 1/2 and 1/4 of its step),
in batches until the stopping rule;
results are appended to ratings.jsonl (earlier lines never rewritten), the checkpoint with its
opponents and the evaluator's CPU to evaluations.jsonl, ratings refitted, curve.png drawn."""
import json
import subprocess
import sys

from evaluation.pairings import one_sided
from network.batch_evaluator import UniformEvaluator
from rundata.config import load_config
from rundata.rundir import open_run_dir
from selfplay_workers.worker import SelfplayWorker
from trainer.factory import make_trainer as Trainer

EXTRA = """
[evaluator]
visits = 8
batch_games = 4
max_games = 8
anchors_per_checkpoint = 2
anchors = ["random", "mcts:20", "mcts:200"]
"""
STOPS = {"one-sided", "interval", "max games"}
FIRST = "first rating"                  # the stop of a first rating's one batch


def evaluate(config, run):
    out = subprocess.run([sys.executable, "-m", "fastgo_cli.main", "evaluate", "--config", config,
                          "--run-dir", run, "--once", "--quiet"], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_evaluator_chains_checkpoints_and_anchors_and_draws_the_curve(tmp_path, write_tiny_config):
    config_path = write_tiny_config(tmp_path / "c.toml", checkpoint_every=5, extra=EXTRA)
    text = open(config_path).read().replace("min_positions = 1000", "min_positions = 100")
    open(config_path, "w").write(text)
    config = load_config(config_path)
    root = tmp_path / "run"
    run = open_run_dir(root)
    SelfplayWorker(config, UniformEvaluator(5), shard_dir=run.shards, games=16, seed=1).run(max_games=64)
    trainer = Trainer(config, run)                    # writes ckpt-0
    evaluate(config_path, run.root)                   # ckpt-0: anchors only
    first = (root / "ratings.jsonl").read_text().splitlines()
    for steps in (5, 10, 20):                         # ckpt-5, ckpt-10, ckpt-20 (the newest of
        trainer.run(max_steps=steps)                  # ckpt-15 and ckpt-20)
        evaluate(config_path, run.root)
    assert (root / "ratings.jsonl").read_text().splitlines()[:len(first)] == first   # appended

    rows = lines(root / "ratings.jsonl")
    evaluations = lines(root / "evaluations.jsonl")
    assert [e["step"] for e in evaluations] == [0, 5, 10, 20]
    by_player = {e["player"]: [r for r in rows if r["a"] == e["player"]] for e in evaluations}
    assert sum(map(len, by_player.values())) == len(rows)
    for e in evaluations:
        played = by_player[e["player"]]
        # the evaluation row names the first rating's opponent, the table's first row for it
        assert e["opponents"] == [played[0]["b"]]
        assert played[0]["games"] == 4 and played[0]["stop"] in STOPS | {FIRST}
        for r in played:
            # batches of 4 games up to 8 a pairing; each row says why it stopped
            assert r["games"] in (4, 8) and r["stop"] in STOPS | {FIRST}
            assert r["source"] == "evaluator" and r["visits"] == 8 and r["size"] == 5
        totals = {}
        for r in played:
            totals[r["b"]] = totals.get(r["b"], 0) + r["games"]
        assert all(games <= 8 for games in totals.values())      # evaluator.max_games over its rows
        # --once refines to the end: every pairing's last row gives its verdict
        last = {r["b"]: r["stop"] for r in played}
        assert set(last.values()) <= STOPS, last
    # earlier checkpoints first: the previous one, then those nearest to 1/2 and 1/4 of the
    # step (ckpt-20: 10 and 5; ckpt-10: 5, with 0 and 5 equally near to 2.5, the later kept)
    networks = {e["player"]: list(dict.fromkeys(r["b"] for r in by_player[e["player"]]
                                                if r["b"].startswith("ckpt-")))
                for e in evaluations}
    assert networks == {"ckpt-0": [], "ckpt-5": ["ckpt-0"], "ckpt-10": ["ckpt-5"],
                        "ckpt-20": ["ckpt-10", "ckpt-5"]}
    # refining plays the far one (ckpt-5) before going on against the previous one (ckpt-10)
    order = [r["b"] for r in by_player["ckpt-20"] if r["b"].startswith("ckpt-")]
    assert order[0] == "ckpt-10" and order[1] == "ckpt-5", order
    # ckpt-0 meets the weakest anchor first; an anchor won beyond the informative range is
    # not played by later checkpoints
    assert by_player["ckpt-0"][0]["b"] == "random"
    retired = set()
    for e in evaluations:
        anchors = {}
        for r in by_player[e["player"]]:
            if not r["b"].startswith("ckpt-"):
                sums = anchors.setdefault(r["b"], [0, 0, 0])
                for k, key in enumerate(("wins_a", "wins_b", "draws")):
                    sums[k] += r[key]
        assert not retired & set(anchors), (e["player"], retired)
        assert len([a for a, r in anchors.items() if not one_sided(*r)]) <= 2
        retired |= {a for a, r in anchors.items() if one_sided(*r) > 0}
    # each evaluated checkpoint kept as a later opponent (the trainer prunes its own): steps
    # 0, 5, 10 and 20 are spaced by more than rundata.rundir.KEEP_RATIO (5 * 1.25 <= 10)
    assert [e["path"] for e in evaluations] == \
        [str(root / "evaluated" / f"ckpt-{s:09d}.ckpt") for s in (0, 5, 10, 20)]
    assert all((root / "evaluated" / f"ckpt-{s:09d}.ckpt").read_bytes() ==
               (root / "checkpoints" / f"ckpt-{s:09d}.ckpt").read_bytes() for s in (0, 5, 10, 20))
    # the curve's wall time is when each checkpoint was written (its file's time), not when its
    # evaluation ended
    assert [e["time"] for e in evaluations] == \
        [(root / "evaluated" / f"ckpt-{s:09d}.ckpt").stat().st_mtime for s in (0, 5, 10, 20)] or \
        [e["time"] for e in evaluations] == \
        [(root / "checkpoints" / f"ckpt-{s:09d}.ckpt").stat().st_mtime for s in (0, 5, 10, 20)]
    # and when each was rated: after it was written
    assert all(e["rated"] >= e["time"] for e in evaluations)
    # --once is outside the CPU budget: it counts none of its time, so the figures the run's
    # budget carries stay as they were (none here: no budgeted evaluator ran)
    assert [(e["eval_cpu_s"], e["eval_wall_s"]) for e in evaluations] == [(0.0, 0.0)] * 4

    ratings = json.loads((root / "ratings.json").read_text())
    assert ratings["latest"]["player"] == "ckpt-20"
    assert ratings["ratings"]["random"][0] == 0.0 or "random" not in ratings["ratings"]
    assert set(ratings["ratings"]) == {r["a"] for r in rows} | {r["b"] for r in rows}
    status = json.loads((root / "logs" / "evaluate.status.json").read_text())
    assert status["cpu_budget"] == 0.2 and status["cpu_share"] == 0.0
    assert status["latest"]["player"] == "ckpt-20"
    for name in ("curve.png", "loss.png"):
        data = (root / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    width, height = (int.from_bytes((root / "curve.png").read_bytes()[k:k + 4], "big")
                     for k in (16, 20))
    assert (width, height) == (1200, 460)           # two panels: wall time and games


def test_the_evaluator_at_equal_time(tmp_path, write_tiny_config):
    """evaluator.move_seconds: the checkpoints play the visits their measured one-thread
    speed fits in the seconds (logged), and the table's rows say the seconds, not visits."""
    import re

    extra = EXTRA.replace("[evaluator]\n", "[evaluator]\nmove_seconds = 0.02\n")
    config_path = write_tiny_config(tmp_path / "c.toml", checkpoint_every=5, extra=extra)
    config = load_config(config_path)
    assert config.evaluator.move_seconds == 0.02
    root = tmp_path / "run"
    run = open_run_dir(root)
    trainer = Trainer(config, run)                    # writes ckpt-0
    trainer.save_checkpoint()
    evaluate(config_path, run.root)
    rows = lines(root / "ratings.jsonl")
    assert rows and all(r["move_seconds"] == 0.02 and "visits" not in r for r in rows)
    log = (root / "logs" / "evaluate.log").read_text()
    measured = re.search(r"searches (\d+) visits/s on one thread: (\d+) visits a move in 0.02 s",
                         log)
    assert measured, log[-2000:]
    rate, visits = map(int, measured.groups())
    assert visits == max(1, int(0.02 * rate)) or abs(visits - 0.02 * rate) <= 1
