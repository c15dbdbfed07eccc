"""kill -9 the server while clients have batches in flight, start it again on the same port
with newer weights: clients time out, reconnect, resend (Lazy Pirate) and every reply they hand
back equals the forward pass of its own request under the version it names. The server runs
with overlap on (forward thread), so batches are in flight on two threads when it dies."""
import threading

import numpy as np
import torch

from network.checkpoint import save_checkpoint
from network.model import build_model
from rundata.config import ModelConfig
from supervision.role_process import ServerProcess
from wire.client import InferenceClient

torch.set_num_threads(1)
MODEL = ModelConfig(board_size=9, blocks=2, channels=16)
TOL = dict(rtol=1e-4, atol=1e-4)


def test_kill9_and_restart(tmp_path, forward, write_config):
    ckpt = tmp_path / "m.ckpt"
    models = {1: build_model(MODEL, seed=1), 2: build_model(MODEL, seed=2)}
    save_checkpoint(ckpt, models[1], step=1)
    config = write_config(tmp_path / "serve.toml", {"blocks": 2, "channels": 16}, {
        "endpoint": "tcp://127.0.0.1:*", "max_batch": 32, "max_wait_us": 1000, "threads": 1,
        "device": "cpu", "overlap": True, "checkpoints": {"current": str(ckpt)}})

    stop = threading.Event()
    changed = threading.Condition()        # notified on every result, failure and reconnect
    results, failures, clients = [], [], []

    class Client(InferenceClient):
        def _connect(self):
            super()._connect()
            with changed:
                changed.notify_all()

    def load(index, endpoint):
        rng = np.random.default_rng(index)
        try:
            with Client(endpoint, timeout_s=0.5, retries=60) as client:
                clients.append(client)
                flight = []
                while not stop.is_set() or flight:
                    while not stop.is_set() and len(flight) < 2:
                        x = (rng.random((int(rng.integers(1, 17)), 17, 9, 9)) < 0.3).astype(np.uint8)
                        flight.append((client.submit(x), x))
                    ticket, x = flight.pop(0)
                    logits, values = client.receive(ticket)
                    with changed:
                        results.append((client.model_version, x, np.array(logits), np.array(values)))
                        changed.notify_all()
        except Exception as err:
            with changed:
                failures.append(err)
                changed.notify_all()

    def wait_for(condition, what):
        with changed:
            assert changed.wait_for(lambda: failures or condition(), timeout=30), what

    first = ServerProcess(config).start()
    port_endpoint = first.endpoint
    second = None
    threads = [threading.Thread(target=load, args=(i, port_endpoint)) for i in range(3)]
    try:
        for thread in threads:
            thread.start()
        wait_for(lambda: len(results) >= 20, "20 results from the first server")
        first.kill()                                   # SIGKILL: batches are in flight right now
        before = len(results)
        save_checkpoint(ckpt, models[2], step=2)
        # every client times out on the dead server and reconnects before the new one starts
        wait_for(lambda: len(clients) == 3 and all(c.reconnects for c in clients),
                 "every client reconnecting")
        second = ServerProcess(config, endpoint=port_endpoint).start()
        wait_for(lambda: len(results) >= before + 20, "20 results from the second server")
    finally:
        stop.set()
        for thread in threads:
            thread.join(60)
        first.stop()
        if second is not None:
            second.stop()

    assert not failures, failures
    assert sum(client.reconnects for client in clients) >= 3
    versions = [version for version, _, _, _ in results]
    assert set(versions) == {1, 2}
    for version, x, logits, values in results:
        want_logits, want_values = forward(models[version], x)
        np.testing.assert_allclose(logits, want_logits, **TOL)
        np.testing.assert_allclose(values, want_values, **TOL)
