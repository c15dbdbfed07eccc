"""`fastgo compare` for real on two tiny 5x5 configs: two `fastgo cluster` runs of 12 s one after
the other, then 2 games of each run's last checkpoint against random; compare.json holds both
runs' progress and match counts, and the Markdown table is printed."""
import json
import os
import subprocess
import sys
from pathlib import Path

CLUSTER = """
[cluster]
workers = 1
status_interval_s = 2
shutdown_s = 10
[evaluator]
batch_games = 2
max_games = 2
visits = 2
anchors = ["random"]
cpu_share = 4.0
"""


def tiny(path, write_tiny_config, endpoint):
    config = write_tiny_config(path, games=16, visits=4, shard_games=8, shard_seconds=1.0,
                               checkpoint_every=10, endpoint=endpoint, extra=CLUSTER)
    path = Path(config)
    text = path.read_text().replace("min_positions = 1000", "min_positions = 200")
    path.write_text(text.replace("batch_size = 128", "batch_size = 32"))
    return config


def test_two_tiny_configs_compared(tmp_path, write_tiny_config, free_endpoint):
    config_a = tiny(tmp_path / "tiny_a.toml", write_tiny_config, free_endpoint())
    config_b = tiny(tmp_path / "tiny_b.toml", write_tiny_config, free_endpoint())
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "fastgo_cli.main", "compare", config_a, config_b,
                           "--duration", "12s", "--games", "2", "--visits", "2",
                           "--opponents", "random", "--set-b", "trainer.lr=0.01", "--out", out,
                           # the evaluator rates only its first checkpoint within a run: the last
                           # checkpoint reaches the curve through the final rating alone
                           "--set", "evaluator.every=1000000"],
                          capture_output=True, text=True, timeout=150, check=False,
                          env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    data = json.loads((out / "compare.json").read_text())
    assert data["opponents"] == ["random"] and data["games"] == 2 and data["duration_s"] == 12.0
    for name, config in (("a", "tiny_a"), ("b", "tiny_b")):
        run = data[name]
        assert run["config"] == config
        assert run["checkpoint"] is not None and run["steps"] >= run["checkpoint_step"] >= 0
        assert run["steps"] > 0 or run["checkpoint_step"] == 0
        match = run["matches"]["random"]
        assert match["wins"] + match["losses"] + match["draws"] == match["games"] == 2
        assert 0.0 <= match["interval"][0] <= match["win_rate"] <= match["interval"][1] <= 1.0
        assert run["overrides"][:3] == ["selfplay.seed=1", "trainer.seed=1", "server.init_seed=1"]
    assert data["b"]["overrides"][-1] == "trainer.lr=0.01"
    for name in ("a", "b"):
        # the final rating: the curve ends at the run's last checkpoint (written at shutdown)
        steps = sorted(int(p.name[5:14]) for p in (out / name / "checkpoints").glob("ckpt-*.ckpt"))
        rated = [json.loads(line)["step"] for line in
                 (out / name / "evaluations.jsonl").read_text().splitlines()]
        # the checkpoint the evaluator found first where it rated one within the 12 s (a loaded
        # machine may take them all to start it; evaluator.every keeps it to one), and the run's
        # last checkpoint through the final rating
        assert steps[-1] > 0 and rated[-1] == steps[-1], (steps, rated)
        assert len(rated) <= 2 and rated == sorted(set(rated)), (steps, rated)
        text = (out / name / "logs" / "cluster.out").read_text()
        assert f"final rating: ckpt-{steps[-1]} Elo " in text, text[-2000:]
        assert json.loads((out / name / "ratings.json").read_text())["latest"]["player"] == \
            f"ckpt-{steps[-1]}"
    # one after the other: run b's first checkpoint is newer than run a's last output
    first_b = os.path.getmtime(out / "b" / "checkpoints" / "ckpt-000000000.ckpt")
    assert os.path.getmtime(out / "a" / "logs" / "cluster.out") <= first_b
    assert "stopped after" in (out / "a" / "logs" / "cluster.out").read_text()
    lines = proc.stdout.splitlines()
    assert "| run | config | games | steps | last Elo | random |" in lines
    assert any(line.startswith("| a | tiny_a | ") for line in lines)
    assert any(line.startswith("| b | tiny_b trainer.lr=0.01 | ") for line in lines)   # what b changed
    head = data["a_vs_b"]                       # the two last checkpoints played each other
    assert head is not None and head["games"] == 2 and head["wins"] + head["losses"] + head["draws"] == 2
    assert head["elo"][1] <= head["elo"][0] <= head["elo"][2]
    assert any(line.startswith("a against b (the last checkpoints): ") for line in lines)
    assert f"wrote {out / 'compare.json'}" in lines
