"""The REINFORCE trainer on hand-written shards: one update per `minibatch_games` games, each game
used once in order of arrival, metrics rows with the learner's win rate, the pool growing every
`pool_every` updates, checkpoints published, and a restart resuming mid-shard."""
from __future__ import annotations

import csv
import os
import time

import numpy as np

from rundata.config import loads_config
from rundata.pool import read_pool
from rundata.rundir import open_run_dir
from trainer.factory import make_trainer

SIZE, KOMI = 5, 0.5                  # the board of the reinforce_config fixture


def learner_result(game):
    colour = 1 if game.full[0] else -1
    return colour * game.winner


def rows(run):
    with open(run.metrics, newline="") as handle:
        return list(csv.DictReader(handle))


def test_updates_metrics_pool_and_resume(tmp_path, reinforce_config, reinforce_games, write_shard):
    config = loads_config(reinforce_config)
    run = open_run_dir(tmp_path / "run")
    rng = np.random.default_rng(1)
    a, b = reinforce_games(rng, 6, 100), reinforce_games(rng, 5, 200)
    # Arrival (modification time) against name order: a arrives first under the later name.
    now = time.time_ns()
    for games, name, age_s in ((a, "w1-000001.shard", 2), (b, "w0-000001.shard", 1)):
        path = write_shard(run.shards, games, name, size=SIZE, komi=KOMI)
        os.utime(path, ns=(now - age_s * 10**9,) * 2)
    published = []
    trainer = make_trainer(config, run, publisher=lambda path, data, step: published.append(step))
    assert type(trainer).__name__ == "ReinforceTrainer"
    assert [e.step for e in read_pool(os.path.join(run.root, "pool.json"))] == [0]
    trainer.run(seconds=20, should_stop=lambda: trainer.step >= 2)
    assert trainer.step == 2 and trainer.games == 8
    # b[2:], waiting for a 4th game (by name, a[3:] would wait)
    assert [(name, i) for name, i, _ in trainer.queue] == [("w0-000001.shard", i) for i in (2, 3, 4)]
    assert published == [0, 1, 2]
    got = rows(run)
    assert [int(r["step"]) for r in got] == [1, 2]
    ordered = a + b
    for r, chunk in zip(got, (ordered[0:4], ordered[4:8])):
        expected = np.mean([(learner_result(g) + 1) / 2 for g in chunk])
        assert abs(float(r["win_rate"]) - expected) < 1e-4
        assert int(r["pool"]) == (2 if int(r["step"]) == 2 else 1)
    assert [e.step for e in read_pool(os.path.join(run.root, "pool.json"))] == [0, 2]
    assert os.path.exists(run.checkpoint(2)) and os.path.exists(run.checkpoint(0))
    assert not os.path.exists(run.checkpoint(1))       # pruned: not in the pool, not the newest
    weights = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    momentum = trainer.optimizer.state_dict()["state"]
    trainer = None                   # the first trainer gone before the second reads its state

    # Restart: the same weights and optimizer, b[0:2] not used again, b[2:] + c[0] make update 3.
    c = reinforce_games(rng, 1, 300)
    write_shard(run.shards, c, "w0-000003.shard", size=SIZE, komi=KOMI)      # arrives now
    again = make_trainer(config, run)
    assert again.step == 2 and again.games == 8 and again.partial == {"w0-000001.shard": 2}
    assert all(np.array_equal(v, again.model.state_dict()[k]) for k, v in weights.items())
    assert again.optimizer.state_dict()["state"].keys() == momentum.keys()
    again.run(seconds=20, should_stop=lambda: again.step >= 3)
    assert again.step == 3 and again.games == 12
    last = rows(run)[-1]
    expected = np.mean([(learner_result(g) + 1) / 2 for g in b[2:] + c])
    assert int(last["step"]) == 3 and abs(float(last["win_rate"]) - expected) < 1e-4
    assert set(again.used_shards) == {"w1-000001.shard", "w0-000001.shard", "w0-000003.shard"}
    assert again.partial == {}
    # pool_max = 2: step 4 would drop step 0; after step 3 the pool is still [0, 2].
    assert [e.step for e in read_pool(os.path.join(run.root, "pool.json"))] == [0, 2]


def test_pool_drops_the_oldest_beyond_pool_max(tmp_path, reinforce_config, reinforce_games, write_shard):
    config = loads_config(reinforce_config.replace("pool_every = 2", "pool_every = 1"))
    run = open_run_dir(tmp_path / "run")
    rng = np.random.default_rng(2)
    write_shard(run.shards, reinforce_games(rng, 12, 0), "w0-000001.shard", size=SIZE, komi=KOMI)
    trainer = make_trainer(config, run)
    trainer.run(seconds=20, should_stop=lambda: trainer.step >= 3)
    assert [e.step for e in read_pool(os.path.join(run.root, "pool.json"))] == [2, 3]
    names = sorted(os.listdir(run.checkpoints))
    assert "ckpt-000000002.ckpt" in names and "ckpt-000000003.ckpt" in names


