"""Checkpoint bytes travel in upload chunks, so the server's message size limit is that of the
largest eval, however large checkpoints are: an oversized message of any kind is dropped before
it is buffered, and the server goes on serving."""

import numpy as np
import pytest
import zmq

from network.checkpoint import save_checkpoint
from network.model import build_model
from rundata.config import ModelConfig
from supervision.role_process import ServerProcess
from wire import protocol
from wire.client import InferenceClient

MODEL = {"board_size": 9, "blocks": 6, "channels": 64}


@pytest.fixture(scope="module")
def server(tmp_path_factory, write_config):
    tmp = tmp_path_factory.mktemp("upload")
    config = write_config(tmp / "s.toml", MODEL, {"endpoint": "tcp://127.0.0.1:5555", "max_batch": 16,
                                                  "max_request_positions": 16, "device": "cpu",
                                                  "backend": "torch", "slots": ["current"]})
    with ServerProcess(config, endpoint="tcp://127.0.0.1:*") as proc:
        yield proc, tmp


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])


def test_a_large_checkpoint_is_uploaded_in_chunks(server):
    proc, tmp = server
    path = tmp / "big.ckpt"
    save_checkpoint(path, build_model(ModelConfig(**MODEL), seed=3), step=42)
    data = path.read_bytes()
    assert len(data) > protocol.CHUNK_BYTES              # two chunks at least
    with InferenceClient(proc.endpoint, timeout_s=30, retries=1) as client:
        assert client.reload("current", str(path), data=data) == 42
        logits, values = client.evaluate(np.zeros((3, 17, 9, 9), np.uint8))
        assert logits.shape == (3, 82) and client.model_version == 42


def test_oversized_messages_are_dropped_and_serving_goes_on(server):
    proc, tmp = server
    before = rss_kb(proc.pid)
    context = zmq.Context.instance()
    rogue = context.socket(zmq.DEALER)
    rogue.setsockopt(zmq.LINGER, 0)
    rogue.connect(proc.endpoint)
    blob = b"\0" * (64 << 20)                              # 64 MB, far over the eval limit
    header = protocol.pack_header({"k": "reload", "id": 1, "slot": "current", "path": ""})
    for _ in range(3):
        rogue.send_multipart([header, blob])
    try:
        assert not rogue.poll(1500)                          # no answer: the connection was dropped
    finally:
        rogue.close(0)
    with InferenceClient(proc.endpoint, timeout_s=20, retries=1) as client:
        logits, _ = client.evaluate(np.zeros((2, 17, 9, 9), np.uint8))
        assert logits.shape == (2, 82)
    assert rss_kb(proc.pid) - before < 32 << 10             # the 64 MB messages were never held


def test_upload_errors_are_answered(server):
    proc, _ = server
    with InferenceClient(proc.endpoint, timeout_s=20, retries=1) as client:
        # a chunk that does not start an upload, and a reload of an upload that never finished
        request_id = next(client._ids)
        client._send(request_id, protocol.upload_request(request_id, 7, 100, 1000, b"x" * 10), 20)
        reply = client._wait(request_id, 20)
        assert reply.kind == "error" and reply.header["code"] == protocol.BAD_HEADER
        request_id = next(client._ids)
        client._send(request_id, protocol.upload_request(request_id, 8, 0, 1000, b"x" * 10), 20)
        assert client._wait(request_id, 20).header["received"] == 10
        request_id = next(client._ids)
        client._send(request_id, protocol.reload_request(request_id, "current", upload=8), 20)
        reply = client._wait(request_id, 20)
        assert reply.kind == "error" and "unfinished" in reply.header["msg"]
        # a chunk larger than CHUNK_BYTES is refused by the parser
        with pytest.raises(protocol.ProtocolError, match="chunk"):
            protocol.parse_request(
                protocol.upload_request(1, 9, 0, 1 << 22, b"x" * (protocol.CHUNK_BYTES + 1)), 16, 1 << 30)
