"""`fastgo serve` and `fastgo bench server` as a user runs them."""
import json
import subprocess
import sys

from supervision.role_process import ServerProcess


def fastgo(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "fastgo_cli.main", *args], capture_output=True,
                          text=True, timeout=timeout)


def test_serve_refuses_a_bad_config_naming_key_and_file(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("[server]\nmax_batch = -1\n")
    result = fastgo("serve", "--config", str(path))
    assert result.returncode == 2
    assert str(path) in result.stderr and "server.max_batch" in result.stderr
    path.write_text("[server]\nmax_batch = 8\nmax_wiat_us = 3\n")
    result = fastgo("serve", "--config", str(path))
    assert result.returncode == 2 and "server.max_wiat_us" in result.stderr


def test_a_bad_config_is_refused_before_torch_is_imported(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("[server]\nmax_wiat_us = 3\n")
    code = ("import sys; from fastgo_cli.main import main; "
            f"status = main(['serve', '--config', {str(path)!r}]); "
            "print('torch imported:', 'torch' in sys.modules, 'status:', status, file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    lines = out.stderr.strip().splitlines()
    assert "server.max_wiat_us" in lines[0], out.stderr
    assert lines[-1] == "torch imported: False status: 2", out.stderr


def test_serve_refuses_a_corrupt_start_checkpoint(tmp_path, write_config):
    (tmp_path / "bad.ckpt").write_bytes(b"not a checkpoint")
    config = write_config(tmp_path / "s.toml", {"blocks": 1, "channels": 8}, {
        "endpoint": "tcp://127.0.0.1:*", "checkpoints": {"current": str(tmp_path / "bad.ckpt")}})
    result = fastgo("serve", "--config", config)
    assert result.returncode == 2 and "not a fastgo checkpoint" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_serve_stops_cleanly_on_sigterm(tmp_path, write_config):
    config = write_config(tmp_path / "s.toml", {"blocks": 1, "channels": 8},
                          {"endpoint": "tcp://127.0.0.1:*", "threads": 1})
    server = ServerProcess(config).start()
    server.stop()
    assert server.proc.returncode == 0


def test_bench_server_writes_its_json(tmp_path):
    out = tmp_path / "bench.json"
    result = fastgo("bench", "server", "--net", "b1c8", "--batch", "8", "--clients", "2",
                    "--seconds", "0.5", "--rounds", "1", "--json", str(out), timeout=180)
    assert result.returncode == 0, result.stderr
    data = json.loads(out.read_text())
    for key in ("batch", "server_evals_per_s", "raw_evals_per_s", "ratio", "p50_ms", "p99_ms",
                "server_overhead_us_per_batch", "backend", "layout", "device"):
        assert key in data
    assert data["batch"] == 8 and data["server_evals_per_s"] > 0 and data["raw_evals_per_s"] > 0
    assert data["backend"] == "torch-fp32" and data["layout"] == "channels_last"
    assert "ratio" in result.stdout


def test_remote_bind_needs_curve_and_curve_works(tmp_path, write_config):
    import numpy as np
    import pytest

    from wire.client import InferenceClient, ServerUnavailable

    path = tmp_path / "remote.toml"
    path.write_text('[server]\nendpoint = "tcp://0.0.0.0:5555"\n')
    result = fastgo("serve", "--config", str(path))
    assert result.returncode == 2 and "server.endpoint" in result.stderr and "CURVE" in result.stderr

    # The key writer is `fastgo keys new`; the old serve flag points there in one line.
    result = fastgo("serve", "--make-curve-key", str(tmp_path / "old.key"))
    assert result.returncode == 2 and "fastgo keys new" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "old.key").exists()
    result = fastgo("keys", "new", "server", "-o", str(tmp_path / "keys"))
    assert result.returncode == 0, result.stderr
    from wire.keys import read_public_key
    key_file = tmp_path / "keys" / "server.key_secret"
    public_key = read_public_key(tmp_path / "keys" / "server.key").decode()
    assert len(public_key) == 40 and (key_file.stat().st_mode & 0o777) == 0o600
    config = write_config(tmp_path / "curve.toml", {"blocks": 1, "channels": 8}, {
        "endpoint": "tcp://127.0.0.1:*", "threads": 1, "curve_secret_key_file": str(key_file)})
    x = np.zeros((2, 17, 9, 9), np.uint8)
    with ServerProcess(config) as server:
        with InferenceClient(server.endpoint, timeout_s=20, server_public_key=public_key) as client:
            logits, values = client.evaluate(x)
            assert logits.shape == (2, 82)
        with InferenceClient(server.endpoint, timeout_s=0.3, retries=0) as plain:
            with pytest.raises(ServerUnavailable):       # no key: the handshake never completes
                plain.evaluate(x)


def test_a_started_server_process_used_as_a_context_starts_once_and_stops(tmp_path, write_config):
    """`with ServerProcess(...).start() as server`: the server already started is the one used
    (no second, orphaned server), and it is stopped when the block ends."""
    from supervision.role_process import ServerProcess

    config = write_config(tmp_path / "s.toml", {"board_size": 5, "blocks": 1, "channels": 8},
                          {"endpoint": "tcp://127.0.0.1:*", "threads": 1, "device": "cpu"})
    started = ServerProcess(config, log_path=str(tmp_path / "s.log")).start()
    first = started.proc
    with started as server:
        assert server.proc is first and first.poll() is None
    assert first.poll() is not None
