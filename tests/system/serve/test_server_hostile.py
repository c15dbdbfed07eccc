"""The server's boundaries with real processes: reloads naming FIFOs or missing paths answer at
once and alike, the reload queue and the slot queues answer "busy" instead of growing, shutdown
answers every queued request, taken endpoints and bad start-up settings exit 2 with one line."""
import os
import queue
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import zmq

from inference_server.server import InferenceServer
from inference_server.slots import NAMED_PATH_UNREADABLE, Reloader
from network.checkpoint import save_checkpoint
from network.model import build_model
from rundata.config import ModelConfig, loads_config
from supervision.role_process import ServerProcess
from wire import protocol
from wire.client import InferenceClient, ServerError

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
MODEL = {"blocks": 1, "channels": 8}
CONFIG = ModelConfig(**MODEL)


def planes(count=2, seed=0):
    shape = (count, CONFIG.planes, CONFIG.board_size, CONFIG.board_size)
    return (np.random.default_rng(seed).random(shape) < 0.3).astype(np.uint8)


def serve(*args, timeout=60):
    return subprocess.run([sys.executable, "-m", "fastgo_cli.main", "serve", *args],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def one_line_refusal(result):
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


class Dealer:
    """A raw DEALER that submits without waiting, and reads replies by request id."""

    def __init__(self, endpoint):
        self.socket = zmq.Context.instance().socket(zmq.DEALER)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.connect(endpoint)

    def send(self, frames):
        self.socket.send_multipart(frames, copy=False)

    def replies(self, count, timeout_s=20.0):
        out = {}
        deadline = time.monotonic() + timeout_s
        while len(out) < count and time.monotonic() < deadline:
            if self.socket.poll(100):
                reply = protocol.parse_reply(self.socket.recv_multipart())
                out[reply.request_id] = reply
        return out

    def close(self):
        self.socket.close(0)


@pytest.fixture(scope="module")
def server(tmp_path_factory, write_config):
    folder = tmp_path_factory.mktemp("served")
    config = write_config(folder / "s.toml", MODEL, {"endpoint": "tcp://127.0.0.1:*", "threads": 1})
    with ServerProcess(config) as process:
        yield process


def test_reload_of_a_fifo_answers_at_once_and_serving_goes_on(server, tmp_path):
    fifo = tmp_path / "pipe.ckpt"
    os.mkfifo(fifo)
    good = tmp_path / "good.ckpt"
    save_checkpoint(good, build_model(CONFIG, seed=3), step=7)
    with InferenceClient(server.endpoint, timeout_s=10, retries=0) as client:
        messages = []
        for path in (fifo, tmp_path / "missing.ckpt", tmp_path, "/etc/hostname"):
            start = time.monotonic()
            with pytest.raises(ServerError) as info:
                client.reload("current", str(path), timeout_s=10)
            assert time.monotonic() - start < 5
            assert info.value.code == protocol.RELOAD_FAILED
            messages.append(info.value.message.replace(str(path)[:200], "PATH"))
        # The same answer whether the path is a FIFO, missing, a folder or some other file.
        assert set(messages) == {f"PATH: {NAMED_PATH_UNREADABLE}"}
        logits, _ = client.evaluate(planes())
        assert logits.shape == (2, 82)
        assert client.reload("current", str(good), timeout_s=30) == 7


def test_reload_queue_is_bounded_and_answers_busy(server, tmp_path):
    path = tmp_path / "big.ckpt"
    save_checkpoint(path, build_model(ModelConfig(blocks=4, channels=32), seed=1), step=1)
    data = path.read_bytes()
    dealer = Dealer(server.endpoint)
    try:
        count = 40
        for request_id in range(count):
            dealer.send(protocol.reload_request(request_id, "current", data=data))
        replies = dealer.replies(count, timeout_s=60)
    finally:
        dealer.close()
    assert len(replies) == count                       # every request is answered
    codes = [r.header.get("code") for r in replies.values() if r.kind == "error"]
    assert protocol.BUSY in codes                      # the queue did not grow to 40


def test_reloader_refuses_beyond_its_bound():
    release, held = threading.Event(), threading.Event()
    reloader = Reloader(CONFIG, loads_config("").server, max_pending=2)
    import inference_server.slots as slots
    original = slots.load_runner

    def load_held(*args, **kwargs):
        held.set()
        release.wait(10)
        raise ValueError("x")

    slots.load_runner = load_held
    try:
        assert reloader.request("current", "a", waiter=(b"i", 1))
        assert held.wait(10)                           # the thread holds the first job
        assert reloader.request("current", "b", waiter=(b"i", 2))
        assert reloader.request("current", "c", waiter=(b"i", 3))
        assert not reloader.request("current", "d", waiter=(b"i", 4))
        assert sorted(w[1] for w in reloader.abandon()) == [1, 2, 3]
    finally:
        release.set()
        slots.load_runner = original


def test_full_slot_queue_answers_busy_and_shutdown_answers_every_queued_request():
    config = loads_config('[model]\nblocks = 1\nchannels = 8\n[server]\nendpoint = "tcp://127.0.0.1:*"\n'
                          'max_batch = 65536\nmax_wait_us = 10000000\nmax_request_positions = 8\n')
    server = InferenceServer(config)
    server.queues.bytes_limit = 10 * planes(4).nbytes   # room for ten requests of four
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    dealer = Dealer(server.endpoint)
    try:
        for request_id in range(15):
            dealer.send(protocol.eval_request(request_id, planes(4, request_id), "current"))
        busy = dealer.replies(5, timeout_s=10)
        assert sorted(busy) == list(range(10, 15))
        assert all(r.header["code"] == protocol.BUSY for r in busy.values())
        server.stop()
        stopped = dealer.replies(10, timeout_s=10)
        thread.join(10)
    finally:
        server.stop()
        dealer.close()
    assert sorted(stopped) == list(range(10))
    assert all(r.header["code"] == protocol.SHUTTING_DOWN for r in stopped.values())


def test_shutdown_answers_queued_requests_of_a_server_process(tmp_path, wait_for, write_config):
    config = write_config(tmp_path / "s.toml", MODEL, {"endpoint": "tcp://127.0.0.1:*", "threads": 1,
                                                       "max_batch": 65536, "max_wait_us": 10_000_000})
    process = ServerProcess(config).start()
    dealer = Dealer(process.endpoint)
    try:
        for request_id in range(5):
            dealer.send(protocol.eval_request(request_id, planes(2, request_id), "current"))
        with InferenceClient(process.endpoint, timeout_s=5, retries=0) as watcher:
            wait_for(lambda: watcher.stats()["queued_positions"] == 5 * 2, 8, 0.02,
                     "all five requests queued (a 10 s batch wait)")
        start = time.monotonic()
        process.proc.terminate()
        replies = dealer.replies(5, timeout_s=10)
        assert time.monotonic() - start < 5
        # more SIGTERMs while it ends (a supervisor's, say, as in stop()) leave its exit status 0:
        # Python puts the default handlers back while the interpreter ends
        deadline = time.monotonic() + 10
        while process.poll() is None and time.monotonic() < deadline:
            process.signal(signal.SIGTERM)
            time.sleep(0.002)
        returncode = process.poll()
    finally:
        process.stop()
        dealer.close()
    assert sorted(replies) == list(range(5))
    assert {r.header["code"] for r in replies.values()} == {protocol.SHUTTING_DOWN}
    assert returncode == 0


def test_second_server_on_a_taken_tcp_port_exits_2(server, tmp_path, write_config):
    config = write_config(tmp_path / "s.toml", MODEL, {"endpoint": server.endpoint})
    line = one_line_refusal(serve("--config", config))
    assert "in use" in line and "server.endpoint" in line


def test_second_server_on_a_live_ipc_path_exits_2_and_the_first_keeps_it(tmp_path, write_config):
    endpoint = f"ipc://{tmp_path}/serve.sock"
    config = write_config(tmp_path / "s.toml", MODEL, {"endpoint": endpoint, "threads": 1})
    with ServerProcess(config) as first:
        line = one_line_refusal(serve("--config", config))
        assert "in use by a running server" in line
        with InferenceClient(first.endpoint, timeout_s=10, retries=0) as client:
            assert client.evaluate(planes())[0].shape == (2, 82)
    # A socket file left by a server that is gone is taken over.
    open_socket = tmp_path / "stale.sock"
    import socket
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(open_socket))
    stale.close()
    config = write_config(tmp_path / "t.toml", MODEL, {"endpoint": f"ipc://{open_socket}", "threads": 1})
    with ServerProcess(config) as second:
        assert second.alive()