def test_stale_games_are_dropped_and_an_interrupted_update_keeps_its_games(
        tmp_path, reinforce_config, reinforce_games, write_shard, game_record):
    config = loads_config(reinforce_config + "max_staleness = 1\n")
    run = open_run_dir(tmp_path / "run")
    rng = np.random.default_rng(3)
    write_shard(run.shards, reinforce_games(rng, 12, 0), "w0-000001.shard", size=SIZE, komi=KOMI)
    trainer = make_trainer(config, run)
    trainer.ingest()
    before = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    assert trainer.update(should_stop=lambda: True) is None
    assert len(trainer.queue) == 12 and trainer.step == 0 and trainer.games == 0
    assert all(np.array_equal(v, trainer.model.state_dict()[k]) for k, v in before.items())
    # Every game was played by version 0: updates 1 and 2 use 8 of them (0 and 1 behind), then
    # the last 4 are 2 updates behind: dropped unused, counted, and their shard is done.
    trainer.run(seconds=20, should_stop=lambda: trainer.stale > 0)
    assert trainer.step == 2 and trainer.games == 8 and trainer.stale == 4
    assert trainer.used_shards == {"w0-000001.shard"} and not trainer.queue
    # Games of version 2 make update 3, whose metrics row counts the 4 dropped games.
    fresh = [game_record(g.size, g.komi, g.moves, 1 if g.full[0] else -1, versions=(2, 0),
                         seed=1000 + i) for i, g in enumerate(reinforce_games(rng, 4, 0))]
    write_shard(run.shards, fresh, "w0-000002.shard", size=SIZE, komi=KOMI)
    trainer.run(seconds=20, should_stop=lambda: trainer.step >= 3)
    assert trainer.step == 3 and [r["stale"] for r in rows(run)] == ["0", "0", "4"]


def test_config_keys_are_checked_and_named():
    import pytest

    from rundata.config import ConfigError

    for line, words in (('algorithm = "ppo"', "trainer.algorithm: must be one of"),
                        ('baseline = "median"', "trainer.baseline: must be one of"),
                        ("minibatch_games = 0", "trainer.minibatch_games: must be >= 1"),
                        ("pool_every = 0", "trainer.pool_every: must be >= 1"),
                        ("pool_max = -1", "trainer.pool_max: must be >= 0"),
                        ("max_staleness = -2", "trainer.max_staleness: must be >= 0"),
                        ('reinforce_batchnorm = "frozen"',
                         "trainer.reinforce_batchnorm: must be one of"),
                        ("target_kl = -0.1", "trainer.target_kl: must be >= 0"),
                        ("mask_weight = 1e9", "trainer.mask_weight: must be <= 100"),
                        ("max_refused = -1", "trainer.max_refused: must be >= 0"),
                        ("positions_per_game = 0", "trainer.positions_per_game: must be >= 1"),
                        ('freeze_policy = "yes"', "trainer.freeze_policy: expected true or false")):
        with pytest.raises(ConfigError) as err:
            loads_config(f"[trainer]\n{line}\n", source="r.toml")
        assert str(err.value).startswith("r.toml: ") and words in str(err.value), str(err.value)
    assert loads_config("").trainer.algorithm == "alphazero"


def test_metrics_begun_by_another_trainer_keep_their_columns(tmp_path):
    from trainer.metrics import REINFORCE_FIELDS, append_metrics_row

    path = tmp_path / "metrics.csv"
    path.write_text("step,time,positions,loss,policy_acc\n100,1.0,5000,2.5,0.31\n")
    append_metrics_row(str(path), REINFORCE_FIELDS, {"step": 101, "loss": "0.7", "win_rate": "0.6"})
    with open(path, newline="") as handle:
        got = list(csv.DictReader(handle))
    assert list(got[0])[:5] == ["step", "time", "positions", "loss", "policy_acc"]
    assert set(REINFORCE_FIELDS) <= set(got[0])
    assert got[0]["policy_acc"] == "0.31" and got[0]["win_rate"] == ""
    assert got[1]["step"] == "101" and got[1]["win_rate"] == "0.6" and got[1]["policy_acc"] == ""


def test_a_pretrained_start_is_the_first_pool_entry(tmp_path, reinforce_config):
    from network.checkpoint import save_checkpoint
    from network.model import build_model

    config = loads_config(reinforce_config)
    run = open_run_dir(tmp_path / "run")
    save_checkpoint(run.checkpoint(0), build_model(config.model, seed=5), step=0)
    pretrained = build_model(config.model, seed=6)
    save_checkpoint(run.checkpoint(250), pretrained, step=250)
    os.link(run.checkpoint(250), run.latest)
    trainer = make_trainer(config, run)
    assert trainer.step == 250
    assert [(e.name, e.step, e.path) for e in read_pool(os.path.join(run.root, "pool.json"))] == \
        [("ckpt-250", 250, "checkpoints/ckpt-000000250.ckpt")]
    assert all(torch_equal(v, trainer.model.state_dict()[k]) for k, v in pretrained.state_dict().items())


def torch_equal(a, b):
    import torch
    return torch.equal(a, b)


def test_the_learning_rate_starts_low_follows_the_kl_target_and_resumes(tmp_path, reinforce_config,
                                                                         reinforce_games, write_shard):
    from trainer.reinforce import adapt_lr

    config = loads_config(reinforce_config + "target_kl = 0.01\n")
    run = open_run_dir(tmp_path / "run")
    write_shard(run.shards, reinforce_games(np.random.default_rng(9), 24, 0), "w0-000001.shard",
                size=SIZE, komi=KOMI)
    trainer = make_trainer(config, run)
    assert trainer.optimizer.param_groups[0]["lr"] == 0.01 / 100       # a fresh optimizer
    seen = []
    for _ in range(6):
        trainer.ingest()
        lr = trainer.optimizer.param_groups[0]["lr"]
        terms = trainer.update()
        after = trainer.optimizer.param_groups[0]["lr"]
        assert after == adapt_lr(lr, terms["kl"], 0.01, 0.01, 0.01 / 1000)
        seen.append((lr, terms["kl"], after))
    assert seen[-1][2] > seen[0][0]          # the tiny network's KL stays small: lr rises
    trainer.save_checkpoint()
    resumed = make_trainer(config, open_run_dir(tmp_path / "run"))
    assert resumed.optimizer.param_groups[0]["lr"] == seen[-1][2]   # not started low again
