"""Fixtures of the network's unit tests."""
import pytest
import torch

from network.model import build_model


def _trained_like(config, seed=0):
    """A network whose batch norms carry non-trivial statistics and whose policy is not flat
    (an untrained one is nearly uniform, which makes top-1 agreement meaningless)."""
    model = build_model(config, seed=seed)
    generator = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.running_mean.copy_(torch.randn(module.num_features, generator=generator) * 0.1)
                module.running_var.copy_(torch.rand(module.num_features, generator=generator) + 0.5)
        model.policy_fc.weight.mul_(8.0)
    return model.eval()


@pytest.fixture(scope="session")
def trained_like():
    """trained_like(config, seed=0) -> an eval-mode network with realistic statistics."""
    return _trained_like