def startup_cases(tmp_path):
    """(config file, text or bytes, words the one-line refusal must hold)."""
    (tmp_path / "folder.ckpt").mkdir()
    cases = {
        "no_port.toml": ('[server]\nendpoint = "tcp://127.0.0.1"\n', ["server.endpoint"]),
        "bad_port.toml": ('[server]\nendpoint = "tcp://127.0.0.1:70000"\n', ["server.endpoint", "port"]),
        "ipc_folder.toml": (f'[server]\nendpoint = "ipc://{tmp_path}/none/s.sock"\n',
                            ["server.endpoint", "does not exist"]),
        "key.toml": (f'[server]\nendpoint = "tcp://127.0.0.1:*"\n'
                     f'curve_secret_key_file = "{tmp_path}/no.key"\n',
                     ["server.curve_secret_key_file"]),
        "ckpt_dir.toml": (f'[server]\nendpoint = "tcp://127.0.0.1:*"\n'
                          f'checkpoints = {{ current = "{tmp_path}/folder.ckpt" }}\n',
                          ["server.checkpoints.current", "not a regular file"]),
        "ckpt_folder.toml": (f'[server]\nendpoint = "tcp://127.0.0.1:*"\n'
                             f'checkpoints = {{ current = "{tmp_path}/none/a.ckpt" }}\n',
                             ["server.checkpoints.current", "does not exist"]),
        "log.toml": (f'[server]\nendpoint = "tcp://127.0.0.1:*"\nlog_file = "{tmp_path}/none/x.log"\n',
                     ["server.log_file"]),
        "latin1.toml": (b'[server]\nlog_file = "caf\xe9"\n', ["not UTF-8"]),
        "nested.toml": ("x = " + "[" * 5000 + "]" * 5000 + "\n", ["nested deeper"]),
        "seed.toml": ('[server]\ninit_seed = 18446744073709551616\n', ["server.init_seed"]),
    }
    import torch
    if not torch.cuda.is_available():
        cases["cuda.toml"] = ('[server]\nendpoint = "tcp://127.0.0.1:*"\ndevice = "cuda"\n',
                              ["server.device", "CUDA"])
    return cases


