"""The training core and what the trainers share: the factory's choice by trainer.algorithm, one
meaning per metrics.csv column, each window objective's loss against the formula recomputed
here from the batch it drew, pruning and latest.ckpt."""
from __future__ import annotations

import os

import pytest
import torch
import torch.nn.functional as F

from network.checkpoint import load_checkpoint
from rundata.config import loads_config
from rundata.rundir import open_run_dir
from trainer import metrics
from trainer.alphazero import AlphaZeroObjective
from trainer.factory import make_trainer
from trainer.reinforce_loop import ReinforceTrainer
from trainer.training_core import TrainingCore
from trainer.value_stage import ValueObjective, is_value_head
from trainer.window_trainer import WindowTrainer


@pytest.fixture
def config_text(small_trainer_config):
    """The conftest's small window trainer: append trainer keys."""
    return small_trainer_config()


def test_the_factory_picks_the_trainer_of_the_algorithm(tmp_path, config_text):
    kinds = {"alphazero": (WindowTrainer, AlphaZeroObjective),
             "value": (WindowTrainer, ValueObjective), "reinforce": (ReinforceTrainer, None)}
    for algorithm, (cls, objective) in kinds.items():
        config = loads_config(config_text + f'algorithm = "{algorithm}"\n')
        trainer = make_trainer(config, open_run_dir(tmp_path / algorithm))
        assert type(trainer) is cls and trainer.algorithm == algorithm
        if objective is not None:
            assert type(trainer.objective) is objective
        # a fresh run directory: the untrained network is written at once, by this algorithm
        ckpt = load_checkpoint(trainer.run_dir.latest)
        assert ckpt.step == 0 and ckpt.extra["algorithm"] == algorithm


def test_every_column_has_one_meaning():
    tables = {"alphazero": metrics.ALPHAZERO_FIELDS, "value": metrics.VALUE_FIELDS,
              "supervised": metrics.SUPERVISED_FIELDS, "reinforce": metrics.REINFORCE_FIELDS}
    for name, fields in tables.items():
        assert len(set(fields)) == len(fields), name
        assert set(fields) <= set(metrics.COLUMNS), (name, set(fields) - set(metrics.COLUMNS))
    # the three value errors are three columns, each written by one trainer only
    owners = {column: [n for n, f in tables.items() if column in f]
              for column in ("value_mse", "value_abs_error", "heldout_value_mse")}
    assert owners == {"value_mse": ["alphazero"], "value_abs_error": ["value"],
                      "heldout_value_mse": ["supervised"]}
    assert not any("value_error" in f for f in tables.values())


def num(tensor) -> float:
    return float(tensor.detach())


def _forward_on_drawn_batch(model, buffers, train_mode):
    """The model's outputs on the batch the objective left in `buffers`, recomputed."""
    model.train(train_mode)
    with torch.no_grad():
        x = torch.from_numpy(buffers["planes"]).float()
        return model.forward_train(x)


def test_alphazero_loss_is_the_formula_on_the_batch_it_drew(run_with_games, config_text):
    config = loads_config(config_text)
    trainer = make_trainer(config, run_with_games)
    trainer.ingest()
    rows, loss, terms = trainer.objective.loss(trainer.model, trainer.window, trainer.rng,
                                               trainer.buffers, trainer.device)
    b = trainer.buffers
    out = _forward_on_drawn_batch(trainer.model, b, True)
    logits, value, own = out.logits, out.value, out.ownership
    target, w = torch.from_numpy(b["policy"]), torch.from_numpy(b["policy_weight"])
    z, u = torch.from_numpy(b["value"]), torch.from_numpy(b["ownership"])
    policy = float(-((target * F.log_softmax(logits, 1)).sum(1) * w).sum() / max(1.0, float(w.sum())))
    value_mse = float(((value - z) ** 2).mean())
    tc = config.trainer
    expected = policy + tc.value_weight * value_mse
    if own is not None:
        expected += tc.ownership_weight * float(((own - u) ** 2).mean())
    assert rows == tc.batch_size
    assert num(terms["policy_loss"]) == pytest.approx(policy, rel=1e-5)
    assert num(terms["value_mse"]) == num(terms["value_loss"]) == pytest.approx(value_mse, rel=1e-5)
    assert num(loss) == pytest.approx(expected, rel=1e-5)
    hits = (logits.argmax(1) == target.argmax(1)).float()
    assert num(terms["policy_acc"]) == pytest.approx(float((hits * w).sum() / max(1.0, float(w.sum()))))


