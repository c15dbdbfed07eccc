"""KataGo's auxiliary soft policy target: the target raised to the power 1/4 by hand, the loss
term recomputed from the batch the objective drew, its weight, and what it trains (the shared
policy features, not the served logits' own layer)."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from network.model import build_model
from rundata.config import ModelConfig, loads_config
from trainer.alphazero import AlphaZeroObjective, soft_policy_target
from trainer.window import ReplayWindow, block_from_games

torch.set_num_threads(1)
SIZE, KOMI = 5, 0.5
TRAINER = loads_config("""
[trainer]
batch_size = 32
optimizer = "adamw"
lr = 0.003
weight_decay = 0.0
device = "cpu"
precision = "fp32"
""").trainer
CONFIG = ModelConfig(board_size=SIZE, encoding="katago", blocks=1, channels=16, value_hidden=16,
                     soft_policy_head=True)
CPU = torch.device("cpu")


def num(t) -> float:
    return float(t.detach())


@pytest.fixture
def window(game_record, random_moves):
    rng = np.random.default_rng(5)
    records = [game_record(SIZE, KOMI, random_moves(SIZE, KOMI, rng, length=n), 0, seed=i)
               for i, n in enumerate((12, 9, 15))]
    window = ReplayWindow(SIZE, KOMI, "katago", window="fixed", window_size=10_000)
    window.add(block_from_games(records, SIZE, "hand"))
    return window


def test_the_soft_target_by_hand():
    floor = 1e-7 ** 0.25                                    # 0.0178: an unvisited move's share
    target = torch.tensor([[1.0, 0.0, 0.0, 0.0],
                           [0.5, 0.5, 0.0, 0.0],
                           [0.0, 0.0, 0.0, 0.0]])
    soft = soft_policy_target(target).numpy()
    one = (1 + 1e-7) ** 0.25
    np.testing.assert_allclose(soft[0], np.array([one, floor, floor, floor]) / (one + 3 * floor),
                               rtol=1e-5)
    half = (0.5 + 1e-7) ** 0.25
    np.testing.assert_allclose(soft[1], np.array([half, half, floor, floor]) / (2 * half + 2 * floor),
                               rtol=1e-5)
    np.testing.assert_allclose(soft[2], np.full(4, 0.25), rtol=1e-6)      # no target: uniform
    # flatter than the target, the order of the moves kept
    assert soft[0, 0] < 1 and soft[0, 1] > 0.01
    peaked = torch.tensor([[0.7, 0.2, 0.1, 0.0]])
    s = soft_policy_target(peaked)[0].numpy()
    assert s[0] > s[1] > s[2] > s[3] and s[0] < 0.7 and s[3] > 0.005


def test_the_term_is_the_cross_entropy_to_the_soft_target_over_the_full_searches(window):
    model = build_model(CONFIG, seed=0)
    objective = AlphaZeroObjective(TRAINER)
    buffers = window.batch_buffers(TRAINER.batch_size, CONFIG.planes)
    rows, loss, terms = objective.loss(model, window, np.random.default_rng(0), buffers, CPU)
    with torch.no_grad():
        out = model.forward_train(torch.from_numpy(buffers["planes"]).float())
    pi = buffers["policy"].astype(np.float64)
    w = buffers["policy_weight"].astype(np.float64)
    assert 0 < w.sum() <= rows and np.allclose(pi[w > 0].sum(1), 1.0, atol=1e-5)
    soft = (pi + 1e-7) ** 0.25
    soft /= soft.sum(1, keepdims=True)
    logits = out.soft_policy.double().numpy()
    log_p = logits - logits.max(1, keepdims=True)
    log_p -= np.log(np.exp(log_p).sum(1, keepdims=True))
    expected = -((soft * log_p).sum(1) * w).sum() / max(1.0, w.sum())
    assert num(terms["soft_policy_loss"]) == pytest.approx(expected, rel=1e-4)
    # an untrained head over 26 moves: near the soft target's cross-entropy to uniform
    assert 2.0 < expected < 5.0
    rest = (num(terms["policy_loss"]) + TRAINER.value_weight * num(terms["value_loss"])
            + TRAINER.ownership_weight * num(terms["ownership_loss"]))
    assert TRAINER.soft_policy_weight == 8.0                # KataGo's weight, the default
    assert num(loss) == pytest.approx(rest + 8.0 * expected, rel=1e-4)


def test_a_zero_weight_or_no_head_leaves_it_out(window):
    buffers = window.batch_buffers(16, CONFIG.planes)
    off = AlphaZeroObjective(dataclasses.replace(TRAINER, soft_policy_weight=0.0))
    model = build_model(CONFIG, seed=1)
    _, loss, terms = off.loss(model, window, np.random.default_rng(2), buffers, CPU)
    assert num(terms["soft_policy_loss"]) == 0.0
    loss.backward()
    assert model.soft_policy_fc.weight.grad is None          # not in the graph
    plain = build_model(dataclasses.replace(CONFIG, soft_policy_head=False), seed=1)
    _, loss_plain, terms = AlphaZeroObjective(TRAINER).loss(
        plain, window, np.random.default_rng(2), buffers, CPU)
    assert num(terms["soft_policy_loss"]) == 0.0
    # the same weights apart from the head, the same batch: the same loss without the term
    assert num(loss_plain) == pytest.approx(num(loss), rel=1e-5)


def test_it_trains_the_shared_policy_features_and_learns_the_soft_target(window):
    model = build_model(CONFIG, seed=3)
    objective = AlphaZeroObjective(TRAINER)
    buffers = window.batch_buffers(TRAINER.batch_size, CONFIG.planes)
    _, _, terms = objective.loss(model, window, np.random.default_rng(0), buffers, CPU)
    terms["soft_policy_loss"].backward()
    assert model.soft_policy_fc.weight.grad.abs().sum() > 0
    assert model.policy_conv.weight.grad.abs().sum() > 0     # the features both outputs read
    assert model.policy_fc.weight.grad is None               # the served output's own layer: no
    optimizer = torch.optim.AdamW(model.parameters(), lr=TRAINER.lr, weight_decay=0.0)
    history = []
    for _ in range(60):      # the same batch each time: the same seed draws it again
        _, loss, terms = objective.loss(model, window, np.random.default_rng(0), buffers, CPU)
        history.append(num(terms["soft_policy_loss"]))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    # the soft target's own entropy is the floor of its cross-entropy
    pi = buffers["policy"].astype(np.float64)
    w = buffers["policy_weight"].astype(np.float64)
    soft = (pi + 1e-7) ** 0.25
    soft /= soft.sum(1, keepdims=True)
    entropy = -((soft * np.log(soft)).sum(1) * w).sum() / max(1.0, w.sum())
    assert np.isfinite(history).all()
    assert history[-1] - entropy < 0.5 * (history[0] - entropy), (history[::10], entropy)
