"""tools/cores_model.py: the throughput model behind the docs' advice for more cores."""
import importlib.util
import sys
from pathlib import Path

import pytest

SPEC = importlib.util.spec_from_file_location(
    "cores_model", Path(__file__).resolve().parents[2] / "tools" / "cores_model.py")
model = importlib.util.module_from_spec(SPEC)
sys.modules["cores_model"] = model            # dataclasses look their module up there
SPEC.loader.exec_module(model)


def test_scaling_keeps_the_measured_efficiency_per_doubling():
    assert model.scaled(100.0, 200.0, 8) == pytest.approx(800.0)        # perfect
    assert model.scaled(100.0, 160.0, 2) == pytest.approx(160.0)
    assert model.scaled(100.0, 160.0, 4) == pytest.approx(100 * 4 * 0.8 ** 2)
    assert model.scaled(100.0, 300.0, 2) == pytest.approx(200.0)        # no superlinear


def test_two_cores_give_the_split_the_quickstart_runs():
    # a server thread serving 20,000 evals/s, a search 200,000 a core: the worker needs 0.1
    plan = model.allocate(2, (20_000, 32_000), 200_000, (1000, 1600), 0.03, 8)
    assert (plan.server_threads, plan.workers, plan.trainer_threads) == (1, 1, 1)
    assert plan.cores_used == pytest.approx(2.3)                  # 1 + 1 + 0.1 + 0.2, shared
    assert plan.evals_per_s == pytest.approx(20_000 * 2 / 2.3)


def test_more_cores_go_where_the_bottleneck_is():
    # training is the bottleneck (1000 samples/s a thread for 600 positions/s at 8 samples):
    # trainer threads grow before server threads
    plan = model.allocate(8, (20_000, 36_000), 200_000, (1000, 1800), 0.03, 8)
    assert plan.trainer_threads > plan.server_threads
    assert plan.server_threads + plan.trainer_threads <= 8
    # the chosen plan is the best of all: no allocation trains more positions (brute force,
    # written here apart from the tool's loop)
    best = plan.trained_per_s
    for t in range(1, 8):
        for k in range(1, 9 - t):
            evals = model.scaled(20_000, 36_000, t)
            share = min(1.0, 8 / (t + k + evals / 200_000 + 0.2))
            trained = min(evals * share * 0.03, model.scaled(1000, 1800, k) * share / 8)
            assert trained <= best + 1e-6


def test_too_few_cores_is_said():
    with pytest.raises(ValueError, match="do not fit a server thread and a trainer thread"):
        model.allocate(1, (20_000, 36_000), 200_000, (1000, 1800), 0.03, 8)
