"""The learning loop's commands from outside: a worker never imports torch, bad arguments are
one line and exit 2, and the benches' JSON agrees with the work they report."""
import dataclasses
import json
import subprocess
import sys


def test_a_selfplay_worker_never_imports_torch():
    code = ("import sys, selfplay_workers.worker, play.match, fastgo_cli.selfplay_cmd, "
            "wire.client, rundata.shards; "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_bad_arguments_exit_2_with_one_line(tmp_path, write_tiny_config):
    config = write_tiny_config(tmp_path / "c.toml")
    for args in (["selfplay", "--config", config, "--run-dir", tmp_path / "r", "--games-at-once", "0"],
                 ["selfplay", "--config", config, "--run-dir", tmp_path / "r", "--seed", str(1 << 64)],
                 ["train", "--config", config, "--run-dir", tmp_path / "r", "--duration", "-1"],
                 ["train", "--config", tmp_path / "missing.toml", "--run-dir", tmp_path / "r"]):
        out = subprocess.run([sys.executable, "-m", "fastgo_cli.main", *map(str, args)],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 2, (args, out.stderr)
        assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_bench_train_json_counts_the_games_it_made(tmp_path, write_tiny_config):
    config = write_tiny_config(tmp_path / "c.toml")
    out = subprocess.run([sys.executable, "-m", "fastgo_cli.main", "bench", "train", "--config", config,
                          "--games", "30", "--seconds", "0.2", "--repeats", "1", "--json",
                          tmp_path / "b.json", "--no-compile", "--threads", "2"],
                         capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    result = json.loads((tmp_path / "b.json").read_text())
    assert result["games"] == 30 and result["batch"] == 128 and result["board_size"] == 5
    # --threads over the config's trainer.threads (the tiny config's 1), for every variant timed
    assert result["threads"] == 2 and "(2 thread(s))" in out.stdout
    # 30 games of 5x5 last between 2 and 50 moves each (two passes .. the move cap)
    assert 30 * 2 <= result["positions"] <= 30 * 50
    assert result["data_positions_per_s"] > 0 and result["train_samples_per_s"] > 0
    assert abs(result["train_vs_data_ratio"]
               - result["train_samples_per_s"] / result["data_positions_per_s"]) < 1e-3
    assert result["channels_last"] is True and result["train_samples_per_s_other_layout"] > 0
    assert "the default layout" in out.stdout
    # fp32 is always timed beside the config's trainer; bf16 exactly where the CPU has it
    from network.cpu_isa import cpu_has_bf16
    by_variant = result["train_samples_per_s_by_variant"]
    assert set(by_variant) == {"config", "other layout", "fp32"} | ({"bf16"} if cpu_has_bf16() else set())
    assert all(rate > 0 for rate in by_variant.values()) and result["cpu_has_bf16"] == cpu_has_bf16()
    assert ("bf16 / fp32 = " in out.stdout) == cpu_has_bf16()
    assert result["compile_s"] is None and "torch.compile" not in out.stdout   # --no-compile


def test_bench_selfplay_json_agrees_with_itself(tmp_path, write_tiny_config):
    config = write_tiny_config(tmp_path / "c.toml", games=16, visits=8)
    out = subprocess.run([sys.executable, "-m", "fastgo_cli.main", "bench", "selfplay", "--config", config,
                          "--seconds", "1.5", "--warmup", "0.5", "--rounds", "1", "--json",
                          tmp_path / "s.json"], capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    r = json.loads((tmp_path / "s.json").read_text())
    assert r["workers"] == 1 and r["games_per_worker"] == 16 and r["visits"] == 8
    # a worker's batch holds at most one leaf per game, and at most two batches are in flight,
    # which the server may gather into one forward pass
    assert 1 <= r["mean_batch"] <= 2 * 16
    assert abs(r["mean_batch"] - r["positions"] / r["batches"]) < 0.01
    assert abs(r["evals_per_s"] - r["positions"] / r["seconds_per_round"]) / r["evals_per_s"] < 0.1
    assert abs(r["ratio"] - r["evals_per_s"] / r["raw_evals_per_s"]) < 1e-3


def test_bench_selfplay_serves_a_checkpoint_and_counts_the_cache(tmp_path, write_tiny_config):
    """--model: the server and the raw forward run that network (a checkpoint of another
    width than the config's is served as it is); selfplay.nn_cache: the share it answered."""
    from network.checkpoint import save_checkpoint
    from network.model import build_model
    from rundata.config import load_config

    config = write_tiny_config(tmp_path / "c.toml", games=16, visits=8)
    text = open(config).read().replace("[selfplay]\n", "[selfplay]\nnn_cache = 1024\n", 1)
    assert "nn_cache = 1024" in text
    open(config, "w").write(text)
    model = load_config(config).model
    wider = build_model(dataclasses.replace(model, channels=model.channels + 8), seed=3)
    save_checkpoint(tmp_path / "w.ckpt", wider, step=70)
    out = subprocess.run([sys.executable, "-m", "fastgo_cli.main", "bench", "selfplay", "--config", config,
                          "--model", tmp_path / "w.ckpt", "--seconds", "1.5", "--warmup",
                          "0.5", "--rounds", "1", "--json", tmp_path / "s.json"],
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    r = json.loads((tmp_path / "s.json").read_text())
    assert r["checkpoint"] == "w.ckpt" and r["model"] == f"b{model.blocks}c{model.channels + 8}"
    assert 0 < r["cache_hit_share"] < 1      # the first position of every game repeats
    assert "cache answered" in out.stdout


def test_train_refuses_a_run_of_another_model_in_one_line(tmp_path, write_tiny_config):
    small = write_tiny_config(tmp_path / "small.toml")
    big = tmp_path / "big.toml"
    big.write_text(open(small).read().replace("channels = 16", "channels = 24"))
    run = tmp_path / "run"
    first = subprocess.run([sys.executable, "-m", "fastgo_cli.main", "train", "--config", small,
                            "--run-dir", str(run), "--no-publish", "--steps", "0", "--quiet"],
                           capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    out = subprocess.run([sys.executable, "-m", "fastgo_cli.main", "train", "--config", str(big),
                          "--run-dir", str(run), "--no-publish", "--steps", "0", "--quiet"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "b2c16" in out.stderr and "b2c24" in out.stderr
