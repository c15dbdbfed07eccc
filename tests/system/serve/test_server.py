"""A real server process on a loopback port, real client sockets: every row comes back equal to
a direct forward pass of the same weights (within TOL), to the right request, from the right
slot, with the version that answered."""
import threading
import time

import numpy as np
import pytest
import torch

from network.checkpoint import save_checkpoint
from network.model import build_model
from rundata.config import ModelConfig
from supervision.role_process import ServerProcess
from wire.client import InferenceClient, ServerError

torch.set_num_threads(1)
# The server folds batch norm and uses channels_last; the reference is the plain fp32 module.
TOL = dict(rtol=1e-4, atol=1e-4)
MODEL = ModelConfig(board_size=9, blocks=1, channels=8)


def random_planes(rng, count, config=MODEL):
    shape = (count, config.planes, config.board_size, config.board_size)
    return (rng.random(shape) < 0.3).astype(np.uint8)


@pytest.fixture(scope="module", params=[("torch", False), ("torch", True), ("onnx", True)],
                ids=["inline", "overlap", "onnx"])
def served(tmp_path_factory, request, write_config):
    backend, overlap = request.param
    tmp = tmp_path_factory.mktemp("server")
    models = {"current": build_model(MODEL, seed=10), "best": build_model(MODEL, seed=11)}
    save_checkpoint(tmp / "current.ckpt", models["current"], step=5)
    save_checkpoint(tmp / "best.ckpt", models["best"], step=6)
    config = write_config(tmp / "serve.toml", {"blocks": 1, "channels": 8}, {
        "endpoint": "tcp://127.0.0.1:*", "max_batch": 16, "max_wait_us": 2000,
        "max_request_positions": 64, "threads": 1, "device": "cpu", "overlap": overlap, "backend": backend,
        "slots": ["current", "best"],
        "checkpoints": {"current": str(tmp / "current.ckpt"), "best": str(tmp / "best.ckpt")}})
    with ServerProcess(config) as server:
        yield server, models


