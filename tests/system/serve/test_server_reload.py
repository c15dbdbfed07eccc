"""Hot reload under load, against a real server process: the watched checkpoint is replaced
while clients keep two batches in flight. No request is lost (clients may not retry), versions
switch, every reply equals the forward pass of the version it names (never a half-loaded
model), a network of another shape (blocks, channels) is taken up like any other, a corrupted
file and a NaN model are refused while the old model keeps serving."""
import dataclasses
import os
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
MODEL = ModelConfig(board_size=9, blocks=1, channels=8)
TOL = dict(rtol=1e-4, atol=1e-4)


def wait_for(predicate, timeout_s=20.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def publish_bytes(path, data):
    tmp = str(path) + ".tmp"
    with open(tmp, "wb") as handle:
        handle.write(data)
    os.replace(tmp, path)


@pytest.mark.parametrize("overlap", [False, True], ids=["inline", "overlap"])
def test_hot_reload_under_load(tmp_path, overlap, forward, write_config):
    live = tmp_path / "live.ckpt"
    models = {version: build_model(MODEL, seed=version) for version in (1, 2)}
    # version 4 is a larger network (a run whose network grew): the server serves the new shape
    models[4] = build_model(dataclasses.replace(MODEL, blocks=2, channels=12), seed=4)
    save_checkpoint(live, models[1], step=1)
    config = write_config(tmp_path / "serve.toml", {"blocks": 1, "channels": 8}, {
        "endpoint": "tcp://127.0.0.1:*", "max_batch": 8, "max_wait_us": 1000, "threads": 1,
        "device": "cpu", "watch_interval_s": 0.1, "overlap": overlap, "checkpoints": {"current": str(live)}})
    x = (np.random.default_rng(0).random((4, 17, 9, 9)) < 0.3).astype(np.uint8)
    expected = {version: forward(model, x) for version, model in models.items()}

    stop = threading.Event()
    seen, failures = [], []
    served = {version: threading.Event() for version in (1, 2, 4)}   # a client got that version

    def load(index):
        try:
            with InferenceClient(server.endpoint, timeout_s=15, retries=0) as client:
                mine = []
                flight = [client.submit(x), client.submit(x)]
                while flight:
                    logits, values = client.receive(flight.pop(0))
                    mine.append((client.model_version, np.array(logits), np.array(values)))
                    served[client.model_version].set()
                    if not stop.is_set():
                        flight.append(client.submit(x))
                seen.append(mine)
        except Exception as err:
            failures.append(err)

    with ServerProcess(config) as server:
        threads = [threading.Thread(target=load, args=(i,)) for i in range(3)]
        for thread in threads:
            thread.start()
        admin = InferenceClient(server.endpoint, timeout_s=20)
        try:
            def version():
                return admin.stats()["versions"]["current"]

            def refused():
                return admin.stats()["reloads_refused"]

            assert served[1].wait(20)                                 # clients saw version 1
            save_checkpoint(live, models[2], step=2)                  # watched file replaced
            assert wait_for(lambda: version() == 2)

            good = live.read_bytes()
            publish_bytes(live, good[: len(good) // 3])               # truncated
            assert wait_for(lambda: refused() == 1)
            corrupt = bytearray(good)
            corrupt[len(corrupt) // 2] ^= 0xFF                        # one flipped byte
            publish_bytes(live, bytes(corrupt))
            assert wait_for(lambda: refused() == 2)
            poisoned = build_model(MODEL, seed=9)
            with torch.no_grad():
                poisoned.value_fc1.weight[0, 0] = float("nan")
            save_checkpoint(live, poisoned, step=99)                  # hash fine, canary NaN
            assert wait_for(lambda: refused() == 3)
            assert "canary" in admin.stats()["last_reload_error"]
            served[2].clear()
            assert served[2].wait(20)                                 # the old model kept serving
            assert version() == 2

            other = tmp_path / "v4.ckpt"
            save_checkpoint(other, models[4], step=4)
            with pytest.raises(ServerError) as info:                  # bytes, corrupted
                admin.reload("current", data=bytes(corrupt))
            assert info.value.code == "reload_failed"
            # a reload message carrying the checkpoint itself: no shared filesystem needed
            assert admin.reload("current", data=other.read_bytes()) == 4
            # the same weights again (a trainer uploads, then the watched file changes): the
            # reply names the version, and no second runner is built
            assert admin.reload("current", data=other.read_bytes()) == 4
            assert admin.stats()["reloads_unchanged"] == 1
            with pytest.raises(ServerError) as info:
                admin.reload("current", str(tmp_path / "missing.ckpt"))
            assert info.value.code == "reload_failed"
            with pytest.raises(ServerError) as info:
                admin.reload("nope", str(other))
            assert info.value.code == "unknown_slot"
            assert served[4].wait(20)                                 # clients saw version 4
            stats = admin.stats()
        finally:
            stop.set()
            for thread in threads:
                thread.join(60)
            admin.close()

    assert not failures, failures
    assert stats["versions"]["current"] == 4 and stats["reloads"] == 2
    assert stats["reloads_unchanged"] == 1
    assert stats["reloads_refused"] == 5
    assert len(seen) == 3
    versions = set()
    for results in seen:
        order = [version for version, _, _ in results]
        assert order == sorted(order), "a client saw an older version after a newer one"
        versions.update(order)
        for version, logits, values in results:
            np.testing.assert_allclose(logits, expected[version][0], **TOL)
            np.testing.assert_allclose(values, expected[version][1], **TOL)
    assert versions == {1, 2, 4}
