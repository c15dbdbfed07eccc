"""trainer.precision: bf16 autocast for the training forward pass (trainer.training_core.autocast). The
AlphaZero loss under CPU bf16 autocast matches the fp32 loss within 2% (bf16 keeps 8 bits of
mantissa: relative error about 2**-8 per operation, a few times that through the tower), and
its gradients point the same way (cosine similarity > 0.98)."""
import contextlib

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from network import cpu_isa
from network.model import build_model
from rundata.config import ConfigError, ModelConfig, loads_config
from trainer import training_core as core
from trainer.alphazero import policy_terms

CPU = torch.device("cpu")


def batch(config, count=64, seed=0):
    rng = np.random.default_rng(seed)
    n = config.board_size
    x = torch.from_numpy((rng.random((count, config.planes, n, n)) < 0.3).astype(np.float32))
    target = torch.from_numpy(rng.dirichlet(np.ones(n * n + 1), size=count).astype(np.float32))
    z = torch.from_numpy(rng.choice([-1.0, 1.0], size=count).astype(np.float32))
    return x, target, z


def loss_and_grads(model, x, target, z, precision):
    model.zero_grad()
    model.train()
    with core.autocast(CPU, precision):
        out = model.forward_train(x)
    logits, value = out.logits, out.value
    policy_loss, _ = policy_terms(logits.float(), target, torch.ones(len(x)))
    loss = policy_loss + F.mse_loss(value.float(), z)
    loss.backward()
    grads = torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])
    return loss.item(), grads.clone()


def test_bf16_loss_and_gradients_match_fp32():
    config = ModelConfig(board_size=9, blocks=2, channels=32)
    x, target, z = batch(config)
    model = build_model(config, seed=0)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    loss32, grad32 = loss_and_grads(model, x, target, z, "fp32")
    model.load_state_dict(state)                      # batch norm statistics as before
    loss16, grad16 = loss_and_grads(model, x, target, z, "bf16")
    assert loss16 == pytest.approx(loss32, rel=0.02)
    assert loss16 != loss32                           # bf16 did run: the rounding shows
    cosine = float(F.cosine_similarity(grad32, grad16, dim=0))
    assert cosine > 0.98, cosine


def test_the_autocast_choice(monkeypatch):
    assert isinstance(core.autocast(CPU, "fp32"), contextlib.nullcontext)
    assert isinstance(core.autocast(CPU, "bf16"), torch.autocast)
    monkeypatch.setattr(core, "cpu_has_bf16", lambda: False)
    assert isinstance(core.autocast(CPU, "auto"), contextlib.nullcontext)
    monkeypatch.setattr(core, "cpu_has_bf16", lambda: True)
    assert isinstance(core.autocast(CPU, "auto"), torch.autocast)


def test_cpu_bf16_detection_reads_the_flags(monkeypatch):
    monkeypatch.setattr(cpu_isa, "cpu_flags", lambda: frozenset({"avx512f", "avx512_bf16"}))
    assert cpu_isa.cpu_has_bf16()
    monkeypatch.setattr(cpu_isa, "cpu_flags", lambda: frozenset({"avx512f", "avx512_vnni"}))
    assert not cpu_isa.cpu_has_bf16() and cpu_isa.cpu_has_vnni()


def test_precision_is_checked_where_the_config_is_read():
    assert loads_config("[trainer]\nprecision = \"bf16\"\n").trainer.precision == "bf16"
    with pytest.raises(ConfigError, match="trainer.precision"):
        loads_config("[trainer]\nprecision = \"fp8\"\n")
