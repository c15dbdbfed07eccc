"""A trainer whose checkpoints the server refuses (diverged weights fail the canary check) stops
with exit status 2 and a message naming the refused step and the last one the server took,
instead of waiting forever for games of a version the workers never get; a server that is merely
down does not count; REINFORCE measures staleness against the newest version the server took."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from network.checkpoint import load_checkpoint, save_checkpoint
from rundata.config import loads_config
from rundata.rundir import open_run_dir
from supervision.role_process import ServerProcess
from trainer.factory import make_trainer
from trainer.training_core import CheckpointsRefused
from wire.client import ServerError, ServerUnavailable
from wire.protocol import RELOAD_FAILED

SIZE, KOMI = 5, 0.5                  # the board of the reinforce_config fixture


class Publisher:
    """Answers each publish as `answer(step)` says: None (taken), or an exception to raise."""

    def __init__(self, answer):
        self.answer = answer
        self.calls = []

    def __call__(self, path, data, step):
        self.calls.append(step)
        err = self.answer(step)
        if err is not None:
            raise err


def refused(step):
    return ServerError(RELOAD_FAILED, "canary logits out of range (max |logit| 2.5e+04)")


def test_refusals_in_a_row_stop_the_trainer_and_staleness_follows_the_served_version(
        tmp_path, reinforce_config, game_record, random_moves, write_shard):
    config = loads_config(reinforce_config + "max_staleness = 1\nmax_refused = 3\n")
    run = open_run_dir(tmp_path / "run")
    rng = np.random.default_rng(5)
    # Every game was played by version 1, the last one the server takes: measured against the
    # trainer's step, updates 3 and 4 would find them all stale and wait for ever.
    played = [game_record(SIZE, KOMI, random_moves(SIZE, KOMI, rng, length=6 + i), (1, -1)[i % 2],
                          versions=(1, 0), seed=i) for i in range(20)]
    write_shard(run.shards, played, "w0-000001.shard", size=SIZE, komi=KOMI)
    publisher = Publisher(lambda step: refused(step) if step >= 2 else None)
    trainer = make_trainer(config, run, publisher=publisher)
    with pytest.raises(CheckpointsRefused) as err:
        trainer.run(seconds=60)
    text = str(err.value)
    assert trainer.step == 4 and publisher.calls == [0, 1, 2, 3, 4]
    assert trainer.stale == 0 and trainer.games == 16
    assert "step 4" in text and "refused 3 in a row" in text and "canary logits" in text
    assert f"step 1, {run.checkpoint(1)}" in text and "trainer.max_refused = 3" in text
    # Nothing written is lost: the refused checkpoints are on disk, latest.ckpt the newest.
    assert load_checkpoint(run.latest).step == 4


def test_a_server_that_is_down_is_not_a_refusal_and_taking_one_resets_the_count(
        tmp_path, reinforce_config, reinforce_games, write_shard):
    config = loads_config(reinforce_config + "max_refused = 2\n")
    run = open_run_dir(tmp_path / "run")
    write_shard(run.shards, reinforce_games(np.random.default_rng(6), 24, 0), "w0-000001.shard",
                size=SIZE, komi=KOMI)
    answers = {1: refused(1), 2: ServerUnavailable("no reply"), 3: None, 4: refused(4),
               5: ConnectionError("down")}
    publisher = Publisher(lambda step: answers.get(step))
    trainer = make_trainer(config, run, publisher=publisher)
    trainer.run(max_steps=6)
    assert trainer.step == 6 and trainer.served_step == 6 and trainer.refused_in_row == 0
    # With max_refused = 0 the trainer never stops for refusals.
    config = loads_config(reinforce_config + "max_refused = 0\n")
    run = open_run_dir(tmp_path / "run0")
    write_shard(run.shards, reinforce_games(np.random.default_rng(7), 24, 0), "w0-000001.shard",
                size=SIZE, komi=KOMI)
    trainer = make_trainer(config, run, publisher=Publisher(lambda step: refused(step) if step else None))
    trainer.run(max_steps=6)
    assert trainer.step == 6 and trainer.refused_in_row == 6 and trainer.served_step == 0


def test_fastgo_train_exits_2_on_a_checkpoint_with_diverged_weights(tmp_path, reinforce_config,
                                                                          reinforce_games, write_shard):
    """A run whose latest checkpoint holds NaN weights (training diverged): the real server
    refuses every checkpoint the trainer publishes, and `fastgo train` ends with status 2."""
    config_path = tmp_path / "c.toml"
    config_path.write_text(reinforce_config + "max_refused = 2\n" + """
[server]
endpoint = "tcp://127.0.0.1:*"
max_batch = 8
threads = 1
device = "cpu"
backend = "torch"
""")
    config = loads_config(config_path.read_text())
    run = open_run_dir(tmp_path / "run")
    write_shard(run.shards, reinforce_games(np.random.default_rng(8), 16, 0), "w0-000001.shard",
                size=SIZE, komi=KOMI)
    model = make_trainer(config, run).model
    with torch.no_grad():
        for p in model.parameters():
            p.fill_(float("nan"))
    save_checkpoint(run.checkpoint(7), model, step=7, extra={"algorithm": "reinforce"})
    tmp = run.latest + ".tmp"
    os.link(run.checkpoint(7), tmp)
    os.replace(tmp, run.latest)
    with ServerProcess(config_path, log_path=str(tmp_path / "server.log")) as server:
        proc = subprocess.run(
            [sys.executable, "-m", "fastgo_cli.main", "train", "--config", str(config_path),
             "--run-dir", run.root, "--server", server.endpoint, "--steps", "20", "--quiet"],
            capture_output=True, text=True, timeout=120)
        assert server.alive()
    # Diverged weights never reach the server: the trainer refuses to resume from them, in one
    # line naming the checkpoint (training from them would only skip every batch).
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "non-finite weights" in lines[0] and "step 7" in lines[0]
