"""The weight average follows its formula, keeps integer buffers as copies, saves and restores."""
from __future__ import annotations

import pytest
import torch

from trainer.weight_average import WeightAverage


def _net():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))


def test_the_average_is_the_formula_over_the_updates():
    net = _net()
    avg = WeightAverage(net, 0.9, warmup=False)
    expected = net[0].weight.detach().clone()
    for step in range(5):
        with torch.no_grad():
            net[0].weight.add_(float(step + 1))
            net[1].num_batches_tracked.add_(1)
        avg.update(net)
        expected = 0.9 * expected + 0.1 * net[0].weight.detach()
    assert torch.allclose(avg.state["0.weight"], expected, atol=1e-6)
    assert int(avg.state["1.num_batches_tracked"]) == 5


def test_warmup_ramps_the_decay():
    avg = WeightAverage(_net(), 0.999)
    decays = []
    for _ in range(3):
        decays.append(avg.current_decay())
        avg.updates += 1
    assert decays == pytest.approx([1 / 10, 2 / 11, 3 / 12])


def test_save_restore_and_refuse_another_shape():
    net = _net()
    avg = WeightAverage(net, 0.5)
    with torch.no_grad():
        net[0].weight.mul_(3.0)
    avg.update(net)
    again = WeightAverage(_net(), 0.5)
    again.load_state_dict(avg.state_dict())
    assert again.updates == 1 and torch.equal(again.state["0.weight"], avg.state["0.weight"])
    model = again.averaged_model(net)
    assert torch.equal(model[0].weight, avg.state["0.weight"]) and not model.training
    other = WeightAverage(torch.nn.Sequential(torch.nn.Linear(4, 2), torch.nn.BatchNorm1d(2)), 0.5)
    with pytest.raises(ValueError, match="does not match"):
        other.load_state_dict(avg.state_dict())
    with pytest.raises(ValueError):
        WeightAverage(net, 1.0)