def write_case(tmp_path, name, content):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


def test_start_up_errors_exit_2_with_one_line_naming_file_and_key(tmp_path, capsys):
    # In this process (fast): the same entry point as the `fastgo` command.
    from fastgo_cli.main import main
    for name, (content, words) in startup_cases(tmp_path).items():
        path = write_case(tmp_path, name, content)
        code = main(["serve", "--config", str(path)])
        err = capsys.readouterr().err
        line = one_line_refusal(subprocess.CompletedProcess([], code, "", err))
        assert str(path) in line, (name, line)
        for word in words:
            assert word in line, (name, line)


def test_start_up_errors_exit_2_from_the_command_line(tmp_path):
    cases = startup_cases(tmp_path)
    for name in ("nested.toml", "ckpt_dir.toml"):
        path = write_case(tmp_path, name, cases[name][0])
        line = one_line_refusal(serve("--config", str(path)))
        assert str(path) in line and all(word in line for word in cases[name][1]), line


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_dead_forward_thread_stops_the_loop_loudly():
    config = loads_config('[model]\nblocks = 1\nchannels = 8\n[server]\nendpoint = "tcp://127.0.0.1:*"\n'
                          'overlap = true\n')
    server = InferenceServer(config)
    server.forward._jobs.put("not a job")          # the thread fails outside a forward pass
    outcome = queue.Queue()

    def run():
        try:
            server.serve_forever()
            outcome.put(None)
        except RuntimeError as err:
            outcome.put(err)
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        err = outcome.get(timeout=10)
    finally:
        server.stop()
    assert err is not None and "forward thread died" in str(err)
    assert server.socket.closed


class FailingRunner:
    """A runner whose forward pass fails like a CUDA device that ran out of memory or went
    away: `fail` more calls raise, then it answers zeros (the real runner's shapes)."""

    def __init__(self, runner, fail):
        self.runner, self.fail = runner, fail

    def __getattr__(self, name):
        return getattr(self.runner, name)

    def run(self, n, *args, **kwargs):
        if self.fail > 0:
            self.fail -= 1
            raise RuntimeError("CUDA error: out of memory (simulated)")
        return self.runner.run(n, *args, **kwargs)


def _serve_with(fail):
    config = loads_config('[model]\nblocks = 1\nchannels = 8\n[server]\nendpoint = "tcp://127.0.0.1:*"\n'
                          'max_wait_us = 1000\n')
    server = InferenceServer(config)
    slot = server.slots["current"]
    slot.runner = FailingRunner(slot.runner, fail)
    outcome = queue.Queue()

    def run():
        try:
            server.serve_forever()
            outcome.put(None)
        except RuntimeError as err:
            outcome.put(err)
    threading.Thread(target=run, daemon=True).start()
    return server, outcome


def test_one_failed_forward_answers_errors_and_serving_goes_on():
    from inference_server.server import MAX_FAILED_FORWARDS
    server, outcome = _serve_with(fail=MAX_FAILED_FORWARDS - 1)
    dealer = Dealer(server.endpoint)
    try:
        for request_id in range(MAX_FAILED_FORWARDS):
            dealer.send(protocol.eval_request(request_id, planes(2, request_id), "current"))
            reply = dealer.replies(1, timeout_s=20)[request_id]
            if request_id < MAX_FAILED_FORWARDS - 1:
                assert reply.header["code"] == protocol.SERVER_ERROR
                assert "out of memory" in reply.header["msg"]
            else:                                  # the device came back: a real answer
                assert reply.header["k"] == "result", reply.header
        assert outcome.empty() and server.failed_forwards == 0
    finally:
        server.stop()
    assert outcome.get(timeout=10) is None


def test_a_device_that_is_gone_stops_the_server_loudly():
    from inference_server.server import MAX_FAILED_FORWARDS
    server, outcome = _serve_with(fail=10 ** 6)
    dealer = Dealer(server.endpoint)
    try:
        for request_id in range(MAX_FAILED_FORWARDS):
            dealer.send(protocol.eval_request(request_id, planes(2, request_id), "current"))
            dealer.replies(1, timeout_s=20)
        err = outcome.get(timeout=10)
    finally:
        server.stop()
    assert isinstance(err, RuntimeError) and "forward passes failed in a row" in str(err)
    assert "out of memory" in str(err)
