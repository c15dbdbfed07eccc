"""The server's checkpoint loader: a checkpoint whose weights are the ones last loaded for its
slot (the trainer uploads each checkpoint and also writes the file the server watches) is
answered without building a second runner; any other weights, or a refused load in between,
are loaded in full. The server's BackendSetup reaches every runner it builds, at start and on a
reload."""
import pytest
import torch

from inference_server import slots as slots_module
from inference_server.server import InferenceServer
from inference_server.slots import Reloader
from network.backend_choice import BackendSetup
from network.checkpoint import save_checkpoint
from network.model import build_model
from rundata.config import ModelConfig, ServerConfig, loads_config

torch.set_num_threads(1)
MODEL = ModelConfig(board_size=9, blocks=1, channels=8)
SERVER = ServerConfig(device="cpu", backend="torch", threads=1, max_batch=8,
                      max_request_positions=8)


@pytest.fixture
def built(monkeypatch):
    """The models runners were built for, in order."""
    made = []
    real = slots_module.make_runner

    def spy(model, server, *, setup=None):
        made.append((model, setup))
        return real(model, server, setup=setup)

    monkeypatch.setattr(slots_module, "make_runner", spy)
    return made


def load(reloader, slot, path="", data=None):
    assert reloader.request(slot, path or f"<{len(data)} bytes>", data=data)
    return reloader.done.get(timeout=60)


def test_the_same_weights_twice_build_one_runner(tmp_path, built):
    first, second = tmp_path / "a.ckpt", tmp_path / "b.ckpt"
    hash_a = save_checkpoint(first, build_model(MODEL, seed=1), step=10)
    hash_b = save_checkpoint(second, build_model(MODEL, seed=2), step=20)
    assert hash_a != hash_b
    reloader = Reloader(MODEL, SERVER)
    try:
        jobs = [load(reloader, "current", str(first)),                     # built
                load(reloader, "current", data=first.read_bytes()),         # the same: not built
                load(reloader, "current", str(second)),                     # other weights
                load(reloader, "current", str(first)),                      # back to the first
                load(reloader, "other", str(first))]                        # another slot
    finally:
        reloader.stop()
    assert [job.error for job in jobs] == [""] * 5
    assert [job.unchanged for job in jobs] == [False, True, False, False, False]
    assert [job.runner is None for job in jobs] == [False, True, False, False, False]
    assert [job.version for job in jobs] == [10, 10, 20, 10, 10]
    assert [job.content_hash for job in jobs] == [hash_a, hash_a, hash_b, hash_a, hash_a]
    assert len(built) == 4 and all(setup is None for _, setup in built)


def test_a_refused_load_leaves_the_weights_in_service(tmp_path, built):
    good, bad = tmp_path / "good.ckpt", tmp_path / "bad.ckpt"
    good_hash = save_checkpoint(good, build_model(MODEL, seed=3), step=5)
    data = bytearray(good.read_bytes())
    data[len(data) // 2] ^= 0xFF
    bad.write_bytes(bytes(data))
    reloader = Reloader(MODEL, SERVER, loaded={"current": good_hash})   # served at start
    try:
        again = load(reloader, "current", str(good))
        refused = load(reloader, "current", str(bad))
        after = load(reloader, "current", data=good.read_bytes())
    finally:
        reloader.stop()
    assert again.unchanged and not again.error and again.version == 5
    assert refused.error and not refused.unchanged and refused.runner is None
    assert after.unchanged and not after.error
    assert built == []


def test_random_start_weights_are_never_taken_for_a_checkpoint(tmp_path, built):
    path = tmp_path / "c.ckpt"
    save_checkpoint(path, build_model(MODEL, seed=4), step=1)
    reloader = Reloader(MODEL, SERVER, loaded={"current": ""})          # random weights, no hash
    try:
        job = load(reloader, "current", str(path))
    finally:
        reloader.stop()
    assert not job.unchanged and job.runner is not None and len(built) == 1


def test_the_servers_setup_reaches_every_runner_it_builds(tmp_path, built):
    path = tmp_path / "c.ckpt"
    save_checkpoint(path, build_model(MODEL, seed=6), step=3)
    config = loads_config('[model]\nboard_size = 9\nblocks = 1\nchannels = 8\n[server]\n'
                          'endpoint = "tcp://127.0.0.1:*"\nbackend = "torch"\nthreads = 1\n')
    setup = BackendSetup(shards=str(tmp_path), progress=print)
    server = InferenceServer(config, setup=setup)
    try:
        assert len(built) == 1                                   # the slot's random weights
        assert server.reloader.request("current", str(path))
        job = server.reloader.done.get(timeout=60)
    finally:
        server.close()
    assert not job.error and job.version == 3
    assert len(built) == 2 and all(made is setup for _, made in built)
