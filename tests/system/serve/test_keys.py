"""Remote endpoints: `fastgo keys new`, CURVE with an allow list (ironhouse) on the server and
on the recorder (an allowed client is served, an unknown key gets nothing and the endpoint goes
on serving), and checkpoint bytes verified by their hash before a server loads them."""
from __future__ import annotations

import os
import stat
import subprocess
import sys

import numpy as np
import pytest

from supervision.role_process import ServerProcess
from wire.client import InferenceClient, ServerUnavailable
from wire.keys import CurveKeyError, read_public_key, read_secret_key


def keys(*args):
    return subprocess.run([sys.executable, "-m", "fastgo_cli.main", "keys", *args],
                          capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def key_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("keys")
    for name in ("server", "recorder", "alice", "mallory"):
        result = keys("new", name, "-o", str(folder))
        assert result.returncode == 0, result.stderr
    os.makedirs(folder / "allowed")
    os.replace(folder / "alice.key", folder / "allowed" / "alice.key")
    return folder


def test_keys_new_writes_a_private_secret_and_never_overwrites(key_dir):
    secret = key_dir / "alice.key_secret"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert stat.S_IMODE((key_dir / "allowed" / "alice.key").stat().st_mode) == 0o644
    public, private = read_secret_key(secret)
    import zmq
    assert zmq.curve_public(private) == public == read_public_key(key_dir / "allowed" / "alice.key")
    before = secret.read_bytes()
    result = keys("new", "alice", "-o", str(key_dir))
    assert result.returncode == 2 and "exists" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert secret.read_bytes() == before
    os.chmod(secret, 0o644)
    try:
        with pytest.raises(CurveKeyError, match="chmod 600"):
            read_secret_key(secret)
    finally:
        os.chmod(secret, 0o600)


def test_key_files_are_checked(tmp_path, key_dir):
    big = tmp_path / "big.key"
    big.write_bytes(b"x" * 5000)
    with pytest.raises(CurveKeyError, match="cannot read"):
        read_public_key(big)
    short = tmp_path / "short.key"
    short.write_text('public-key = "tooshort"\n')
    with pytest.raises(CurveKeyError, match="40-character"):
        read_public_key(short)
    with pytest.raises(CurveKeyError, match="secret key file"):
        read_public_key(key_dir / "alice.key_secret")
    mixed = tmp_path / "mixed.key_secret"
    text = (key_dir / "alice.key_secret").read_text()
    other = read_public_key(key_dir / "server.key").decode()
    mixed.write_text(text.split("public-key")[0] + f'public-key = "{other}"\n'
                     + "secret-key" + text.split("secret-key")[1])
    os.chmod(mixed, 0o600)
    with pytest.raises(CurveKeyError, match="does not belong"):
        read_secret_key(mixed)


def _planes(n=2, size=5):
    rng = np.random.default_rng(1)
    return (rng.random((n, 17, size, size)) < 0.3).astype(np.uint8)


def test_server_serves_allowed_keys_only(tmp_path, key_dir, write_config):
    config = write_config(tmp_path / "s.toml", {"board_size": 5, "blocks": 1, "channels": 8}, {
        "endpoint": "tcp://127.0.0.1:*", "threads": 1, "device": "cpu",
        "curve_secret_key_file": str(key_dir / "server.key_secret"),
        "curve_allowed": [str(key_dir / "allowed")]})
    server_key = read_public_key(key_dir / "server.key")
    with ServerProcess(config) as server:
        alice = InferenceClient(server.endpoint, timeout_s=5.0, retries=1,
                                server_public_key=server_key,
                                key_pair=read_secret_key(key_dir / "alice.key_secret"))
        mallory = InferenceClient(server.endpoint, timeout_s=1.0, retries=0,
                                  server_public_key=server_key,
                                  key_pair=read_secret_key(key_dir / "mallory.key_secret"))
        try:
            logits, values = alice.evaluate(_planes())
            assert logits.shape == (2, 26) and values.shape == (2,)
            with pytest.raises(ServerUnavailable):
                mallory.evaluate(_planes())
            logits2, _ = alice.evaluate(_planes())         # still serving the allowed client
            assert np.array_equal(logits, logits2)
            stats = alice.stats()
            assert stats["curve_denied"] >= 1 and stats["requests"] >= 2
        finally:
            alice.close()
            mallory.close()


def test_recorder_takes_games_from_allowed_keys_only(tmp_path, key_dir, free_endpoint, recorder_config,
                                                    start_recorder, stop, shard_ids):
    from recorder.sink import RemoteSink
    from rundata.shards import GameRecord

    endpoint = free_endpoint()
    config = recorder_config(tmp_path / "c.toml", "tcp://127.0.0.1:5555", endpoint, shard_seconds=0.2)
    with open(config, "a") as handle:
        handle.write(f'curve_secret_key_file = "{key_dir / "recorder.key_secret"}"\n'
                     f'curve_allowed = ["{key_dir / "allowed"}"]\n')
    recorder = start_recorder(config, tmp_path / "rec", tmp_path / "rec.log")
    recorder_key = read_public_key(key_dir / "recorder.key")
    nn = 25

    def game(char):
        return GameRecord(size=5, komi=0.5, moves=np.array([nn, nn], np.int16),
                          full=np.zeros(2, np.uint8), root_value=np.zeros(2, np.float32),
                          policy_count=np.zeros(2, np.uint16), policy_moves=np.zeros(0, np.int16),
                          policy_visits=np.zeros(0, np.float32), winner=-1, score=-0.5,
                          end="passes", ownership=np.zeros(nn, np.int8), versions=[0],
                          id=char * 32)

    sinks = []
    try:
        for name, char in (("mallory", "d"), ("alice", "a")):
            sinks.append(RemoteSink(endpoint, outbox=tmp_path / f"outbox-{name}", timeout_s=30.0,
                                    server_public_key=recorder_key,
                                    key_pair=read_secret_key(key_dir / f"{name}.key_secret")))
            sinks[-1].add(game(char))
        mallory, alice = sinks
        assert alice.flush(10.0) and alice.confirmed == 1
        assert not mallory.flush(1.5) and mallory.confirmed == 0
        alice.add(game("b"))                          # the recorder goes on serving alice
        assert alice.flush(10.0) and alice.confirmed == 2
        assert sorted(shard_ids(tmp_path / "rec" / "shards")) == ["a" * 32, "b" * 32]
    finally:
        for sink in sinks:
            sink.close()
        assert stop(recorder) == 0


def test_server_refuses_checkpoint_bytes_whose_hash_differs(tmp_path, write_config):
    import hashlib

    import torch

    from network.checkpoint import save_checkpoint
    from network.model import PolicyValueNet
    from rundata.config import ModelConfig
    from wire import protocol

    model_config = ModelConfig(board_size=5, blocks=1, channels=8)
    torch.manual_seed(3)
    save_checkpoint(tmp_path / "a.ckpt", PolicyValueNet(model_config), step=7)
    data = (tmp_path / "a.ckpt").read_bytes()
    config = write_config(tmp_path / "s.toml", {"board_size": 5, "blocks": 1, "channels": 8},
                          {"endpoint": "tcp://127.0.0.1:*", "threads": 1, "device": "cpu"})
    with ServerProcess(config) as server, \
            InferenceClient(server.endpoint, timeout_s=30.0, retries=0) as client:
        # the hash of other bytes: refused before anything is loaded
        request_id = 99
        wrong = hashlib.sha256(data + b"x").hexdigest()
        client._send(request_id, protocol.reload_request(request_id, "current", "", data, None, wrong))
        reply = client._wait(request_id, None)
        assert reply.kind == "error" and reply.header["code"] == protocol.RELOAD_FAILED
        assert "altered or truncated" in reply.header["msg"]
        assert client.stats()["versions"] == {"current": 0}
        # the same bytes with their own hash (client.reload computes it): loaded
        assert client.reload("current", data=data) == 7
        assert client.stats()["versions"] == {"current": 7}


def test_keys_new_makes_a_missing_folder_private_and_refuses_a_file(tmp_path):
    folder = tmp_path / "keys" / "server-host"
    result = keys("new", "server", "-o", str(folder))
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert (folder / "server.key").is_file() and (folder / "server.key_secret").is_file()
    not_a_folder = tmp_path / "plain"
    not_a_folder.write_text("x")
    result = keys("new", "server", "-o", str(not_a_folder))
    assert result.returncode == 2 and "not a folder" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
