"""The evaluator role: each new checkpoint plays the references and the previous checkpoint;
results are appended to the ratings table (earlier lines never rewritten), ratings refitted,
curve.png and loss.png drawn."""
import json
import subprocess
import sys

from fastgo.config import load_config
from fastgo.rundir import open_run_dir
from inference_server.batch_evaluator import UniformEvaluator
from selfplay_workers.worker import SelfplayWorker
from trainer.factory import make_trainer as Trainer

EXTRA = """
[cluster]
eval_games = 6
eval_visits = 8
references = ["random", "mcts:20"]
"""


def evaluate(config, run):
    out = subprocess.run([sys.executable, "-m", "fastgo_cli.main", "evaluate", "--config", config,
                          "--run-dir", run, "--once", "--quiet"], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]


def test_evaluator_rates_checkpoints_and_draws_the_curve(tmp_path, write_tiny_config):
    config_path = write_tiny_config(tmp_path / "c.toml", checkpoint_every=5, extra=EXTRA)
    text = open(config_path).read().replace("min_positions = 1000", "min_positions = 100")
    open(config_path, "w").write(text)
    config = load_config(config_path)
    run = open_run_dir(tmp_path / "run")
    SelfplayWorker(config, UniformEvaluator(5), shard_dir=run.shards, games=16, seed=1).run(max_games=32)
    trainer = Trainer(config, run)                    # writes ckpt-0
    evaluate(config_path, run.root)                   # evaluates step 0
    table = (tmp_path / "run" / "ratings.jsonl").read_text().splitlines()
    assert [(json.loads(l)["a"], json.loads(l)["b"]) for l in table] == \
        [("ckpt-0", "random"), ("ckpt-0", "mcts:20")]
    trainer.run(max_steps=10)                          # ckpt-5, ckpt-10
    evaluate(config_path, run.root)                   # the newest only: ckpt-10, against ckpt-0 too
    lines = (tmp_path / "run" / "ratings.jsonl").read_text().splitlines()
    assert lines[:2] == table                          # appended, never rewritten
    rows = [json.loads(l) for l in lines[2:]]
    assert [(r["a"], r["b"]) for r in rows] == [("ckpt-10", "random"), ("ckpt-10", "mcts:20"),
                                                ("ckpt-10", "ckpt-0")]
    assert all(r["wins_a"] + r["wins_b"] + r["draws"] == 6 for r in rows)
    ratings = json.loads((tmp_path / "run" / "ratings.json").read_text())
    assert ratings["latest"]["player"] == "ckpt-10"
    assert ratings["ratings"]["random"][0] == 0.0
    assert set(ratings["ratings"]) == {"random", "mcts:20", "ckpt-0", "ckpt-10"}
    evaluations = [json.loads(l) for l in (tmp_path / "run" / "evaluations.jsonl").read_text().splitlines()]
    assert [e["step"] for e in evaluations] == [0, 10]
    for name in ("curve.png", "loss.png"):
        data = (tmp_path / "run" / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
