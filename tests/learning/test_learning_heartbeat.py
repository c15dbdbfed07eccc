"""The learning heartbeat: a real server, a real self-play worker and a real trainer, started as
`fastgo` processes on a 5x5 board with a tiny network, for TRAIN_STEPS training steps of 128
positions each, each position sampled up to SAMPLES_PER_POSITION times (TIMEOUT_S seconds only
stop a run that hangs). The last checkpoint
must beat the random player in at least 90% of 100 games and beat the untrained network (the
trainer's step-0 checkpoint) under the same search. This is the project's learning regression
test: if it fails, something in the loop stopped learning."""
import glob
import os
import time

import torch

from network.batch_evaluator import InProcessEvaluator
from play.match import SearchSide, play_match
from play.players import RandomPlayer
from rundata.config import load_config
from rundata.shards import list_shards, read_shard

# 2000 steps at 8 samples a position (32,000 self-play positions) ended 99, 100, 99 and 100 of
# 100 against random and 97-3, 99-1, 99-1, 99-1 against the untrained network, at half the CPU
# of 3000 steps at 4 (96,000 positions: 100/100, 100-0). The step-1200 checkpoints of three of
# those runs: 100/100 against random each, 100-0, 97-3 and 97-3 against the untrained network.
# One more run, every 100 steps from 700 to 1100: 100, 99, 99, 99 and 100 of 100 against random,
# 100-0, 96-4, 99-1, 97-3 and 98-2 against the untrained network (its last, 1200: 100/100 and
# 99-1). So the test stops at 900 (14,400 positions), still far above its bounds
TRAIN_STEPS = 900
SAMPLES_PER_POSITION = 8.0
TIMEOUT_S = 600
VISITS = 24


def test_heartbeat_learns_to_beat_random_and_its_untrained_self(tmp_path, write_tiny_config,
                                                                run_learning_loop):
    torch.set_num_threads(1)
    started = time.monotonic()
    config_path = write_tiny_config(tmp_path / "heartbeat.toml")
    text = open(config_path).read()
    assert "samples_per_position = 4.0" in text
    with open(config_path, "w") as handle:
        handle.write(text.replace("samples_per_position = 4.0",
                                  f"samples_per_position = {SAMPLES_PER_POSITION}"))
    config = load_config(config_path)
    run = tmp_path / "run"
    run_learning_loop(config_path, run, tmp_path, max_steps=TRAIN_STEPS, timeout_s=TIMEOUT_S)
    loop_seconds = time.monotonic() - started

    checkpoints = sorted(glob.glob(str(run / "checkpoints" / "ckpt-*.ckpt")))
    assert os.path.basename(checkpoints[0]) == "ckpt-000000000.ckpt"
    last = checkpoints[-1]
    assert os.path.basename(last) == f"ckpt-{TRAIN_STEPS:09d}.ckpt"

    # The server hot-reloaded the trainer's checkpoints: later games were played by later versions.
    versions = [v for name in list_shards(run / "shards")
                for game in read_shard(run / "shards" / name).games for v in game.versions]
    assert max(versions) > 0

    trained = SearchSide(InProcessEvaluator(last), VISITS, name="trained", seed=11)
    vs_random = play_match(trained, RandomPlayer(seed=12), 100, size=5,
                           komi=config.selfplay.komi)
    low, high = vs_random.wilson()
    print(f"\nheartbeat: loop {loop_seconds:.0f} s; {os.path.basename(last)} vs random "
          f"{vs_random.wins_a}/{vs_random.games} (Wilson 95% {low:.3f}..{high:.3f})")
    assert vs_random.games == 100
    assert vs_random.wins_a >= 90

    untrained = SearchSide(InProcessEvaluator(checkpoints[0]), VISITS, name="untrained", seed=13,
                           opening_moves=2)
    trained = SearchSide(InProcessEvaluator(last), VISITS, name="trained", seed=14, opening_moves=2)
    vs_untrained = play_match(trained, untrained, 100, size=5, komi=config.selfplay.komi)
    low, high = vs_untrained.wilson()
    print(f"heartbeat: trained vs untrained {vs_untrained.wins_a}-{vs_untrained.wins_b} "
          f"(draws {vs_untrained.draws}; Wilson 95% {low:.3f}..{high:.3f}); "
          f"total {time.monotonic() - started:.0f} s")
    assert low > 0.5, "the trained network is not clearly stronger than the untrained one"
