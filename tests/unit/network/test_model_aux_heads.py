"""The training-only score, opponent's-reply and soft policy heads: forward_train's outputs, a served
function (forward, fused, exported) that does not change with them, and checkpoints written
before the heads existed, which still load."""
import dataclasses

import numpy as np
import pytest
import torch

from network.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from network.model import TrainOutputs, build_model, fuse_for_inference
from network.runner import ModelRunner
from rundata.config import ModelConfig

torch.set_num_threads(1)
TOL = dict(rtol=1e-4, atol=1e-4)
AUX = dict(score_head=True, lead_head=True, opponent_policy_head=True, soft_policy_head=True)


def planes(count, config, seed=0):
    rng = np.random.default_rng(seed)
    shape = (count, config.planes, config.board_size, config.board_size)
    return (rng.random(shape) < 0.3).astype(np.uint8)


def served(model, x):
    with torch.no_grad():
        logits, values = model.eval()(torch.from_numpy(x).float())
    return logits.numpy(), values.numpy()


def test_forward_train_outputs():
    config = ModelConfig(board_size=7, encoding="katago", blocks=2, channels=8,
                         global_pool_every=2, **AUX)
    model = build_model(config, seed=0)
    out = model.forward_train(torch.from_numpy(planes(5, config)).float())
    assert isinstance(out, TrainOutputs)
    assert out.logits.shape == out.opponent_policy.shape == out.soft_policy.shape == (5, 50)
    assert not torch.equal(out.soft_policy, out.logits)      # an output of its own
    assert out.value.shape == out.score.shape == out.lead.shape == (5,)
    assert out.ownership.shape == (5, 49)
    assert torch.all(out.score == 0)          # the score's last layer starts at zero: even game
    assert torch.all(out.lead == 0)
    with torch.no_grad():
        model.score_fc2.bias.fill_(0.5)
        model.lead_fc2.bias.fill_(-0.25)
        # the head's output is in points: the last layer's unit is the board's area; the lead
        # is its own output
        both = model.forward_train(torch.zeros(1, 16, 7, 7))
        assert torch.allclose(both.score, torch.tensor([0.5 * 49]))
        assert torch.allclose(both.lead, torch.tensor([-0.25 * 49]))
    plain = build_model(ModelConfig(board_size=7, blocks=1, channels=8, ownership_head=False))
    out = plain.forward_train(torch.zeros(2, 17, 7, 7))
    assert out.ownership is None and out.score is None and out.opponent_policy is None
    assert out.lead is None and out.soft_policy is None


def test_the_served_function_ignores_the_aux_heads():
    # The aux heads are built after everything else, so the same seed gives the same served net.
    base = ModelConfig(board_size=9, encoding="katago", blocks=2, channels=16, global_pool_every=2)
    with_aux = dataclasses.replace(base, **AUX)
    a, b = build_model(base, seed=4), build_model(with_aux, seed=4)
    x = planes(6, base)
    for got, want in zip(served(b, x), served(a, x)):
        np.testing.assert_array_equal(got, want)
    fused = fuse_for_inference(b)
    for got, want in zip(served(fused, x), served(b, x)):
        np.testing.assert_allclose(got, want, **TOL)
    for backend in ("torch", "onnx"):
        runner = ModelRunner(b.eval(), backend=backend, capacity=4)
        for got, want in zip(runner.forward(x), served(b, x)):
            np.testing.assert_allclose(got, want, **TOL)


def test_checkpoints_with_aux_heads_round_trip(tmp_path):
    config = ModelConfig(board_size=7, encoding="katago", blocks=1, channels=8, **AUX)
    model = build_model(config, seed=1)
    save_checkpoint(tmp_path / "a.ckpt", model, step=3)
    ckpt = load_checkpoint(tmp_path / "a.ckpt", expect=config)
    assert ckpt.config == config and ckpt.model.score_fc1 is not None
    x = torch.from_numpy(planes(3, config)).float()
    model.eval()
    with torch.no_grad():
        for got, want in zip(ckpt.model.forward_train(x), model.forward_train(x)):
            assert got is not None and torch.equal(got, want)


def test_a_checkpoint_from_before_the_aux_heads_loads(tmp_path):
    config = ModelConfig(board_size=7, blocks=2, channels=8)
    model = build_model(config, seed=2)
    path = tmp_path / "old.ckpt"
    save_checkpoint(path, model, step=5)
    payload = torch.load(path, weights_only=True)
    old_config = {k: v for k, v in payload["model_config"].items()
                  if k not in ("score_head", "lead_head", "opponent_policy_head",
                               "soft_policy_head", "block")}
    assert set(old_config) == {"board_size", "encoding", "blocks", "channels", "global_pool_every",
                               "policy_channels", "value_channels", "value_hidden",
                               "ownership_head"}
    torch.save(dict(payload, model_config=old_config), path)
    ckpt = load_checkpoint(path, expect=config)
    assert ckpt.config == config and not ckpt.config.score_head
    assert not ckpt.config.opponent_policy_head and ckpt.step == 5
    assert ckpt.config.block == "residual"
    assert not ckpt.config.soft_policy_head and ckpt.model.soft_policy_fc is None
    x = planes(2, config)
    for got, want in zip(served(ckpt.model, x), served(model, x)):
        np.testing.assert_array_equal(got, want)


def test_a_checkpoint_from_before_the_lead_head_loads_without_it(tmp_path):
    config = ModelConfig(board_size=7, blocks=1, channels=8, score_head=True)
    model = build_model(config, seed=4)
    path = tmp_path / "old.ckpt"
    save_checkpoint(path, model, step=9)
    payload = torch.load(path, weights_only=True)
    old_config = {k: v for k, v in payload["model_config"].items() if k != "lead_head"}
    torch.save(dict(payload, model_config=old_config), path)
    ckpt = load_checkpoint(path)
    assert ckpt.config.score_head and not ckpt.config.lead_head and ckpt.step == 9
    out = ckpt.model.forward_train(torch.from_numpy(planes(2, config)).float())
    assert out.score is not None and out.lead is None


@pytest.mark.parametrize("head,base", [("score_head", {}), ("opponent_policy_head", {}),
                                       ("soft_policy_head", {}),
                                       ("lead_head", {"score_head": True})])
def test_weights_without_a_head_the_config_names_are_refused(tmp_path, head, base):
    model = build_model(ModelConfig(board_size=5, blocks=1, channels=8, **base), seed=0)
    path = tmp_path / "x.ckpt"
    save_checkpoint(path, model, step=1)
    payload = torch.load(path, weights_only=True)
    torch.save(dict(payload, model_config=dict(payload["model_config"], **{head: True})), path)
    with pytest.raises(CheckpointError) as info:
        load_checkpoint(path)
    assert head.replace("_head", "") in str(info.value)