def test_rows_match_direct_forward_across_clients(served, forward):
    server, models = served
    results, failures = [], []

    def client_thread(index):
        rng = np.random.default_rng(index)
        try:
            with InferenceClient(server.endpoint, timeout_s=20) as client:
                for _ in range(8):
                    slot = "best" if index % 2 else "current"
                    xa = random_planes(rng, int(rng.integers(1, 21)))
                    xb = random_planes(rng, int(rng.integers(1, 9)))
                    ta, tb = client.submit(xa, slot=slot), client.submit(xb, slot=slot)
                    for ticket, x in ((tb, xb), (ta, xa)):          # receive in reverse order
                        logits, values = client.receive(ticket)
                        results.append((slot, client.model_version, x, np.array(logits), np.array(values)))
        except Exception as err:  # surfaced in the main thread
            failures.append(err)

    threads = [threading.Thread(target=client_thread, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not failures, failures
    assert len(results) == 4 * 8 * 2
    for slot, version, x, logits, values in results:
        assert version == {"current": 5, "best": 6}[slot]
        want_logits, want_values = forward(models[slot], x)
        assert logits.shape == want_logits.shape
        np.testing.assert_allclose(logits, want_logits, **TOL)
        np.testing.assert_allclose(values, want_values, **TOL)


def test_batches_are_gathered_and_counted(served):
    server, _ = served
    rng = np.random.default_rng(99)
    with InferenceClient(server.endpoint, timeout_s=20) as client:
        before = client.stats()
        tickets = [client.submit(random_planes(rng, 4)) for _ in range(8)]   # 32 positions
        for ticket in tickets:
            client.receive(ticket)
        after = client.stats()
    assert after["requests"] - before["requests"] == 8
    assert after["positions"] - before["positions"] == 32
    batches = after["batches"] - before["batches"]
    assert 2 <= batches <= 8           # max_batch 16: at least two batches (gathering: see below)
    assert after["versions"] == {"current": 5, "best": 6}
    runner = after["runner"]
    assert runner["backend"] in ("torch-fp32", "onnx-fp32")
    assert runner["layout"] == {"torch-fp32": "channels_last", "onnx-fp32": "onnx-fp32"}[runner["backend"]]
    assert 0 < after["mean_batch_fill"] <= 1
    assert after["mean_batch_size"] == after["positions"] / after["batches"]
    # Work was done: every batch ran a forward pass, every request waited some time.
    for key in ("queue_wait_ms_mean", "forward_ms_mean", "overhead_us_per_batch",
                "overhead_cpu_us_per_batch"):
        assert after[key] > 0, key
    assert after["forward_s_total"] > before["forward_s_total"]


def test_requests_are_gathered_into_full_batches(tmp_path, write_config):
    # A batch wait far longer than the test: batches form only when max_batch positions are
    # queued, so 8 requests of 4 positions make exactly two batches of 16, whatever the timing.
    config = write_config(tmp_path / "serve.toml", {"blocks": 1, "channels": 8}, {
        "endpoint": "tcp://127.0.0.1:*", "max_batch": 16, "max_wait_us": 10_000_000, "threads": 1})
    rng = np.random.default_rng(3)
    with ServerProcess(config) as server, InferenceClient(server.endpoint, timeout_s=20) as client:
        tickets = [client.submit(random_planes(rng, 4)) for _ in range(8)]
        for ticket in tickets:
            client.receive(ticket)
        stats = client.stats()
    assert (stats["requests"], stats["positions"], stats["batches"]) == (8, 32, 2)
    assert stats["mean_batch_size"] == 16 and stats["mean_batch_fill"] == 1.0


def test_a_partial_batch_waits_only_while_a_recent_request_size_could_join_it(tmp_path, write_config):
    # max_batch 16 and a wait of 2 s: requests of 12 positions cannot share a batch, so once
    # 12 is the smallest recent size a request of 12 runs at once; after a request of 2 it
    # waits for the deadline again (12 + 2 fit in 16).
    config = write_config(tmp_path / "serve.toml", {"blocks": 1, "channels": 8}, {
        "endpoint": "tcp://127.0.0.1:*", "max_batch": 16, "max_wait_us": 2_000_000, "threads": 1})
    rng = np.random.default_rng(4)
    with ServerProcess(config) as server, InferenceClient(server.endpoint, timeout_s=20) as client:
        for _ in range(3):
            start = time.monotonic()
            client.receive(client.submit(random_planes(rng, 12)))
            assert time.monotonic() - start < 1.0
        client.receive(client.submit(random_planes(rng, 2)))
        start = time.monotonic()
        client.receive(client.submit(random_planes(rng, 12)))
        assert time.monotonic() - start >= 1.9          # the deadline, not earlier
        stats = client.stats()
    assert (stats["requests"], stats["positions"], stats["batches"]) == (5, 50, 5)


def test_bad_requests_get_errors_and_others_are_served(served, forward):
    server, models = served
    rng = np.random.default_rng(5)
    with InferenceClient(server.endpoint, timeout_s=20) as client:
        cases = [
            (lambda: client.submit(random_planes(rng, 2), slot="nope"), "unknown_slot"),
            (lambda: client.submit(random_planes(rng, 2, ModelConfig(board_size=7))), "bad_shape"),
            (lambda: client.submit(random_planes(rng, 2, ModelConfig(encoding="liberty"))), "bad_shape"),
            (lambda: client.submit(random_planes(rng, 65)), "too_large"),
        ]
        for submit, code in cases:
            ticket = submit()
            with pytest.raises(ServerError) as info:
                client.receive(ticket)
            assert info.value.code == code
        x = random_planes(rng, 3)
        logits, _ = client.evaluate(x)
        np.testing.assert_allclose(logits, forward(models["current"], x)[0], **TOL)
        assert client.stats()["errors"]["bad_shape"] >= 2


def test_a_vanished_client_costs_only_its_own_requests(served, forward):
    server, models = served
    rng = np.random.default_rng(8)
    with InferenceClient(server.endpoint, timeout_s=20) as client:
        before = client.stats()
        gone = InferenceClient(server.endpoint, timeout_s=20)
        for _ in range(3):
            gone.submit(random_planes(rng, 16))
        # The server must really have taken the three before their client vanishes.
        deadline = time.monotonic() + 20
        while client.stats()["requests"] - before["requests"] < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        gone.close()                         # its replies (some may still be due) go nowhere
        x = random_planes(rng, 5)
        logits, _ = client.evaluate(x)
        np.testing.assert_allclose(logits, forward(models["current"], x)[0], **TOL)
        after = client.stats()
    assert after["requests"] - before["requests"] == 4          # the three, then ours
    assert after["positions"] - before["positions"] == 3 * 16 + 5