def test_value_stage_reports_its_own_error_column(run_with_games, config_text):
    config = loads_config(config_text + 'algorithm = "value"\nfreeze_policy = true\n')
    trainer = make_trainer(config, run_with_games)
    trainer.ingest()
    trained = {n for n, p in trainer.model.named_parameters() if p.requires_grad}
    assert trained and all(is_value_head(n) for n in trained)
    rows, loss, terms = trainer.objective.loss(trainer.model, trainer.window, trainer.rng,
                                               trainer.buffers, trainer.device)
    value = _forward_on_drawn_batch(trainer.model, trainer.buffers, False).value
    z = torch.from_numpy(trainer.buffers["value"])
    assert num(terms["value_abs_error"]) == pytest.approx(float((value - z).abs().mean()), rel=1e-5)
    assert num(terms["value_loss"]) == pytest.approx(float(((value - z) ** 2).mean()), rel=1e-5)
    assert num(loss) == pytest.approx(config.trainer.value_weight * num(terms["value_loss"]))
    assert set(terms) <= set(metrics.VALUE_TERMS) and "ownership_loss" not in terms
    trainer.run(max_steps=4)
    with open(trainer.run_dir.metrics) as handle:
        header = handle.readline().strip().split(",")
    assert header == list(metrics.VALUE_FIELDS)


def test_pruning_keeps_the_newest_the_untrained_and_the_protected(tmp_path, config_text):
    config = loads_config(config_text)
    run = open_run_dir(tmp_path / "run")
    protected = {"ckpt-000000002.ckpt"}
    core = TrainingCore(config, run, algorithm="alphazero", protected=lambda: protected)
    assert core.resume() is None and core.step == 0 and core.saved_step is None
    for step in range(6):
        core.step = step
        core.save_checkpoint({"n": step})
    names = sorted(n for n in os.listdir(run.checkpoints) if n.startswith("ckpt-"))
    # keep_checkpoints = 2: steps 4 and 5; step 0 always; step 2 protected
    assert names == ["ckpt-000000000.ckpt", "ckpt-000000002.ckpt", "ckpt-000000004.ckpt",
                     "ckpt-000000005.ckpt"]
    assert os.path.samefile(run.latest, run.checkpoint(5)) and core.saved_step == 5
    again = TrainingCore(config, run, algorithm="alphazero")
    assert again.resume() == {"n": 5} and again.step == again.saved_step == 5


def test_channels_last_trains_the_same_network(tmp_path, config_text):
    # trainer.channels_last changes the weights' memory layout only: the same losses and the
    # same weights after a step as the default layout, and a checkpoint any loader reads.
    cores = {}
    for layout in (True, False):
        config = loads_config(config_text + f"channels_last = {str(layout).lower()}\n")
        run = open_run_dir(tmp_path / f"run{layout}")
        cores[layout] = TrainingCore(config, run, algorithm="alphazero")
    conv = next(m for m in cores[True].model.modules() if isinstance(m, torch.nn.Conv2d))
    assert conv.weight.is_contiguous(memory_format=torch.channels_last)
    assert not conv.weight.is_contiguous()
    x = torch.randint(0, 2, (16, cores[True].model.config.planes, 5, 5)).float()
    losses = {}
    for layout, core in cores.items():
        out = core.model.train().forward_train(x)
        losses[layout] = out.logits.logsumexp(1).mean() + out.value.pow(2).mean()
        core.optimizer.zero_grad()
        losses[layout].backward()
        core.optimizer.step()
    assert abs(float(losses[True].detach()) - float(losses[False].detach())) < 1e-5
    for (name, a), b in zip(cores[True].model.state_dict().items(),
                            cores[False].model.state_dict().values()):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6, msg=name)
    from network.checkpoint import save_checkpoint
    save_checkpoint(tmp_path / "cl.ckpt", cores[True].model, step=1)
    loaded = load_checkpoint(tmp_path / "cl.ckpt")
    for name, tensor in cores[False].model.state_dict().items():
        torch.testing.assert_close(loaded.model.state_dict()[name], tensor, rtol=1e-5, atol=1e-6)
