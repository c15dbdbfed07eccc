"""The CUDA paths of the runner and the server, against the plain fp32 CPU module: pinned staging,
non-blocking copies, bf16/fp16 autocast, CUDA graphs padded to the captured size, hot reload on
the GPU, and `fastgo bench server --device cuda`. Skipped where torch sees no CUDA device.

Tolerances: fp32 on CUDA may use TF32 convolutions (10-bit mantissa), so 2e-2 absolute on
logits and values of these small nets; bf16 autocast keeps 8 bits, so 0.1."""
import json
import subprocess
import sys

import numpy as np
import pytest
import torch

from network.checkpoint import save_checkpoint
from network.model import build_model
from network.runner import ModelRunner, check_canaries
from rundata.config import ModelConfig
from supervision.role_process import ServerProcess
from wire.client import InferenceClient

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")

MODEL = ModelConfig(board_size=9, blocks=2, channels=32, global_pool_every=2)
FP32 = dict(rtol=0, atol=2e-2)
BF16 = dict(rtol=0, atol=1e-1)


def reference(model, x):
    with torch.no_grad():
        logits, values = model.eval().cpu()(torch.from_numpy(x).float())
    return logits.numpy(), values.numpy()


def planes(seed, count, config=MODEL):
    rng = np.random.default_rng(seed)
    return (rng.random((count, config.planes, config.board_size, config.board_size)) < 0.3).astype(np.uint8)


@pytest.mark.parametrize("precision,tol", [("fp32", FP32), ("bf16", BF16), ("fp16", BF16)])
@pytest.mark.parametrize("graphs", [False, True], ids=["eager", "graphs"])
def test_runner_matches_cpu_reference(precision, tol, graphs):
    model = build_model(MODEL, seed=3)
    runner = ModelRunner(model, device="cuda", precision=precision, capacity=32,
                         cuda_graphs=graphs, graph_batches=(8, 32))
    check_canaries(runner)
    for seed, count in ((1, 32), (2, 5), (3, 8), (4, 17), (5, 1)):   # padded and exact sizes
        x = planes(seed, count)
        logits, values = runner.forward(x)
        want_logits, want_values = reference(model, x)
        assert logits.shape == want_logits.shape and values.shape == want_values.shape
        assert logits.dtype == np.float32 and values.dtype == np.float32
        np.testing.assert_allclose(logits, want_logits, **tol)
        np.testing.assert_allclose(values, want_values, **tol)
    if graphs:
        assert sorted(runner._graphs) == [8, 32]


def test_outputs_are_not_overwritten_by_the_next_run():
    model = build_model(MODEL, seed=4)
    runner = ModelRunner(model, device="cuda", precision="fp32", capacity=16, cuda_graphs=True)
    a, b = planes(10, 16), planes(11, 16)
    logits_a, values_a = runner.forward(a)
    kept = logits_a.copy(), values_a.copy()
    runner.forward(b)
    np.testing.assert_array_equal(logits_a, kept[0])
    np.testing.assert_array_equal(values_a, kept[1])


def test_both_staging_buffers_run_on_cuda():
    model = build_model(MODEL, seed=5)
    runner = ModelRunner(model, device="cuda", precision="fp32", capacity=8)
    x0, x1 = planes(20, 8), planes(21, 6)
    runner.staging(8, 0)[:] = x0
    runner.staging(6, 1)[:] = x1
    out1 = runner.run(6, buffer=1)
    out0 = runner.run(8, buffer=0)
    for (logits, values), x in ((out0, x0), (out1, x1)):
        want_logits, want_values = reference(model, x)
        np.testing.assert_allclose(logits, want_logits, **FP32)
        np.testing.assert_allclose(values, want_values, **FP32)


@pytest.mark.parametrize("overlap", [False, True], ids=["inline", "overlap"])
def test_cuda_server_serves_and_hot_reloads(tmp_path, overlap, write_config):
    models = {1: build_model(MODEL, seed=1), 2: build_model(MODEL, seed=2)}
    live = tmp_path / "live.ckpt"
    save_checkpoint(live, models[1], step=1)
    config = write_config(tmp_path / "serve.toml", {
        "blocks": MODEL.blocks, "channels": MODEL.channels, "global_pool_every": MODEL.global_pool_every}, {
        "endpoint": "tcp://127.0.0.1:*", "max_batch": 32, "max_wait_us": 1000, "device": "cuda",
        "precision": "bf16", "cuda_graphs": True, "graph_batches": [8, 32], "overlap": overlap,
        "checkpoints": {"current": str(live)}})
    with ServerProcess(config) as server, InferenceClient(server.endpoint, timeout_s=60) as client:
        for version in (1, 2):
            if version == 2:
                save_checkpoint(tmp_path / "next.ckpt", models[2], step=2)
                assert client.reload("current", str(tmp_path / "next.ckpt")) == 2
            tickets = [(client.submit(x), x) for x in (planes(30 + version, 3), planes(40 + version, 20))]
            for ticket, x in tickets:
                logits, values = client.receive(ticket)
                assert client.model_version == version
                want_logits, want_values = reference(models[version], x)
                np.testing.assert_allclose(logits, want_logits, **BF16)
                np.testing.assert_allclose(values, want_values, **BF16)
        stats = client.stats()
        assert stats["errors_total"] == 0


def test_bench_server_runs_unchanged_on_cuda(tmp_path):
    out = tmp_path / "bench.json"
    result = subprocess.run(
        [sys.executable, "-m", "fastgo_cli.main", "bench", "server", "--device", "cuda", "--net", "b2c32",
         "--batch", "64", "--clients", "2", "--seconds", "1", "--rounds", "1", "--json", str(out)],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    data = json.loads(out.read_text())
    assert data["device"].startswith("cuda")
    assert data["server_evals_per_s"] > 0 and data["raw_evals_per_s"] > 0
