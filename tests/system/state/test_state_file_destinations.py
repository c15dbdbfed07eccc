"""State files of a run as a careless user leaves them, through the real commands: ratings.json
a folder stops `fastgo evaluate` with one line before it plays a game; metrics.csv with good
rows and then garbage without a line end keeps every byte when `fastgo train` appends to it,
and the trainer says so in one line of its log."""
import os
import subprocess
import sys

import numpy as np


def fastgo(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "fastgo_cli.main", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, OMP_NUM_THREADS="1"))


def test_evaluate_refuses_a_folder_for_ratings_json_before_any_game(tmp_path):
    from network.checkpoint import save_checkpoint
    from network.loading import training_record
    from network.model import build_model
    from rundata.config import load_config, resolve_config
    from rundata.rundir import open_run_dir

    run = tmp_path / "run"
    # the quickstart's step-0 checkpoint as its trainer writes it (made here: a `fastgo train`
    # process only for it costs 5 CPU-s)
    config = load_config(resolve_config("quickstart"))
    save_checkpoint(open_run_dir(run).checkpoint(0), build_model(config.model, seed=0), step=0,
                    extra=training_record(config.selfplay.komi))
    assert (run / "checkpoints" / "ckpt-000000000.ckpt").is_file()
    (run / "ratings.json").mkdir()
    out = fastgo("evaluate", "--config", "quickstart", "--run-dir", run, "--once", "--quiet")
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "ratings.json: not a regular file" in lines[0], lines
    assert not (run / "ratings.jsonl").exists()              # no game was played


def test_train_keeps_a_metrics_file_that_ends_in_garbage(tmp_path, write_tiny_config, write_shard,
                                                         game_record, random_moves):
    config = write_tiny_config(tmp_path / "tiny.toml", checkpoint_every=1)
    run = tmp_path / "run"
    rng = np.random.default_rng(0)
    games = [game_record(5, 0.5, random_moves(5, 0.5, rng, length=30), 0, seed=i)
             for i in range(60)]
    write_shard(run / "shards", games, "test-0.shard", size=5, komi=0.5)
    from trainer.metrics import ALPHAZERO_FIELDS
    old = (",".join(ALPHAZERO_FIELDS) + "\r\n" + ",".join("1" for _ in ALPHAZERO_FIELDS)
           + "\r\n" + 'step,1,"garbage \x01 and no line end').encode()
    (run / "metrics.csv").write_bytes(old)
    out = fastgo("train", "--config", config, "--run-dir", run, "--steps", "2",
                 "--no-publish", "--quiet")
    assert out.returncode == 0, out.stderr + out.stdout
    data = (run / "metrics.csv").read_bytes()
    assert data.startswith(old + b"\n"), data[:len(old) + 200]
    rows = data[len(old) + 1:].decode().splitlines()
    assert len(rows) >= 1 and all(r.split(",")[0].isdigit() for r in rows), rows
    said = [line for line in (run / "logs" / "train.log").read_text().splitlines()
            if "metrics.csv" in line]
    assert len(said) == 1 and "no line end" in said[0], said
