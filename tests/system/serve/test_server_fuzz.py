"""Fuzzing a real server process over a raw DEALER socket: random bytes, wrong headers, wrong
sizes, huge declared sizes, wrong versions, oversized frames. Each answerable message gets an
error reply and is counted; the server stays up and still answers a good request correctly."""
import msgpack
import numpy as np
import pytest
import torch
import zmq

from network.checkpoint import save_checkpoint
from network.model import build_model
from rundata.config import ModelConfig
from supervision.role_process import ServerProcess
from wire import protocol
from wire.client import InferenceClient

torch.set_num_threads(1)
MODEL = ModelConfig(board_size=9, blocks=1, channels=8)


@pytest.fixture(scope="module")
def served(tmp_path_factory, write_config):
    tmp = tmp_path_factory.mktemp("fuzz")
    model = build_model(MODEL, seed=3)
    save_checkpoint(tmp / "m.ckpt", model, step=2)
    config = write_config(tmp / "serve.toml", {"blocks": 1, "channels": 8}, {
        "endpoint": "tcp://127.0.0.1:*", "max_batch": 8, "max_wait_us": 500,
        "max_request_positions": 32, "max_checkpoint_bytes": 1 << 20, "threads": 1, "device": "cpu",
        "checkpoints": {"current": str(tmp / "m.ckpt")}})
    with ServerProcess(config) as server:
        yield server, model


def good_request_still_works(endpoint, model):
    x = (np.random.default_rng(0).random((3, 17, 9, 9)) < 0.3).astype(np.uint8)
    with InferenceClient(endpoint, timeout_s=20) as client:
        logits, values = client.evaluate(x)
        with torch.no_grad():
            want_logits, want_values = model.eval()(torch.from_numpy(x).float())
        np.testing.assert_allclose(logits, want_logits.numpy(), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(values, want_values.numpy(), rtol=1e-4, atol=1e-4)
        return client.stats()


def header(**fields):
    base = {"m": "fgo", "v": 1, "k": "eval", "id": 1, "slot": "current", "n": 1, "size": 9,
            "planes": 17, "dtype": "uint8"}
    base.update(fields)
    return msgpack.packb(base)


def malformed_messages(rng):
    one = bytes(17 * 81)
    yield [b""]
    yield [b"\xff" * 10]
    yield [header(v=2), one]
    yield [header(v=0), one]
    yield [header(m="zzz"), one]
    yield [msgpack.packb([1, 2, 3]), one]
    yield [msgpack.packb({"id": 1}), one]
    yield [header(k="launch"), one]
    yield [header(), one, one]
    yield [header()]
    yield [header(n=2), one]                       # declared 2 positions, sent 1
    yield [header(), one[:-7]]
    yield [header(n=10 ** 12), one]                # huge declared sizes
    yield [header(n=2 ** 64 - 1), one]
    yield [header(size=100000, planes=100000), one]
    yield [header(size=7), bytes(17 * 49)]
    yield [header(dtype="float64"), one]
    yield [header(slot="nope"), one]
    yield [header(id="seven"), one]
    yield [msgpack.packb({"m": "fgo", "v": 1, "k": "eval", "id": 1, "pad": "x" * 10000}), one]
    for _ in range(150):                           # random bytes, 1 to 3 frames
        frames = int(rng.integers(1, 4))
        yield [rng.bytes(int(rng.integers(0, 200))) for _ in range(frames)]
    for _ in range(50):                            # a valid header with random field values
        fields = {key: rng.choice([None, -1, 0, 1, 2 ** 40, "x", True, 1.5])
                  for key in rng.choice(["n", "size", "planes", "slot", "dtype", "k", "id"], 3)}
        yield [header(**{k: (v.item() if hasattr(v, "item") else v) for k, v in fields.items()}), one]


def test_fuzz_gets_error_replies_and_server_stays_up(served):
    server, model = served
    rng = np.random.default_rng(2024)
    context = zmq.Context.instance()
    dealer = context.socket(zmq.DEALER)
    dealer.setsockopt(zmq.LINGER, 0)
    dealer.connect(server.endpoint)
    sent = 0
    try:
        for frames in malformed_messages(rng):
            dealer.send_multipart(frames)
            sent += 1
        replies = []
        while len(replies) < sent and dealer.poll(10000):
            replies.append(protocol.parse_reply(dealer.recv_multipart()))
    finally:
        dealer.close(0)
    assert len(replies) == sent                     # every malformed message was answered
    assert all(reply.kind == "error" for reply in replies)
    codes = {reply.header["code"] for reply in replies}
    assert {"bad_header", "bad_version", "bad_kind", "bad_frames", "bad_size", "too_large",
            "bad_shape", "unknown_slot"} <= codes
    assert server.alive()
    stats = good_request_still_works(server.endpoint, model)
    assert stats["errors_total"] >= sent


def test_oversized_frame_only_costs_its_sender(served):
    server, model = served
    context = zmq.Context.instance()
    dealer = context.socket(zmq.DEALER)
    dealer.setsockopt(zmq.LINGER, 0)
    dealer.connect(server.endpoint)
    try:
        # beyond the socket's MAXMSGSIZE: zmq drops the connection instead of buffering it
        dealer.send_multipart([header(n=32), bytes(8 << 20)])
        assert not dealer.poll(500)
    finally:
        dealer.close(0)
    assert server.alive()
    good_request_still_works(server.endpoint, model)
