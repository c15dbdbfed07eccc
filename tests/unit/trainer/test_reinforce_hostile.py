"""The REINFORCE trainer against bad input: a pool.json it cannot use is reported, moved aside
and replaced by a new pool (rundata.pool.OpponentPool), never a traceback; a mini-batch whose loss
is not finite is skipped with the weights, running statistics and step unchanged
(trainer.training_core.TrainingCore.finite_step), and MAX_NONFINITE_IN_A_ROW of them stop training."""
from __future__ import annotations

import logging
import os

import numpy as np
import pytest
import torch

from rundata.config import loads_config
from rundata.pool import read_pool
from rundata.rundir import open_run_dir
from trainer import reinforce_loop
from trainer import training_core as core
from trainer.factory import make_trainer
from trainer.reinforce import learner_batch, reinforce_step
from trainer.training_core import NonFiniteTraining, TrainingCore
from trainer.window import block_from_games

SIZE, KOMI = 5, 0.5                  # the board of the reinforce_config fixture


def state(model):
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def same(a, b):
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("batchnorm", ["batch", "recalibrate"])
def test_a_nan_result_skips_the_update_with_the_model_unchanged(tmp_path, reinforce_config,
                                                                reinforce_games, batchnorm):
    config = loads_config(reinforce_config)
    training = TrainingCore(config, open_run_dir(tmp_path / "run"), algorithm="reinforce")
    games = reinforce_games(np.random.default_rng(3), 4, 0)
    block = block_from_games(games, SIZE, "poisoned")
    batch = learner_batch(block, SIZE, KOMI, config.model.encoding, config.model.planes)
    clean_z = batch.z.copy()
    batch.z[len(batch.z) // 2] = np.nan       # one position's result: the loss becomes NaN
    before = state(training.model)
    terms = reinforce_step(training.model, training.optimizer, batch, baseline="value",
                           value_weight=1.0, chunk=8, batchnorm=batchnorm,
                           step=training.finite_step)
    assert terms["skipped"] and np.isnan(terms["loss"]) and terms["kl"] == 0.0
    assert same(before, state(training.model))         # weights and running statistics
    assert (training.nonfinite_total, training.nonfinite_in_row) == (1, 1)
    assert all(p.grad is None for p in training.model.parameters())
    # The same batch with its results restored steps, and the count of skips in a row resets.
    batch.z[:] = clean_z
    terms = reinforce_step(training.model, training.optimizer, batch, baseline="value",
                           value_weight=1.0, chunk=8, batchnorm=batchnorm,
                           step=training.finite_step)
    assert not terms.get("skipped") and np.isfinite(terms["loss"])
    assert not same(before, state(training.model))
    assert (training.nonfinite_total, training.nonfinite_in_row) == (1, 0)


def _poison(monkeypatch):
    """Every mini-batch the REINFORCE trainer builds gets a NaN result in its first position."""
    real = reinforce_loop.learner_batch

    def poisoned(*args, **kwargs):
        batch = real(*args, **kwargs)
        batch.z[0] = np.nan
        return batch
    monkeypatch.setattr(reinforce_loop, "learner_batch", poisoned)


def test_the_trainer_skips_a_poisoned_batch_and_stops_after_too_many(
        tmp_path, reinforce_config, reinforce_games, write_shard, monkeypatch, caplog):
    caplog.set_level(logging.WARNING, logger="fastgo.train")
    config = loads_config(reinforce_config)
    run = open_run_dir(tmp_path / "run")
    rng = np.random.default_rng(5)
    write_shard(run.shards, reinforce_games(rng, 4, 0), "w0-000001.shard", size=SIZE, komi=KOMI)
    trainer = make_trainer(config, run)
    before = state(trainer.model)
    _poison(monkeypatch)
    trainer.ingest()
    terms = trainer.update()
    assert terms["skipped"]
    assert (trainer.step, trainer.games, trainer.skipped_games) == (0, 0, 4)
    assert not trainer.queue and trainer.used_shards == {"w0-000001.shard"}   # used up
    assert same(before, state(trainer.model))
    assert sum("non-finite loss or gradient; batch skipped" in r.getMessage()
               for r in caplog.records) == 1
    # Two more poisoned mini-batches with the limit at 3 in a row: training stops.
    monkeypatch.setattr(core, "MAX_NONFINITE_IN_A_ROW", 3)
    write_shard(run.shards, reinforce_games(rng, 8, 100), "w0-000002.shard", size=SIZE, komi=KOMI)
    with pytest.raises(NonFiniteTraining, match="3 batches in a row"):
        trainer.run(seconds=30)
    # the second was skipped and used up; the third raised before its games were taken
    assert trainer.step == 0 and trainer.skipped_games == 8 and len(trainer.queue) == 4
    assert same(before, state(trainer.model))
    assert [e.step for e in read_pool(os.path.join(run.root, "pool.json"))] == [0]


@pytest.mark.parametrize("bad", ["not utf-8", "directory", "nan weight"])
def test_a_bad_pool_file_does_not_stop_the_trainer(tmp_path, reinforce_config, reinforce_games,
                                                   write_shard, bad, caplog):
    caplog.set_level(logging.WARNING)
    config = loads_config(reinforce_config)
    run = open_run_dir(tmp_path / "run")
    path = os.path.join(run.root, "pool.json")
    if bad == "directory":
        os.mkdir(path)
    else:
        with open(path, "wb") as handle:
            handle.write(b"\xff\xfe{" if bad == "not utf-8" else
                         b'{"version": 1, "entries": [{"name": "a", "path": "checkpoints/a", '
                         b'"step": 3, "weight": NaN}]}')
    trainer = make_trainer(config, run)
    assert [e.step for e in trainer.pool.entries] == [0]
    assert [e.step for e in read_pool(path)] == [0]
    assert os.path.lexists(os.path.join(run.quarantine, "pool.json"))
    assert any("starting a new opponent pool" in r.getMessage() for r in caplog.records)
    # It trains on, and the pool grows as configured (pool_every = 2).
    rng = np.random.default_rng(9)
    write_shard(run.shards, reinforce_games(rng, 8, 0), "w0-000001.shard", size=SIZE, komi=KOMI)
    trainer.run(seconds=30, should_stop=lambda: trainer.step >= 2)
    assert trainer.step == 2
    assert [e.step for e in read_pool(path)] == [0, 2]
