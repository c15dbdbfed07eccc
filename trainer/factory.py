"""The trainer a config asks for: trainer.algorithm picks the data and loss step that the
training core (trainer.training_core) is driven by. Supervised pretraining on game records is started
by trainer.supervised.pretrain instead (it needs the records).
"""
from __future__ import annotations

from fastgo.variants import Algorithm
from trainer.alphazero import AlphaZeroObjective
from trainer.reinforce_loop import ReinforceTrainer
from trainer.value_stage import ValueObjective
from trainer.window_trainer import WindowTrainer


def make_trainer(config, run_dir, *, publisher=None, status=None):
    """The trainer of config.trainer.algorithm on `run_dir` (a rundata.rundir.RunDir), resumed
    from its latest.ckpt when there is one: "alphazero" and "value" train over the replay window
    (WindowTrainer with AlphaZeroObjective or ValueObjective), "reinforce" on each game once
    (ReinforceTrainer). publisher(path, data, step) receives every checkpoint written; status
    is a rundata.rundir.StatusFile or None. ResumeError (trainer.training_core) when the run directory
    holds a checkpoint this config cannot continue."""
    algorithm = config.trainer.algorithm
    if algorithm == Algorithm.REINFORCE:
        return ReinforceTrainer(config, run_dir, publisher=publisher, status=status)
    if algorithm == Algorithm.VALUE:
        objective = ValueObjective(config.trainer)
    elif algorithm == Algorithm.ALPHAZERO:
        objective = AlphaZeroObjective(config.trainer)
    else:
        raise ValueError(f"trainer.algorithm: no trainer for {algorithm!r}")
    return WindowTrainer(config, run_dir, objective, publisher=publisher, status=status)
