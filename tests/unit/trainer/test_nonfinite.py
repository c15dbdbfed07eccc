"""A non-finite loss or gradient never reaches the weights (trainer.training_core.finite_step): the batch
is skipped with the weights and the step unchanged, and MAX_NONFINITE_IN_A_ROW skips in a row
stop training with NonFiniteTraining."""
import pytest
import torch

from rundata.config import loads_config
from rundata.rundir import open_run_dir
from trainer import training_core as core
from trainer.training_core import MAX_NONFINITE_IN_A_ROW, NonFiniteTraining, TrainingCore

CONFIG = """
[model]
board_size = 5
blocks = 1
channels = 8
value_hidden = 8
[trainer]
device = "cpu"
seed = 1
"""


@pytest.fixture
def training(tmp_path):
    return TrainingCore(loads_config(CONFIG), open_run_dir(tmp_path / "run"), algorithm="alphazero")


def loss_of(training, scale):
    x = torch.ones(2, training.model.config.planes, 5, 5)
    logits, value = training.model(x)
    return (logits.sum() + value.sum()) * scale


def weights(training):
    return [p.detach().clone() for p in training.model.parameters()]


def test_finite_loss_steps_and_nan_or_inf_is_skipped(training):
    before = weights(training)
    training.optimizer.zero_grad()
    loss = loss_of(training, 1.0)
    loss.backward()
    assert training.finite_step(loss)
    assert any(not torch.equal(a, b) for a, b in zip(before, weights(training)))
    for bad in (float("nan"), float("inf")):
        before = weights(training)
        training.optimizer.zero_grad()
        loss = loss_of(training, bad)
        assert not training.finite_step(loss)
        assert all(torch.equal(a, b) for a, b in zip(before, weights(training)))
    assert training.nonfinite_total == 2 and training.nonfinite_in_row == 2


def test_a_non_finite_gradient_with_a_finite_loss_is_skipped(training):
    before = weights(training)
    training.optimizer.zero_grad()
    loss = loss_of(training, 1.0)
    loss.backward()
    next(training.model.parameters()).grad[0].fill_(float("nan"))
    assert not training.finite_step(loss)
    assert all(torch.equal(a, b) for a, b in zip(before, weights(training)))
    assert all(p.grad is None for p in training.model.parameters())


def test_too_many_in_a_row_stop_training_and_a_good_step_resets_the_count(training):
    for _ in range(MAX_NONFINITE_IN_A_ROW - 1):
        assert not training.finite_step(loss_of(training, float("nan")))
    training.optimizer.zero_grad()
    loss = loss_of(training, 1.0)
    loss.backward()
    assert training.finite_step(loss) and training.nonfinite_in_row == 0
    for _ in range(MAX_NONFINITE_IN_A_ROW - 1):
        training.finite_step(loss_of(training, float("nan")))
    with pytest.raises(NonFiniteTraining, match="in a row"):
        training.finite_step(loss_of(training, float("nan")))
    assert core.MAX_NONFINITE_IN_A_ROW == MAX_NONFINITE_IN_A_ROW
