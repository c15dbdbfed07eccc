"""trainer.compile: the compiled training step computes what the eager one does (outputs and
gradients), its warm-up leaves the network as it was, and a failed compile trains eagerly with a
warning instead of stopping the trainer."""
from __future__ import annotations

import contextlib
import dataclasses
import logging

import pytest
import torch

from network.model import build_model
from rundata.config import ModelConfig
from trainer.compiled import TrainView, compile_training


def _network(seed=5):
    config = dataclasses.replace(ModelConfig(), board_size=5, encoding="katago", blocks=1,
                                 channels=8, global_pool_every=1, score_head=True,
                                 opponent_policy_head=True)
    model = build_model(config, seed=seed)
    return config, model


def _batch(config, n=16, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return (torch.rand(n, config.planes, config.board_size, config.board_size,
                       generator=generator) < 0.3).float()


def _loss(outputs):
    return sum((t.float() ** 2).mean() for t in outputs if isinstance(t, torch.Tensor))


def _grads(model):
    return [p.grad.detach().clone() for p in model.parameters()]


@pytest.mark.slow     # torch.compile's warm-up: about 40 s where its cache is cold
def test_the_compiled_step_computes_what_the_eager_one_does():
    config, model = _network()
    x = _batch(config)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    view = compile_training(model, torch.zeros_like(x), contextlib.nullcontext)
    assert view.compiled
    # the warm-up moved no weight, no batch-norm statistic and left no gradient behind
    after = model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert all(p.grad is None for p in model.parameters())

    twin = build_model(config, seed=5)               # the same weights, always eager
    twin.load_state_dict(before)
    model.train()
    twin.train()
    out_compiled, out_eager = view.forward_train(x), twin.forward_train(x)
    for a, b in zip(out_compiled, out_eager):
        if a is None:
            assert b is None
            continue
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
    _loss(out_compiled).backward()
    _loss(out_eager).backward()
    for a, b in zip(_grads(model), _grads(twin)):
        torch.testing.assert_close(a, b, rtol=1e-3, atol=1e-5)
    # training mode: both moved their batch-norm statistics the same way
    for (name, a), (_, b) in zip(model.named_buffers(), twin.named_buffers()):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6, msg=name)


def test_a_failed_compile_trains_eagerly_with_a_warning(monkeypatch, caplog):
    config, model = _network()

    def broken(fn, **kwargs):
        def call(*args):
            raise RuntimeError("no C++ compiler\nfound")
        return call

    monkeypatch.setattr(torch, "compile", broken)
    with caplog.at_level(logging.WARNING):
        view = compile_training(model, torch.zeros(4, config.planes, 5, 5), contextlib.nullcontext)
    assert not view.compiled
    assert any("torch.compile could not compile the training step (RuntimeError: no C++ "
               "compiler found)" in r.getMessage() for r in caplog.records)
    x = _batch(config, n=4)
    torch.testing.assert_close(view.forward_train(x).logits, model.forward_train(x).logits)


def test_the_view_is_the_network_for_everything_else():
    config, model = _network()
    view = TrainView(model)
    assert not view.compiled and view.parameters is not None
    view.eval()
    assert not model.training
    x = _batch(config, n=3)
    logits, value = view(x)
    expected = model(x)
    assert torch.equal(logits, expected[0]) and torch.equal(value, expected[1])


@pytest.mark.parametrize("compile_on", [False, True])
def test_the_trainer_config_key(compile_on):
    from rundata.config import loads_config

    config = loads_config(f"[trainer]\ncompile = {str(compile_on).lower()}\n")
    assert config.trainer.compile is compile_on


def test_the_trainers_compile_runs_under_its_busy_heartbeat(tmp_path, monkeypatch,
                                                          small_trainer_config):
    # the compile (a minute or more on a slow or loaded CPU) keeps the heartbeat fresh, so the
    # supervisor does not take a starting trainer for stuck (tests/system/supervision/test_busy_start.py)
    import trainer.compiled as compiled
    from rundata.config import loads_config
    from rundata.rundir import StatusFile, open_run_dir
    from trainer.factory import make_trainer

    phases = []

    class Status(StatusFile):
        def busy(self, what, limit_s):
            phases.append(("enter", what, limit_s))
            inner = super().busy(what, limit_s)

            class Watch:
                def __enter__(self):
                    return inner.__enter__()

                def __exit__(self, *exc):
                    phases.append(("exit", what))
                    return inner.__exit__(*exc)
            return Watch()

    def fake_compile(model, example, precision_context):
        phases.append(("compile", tuple(example.shape)))
        return compiled.TrainView(model)

    monkeypatch.setattr(compiled, "compile_training", fake_compile)
    config = loads_config(small_trainer_config() + "compile = true\n[cluster]\nbusy_limit_s = 1234\n")
    run_dir = open_run_dir(tmp_path / "run")
    make_trainer(config, run_dir, status=Status(run_dir, "train"))
    assert [p[0] for p in phases] == ["enter", "compile", "exit"]
    # beating "busy" for at most the supervisor's bound on it
    assert phases[0][1:] == ("compiling the training step", 1234.0)
    assert phases[1][1][0] == config.trainer.batch_size
