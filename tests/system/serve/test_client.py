"""The socket client against a scripted ROUTER in a thread of this process: several batches in
flight, Lazy Pirate reconnect and resend, stale and duplicate replies discarded by request id."""
import threading
import time

import numpy as np
import pytest
import zmq

from wire import protocol
from wire.client import InferenceClient, ServerError, ServerUnavailable


def rows(request):
    """A fake network: each row's logits are filled with the sum of its planes."""
    x = np.frombuffer(request.payload, np.uint8).reshape(request.count, -1)
    sums = x.sum(axis=1).astype(np.float32)
    logits = np.repeat(sums[:, None], request.board_size ** 2 + 1, axis=1)
    return logits, sums / 1000


class ScriptedServer:
    """A ROUTER on a free loopback port; `script(router, identity, request, n)` answers the n-th
    request (or not). Stops within 0.1 s of stop()."""

    def __init__(self, script):
        self.context = zmq.Context.instance()
        self.router = self.context.socket(zmq.ROUTER)
        self.router.setsockopt(zmq.LINGER, 0)
        port = self.router.bind_to_random_port("tcp://127.0.0.1")
        self.endpoint = f"tcp://127.0.0.1:{port}"
        self.script = script
        self.received = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            if not self.router.poll(100):
                continue
            identity, *frames = self.router.recv_multipart()
            request = protocol.parse_request(frames, 4096)
            self.received.append((identity, request.request_id))
            self.script(self.router, identity, request, len(self.received))

    def stop(self):
        self._stop.set()
        self._thread.join(5)
        self.router.close(0)


def answer(router, identity, request, version=1):
    logits, values = rows(request)
    router.send_multipart([identity, *protocol.result_reply(request.request_id, request.slot, version,
                                                              logits, values)])


def batch(seed, count=3):
    return (np.random.default_rng(seed).random((count, 17, 9, 9)) < 0.5).astype(np.uint8)


@pytest.fixture
def scripted():
    servers = []

    def make(script):
        servers.append(ScriptedServer(script))
        return servers[-1]
    yield make
    for server in servers:
        server.stop()


def test_two_in_flight_received_out_of_order(scripted):
    server = scripted(lambda r, i, req, n: answer(r, i, req, version=4))
    with InferenceClient(server.endpoint, timeout_s=2) as client:
        a, b = batch(1), batch(2, count=5)
        ta, tb = client.submit(a), client.submit(b)
        assert client.in_flight == 2
        lb, vb = client.receive(tb)
        la, va = client.receive(ta)
        assert client.model_version == 4
        np.testing.assert_array_equal(client(a)[0], la)       # callable, as the search takes it
        np.testing.assert_array_equal(la[:, 0], a.reshape(3, -1).sum(1))
        np.testing.assert_array_equal(lb[:, 0], b.reshape(5, -1).sum(1))
        assert lb.shape == (5, 82) and not lb.flags.writeable
        with pytest.raises(KeyError):
            client.receive(ta)


def test_stale_and_duplicate_replies_are_discarded(scripted):
    def script(router, identity, request, n):
        # an answer to an id nobody asked for, then the real answer twice
        stale = protocol.Request("eval", request.request_id + 1000, slot=request.slot,
                                 count=1, board_size=9, payload=bytes(17 * 81))
        answer(router, identity, stale, version=99)
        answer(router, identity, request)
        answer(router, identity, request)
    server = scripted(script)
    with InferenceClient(server.endpoint, timeout_s=2) as client:
        for seed in range(3):
            x = batch(seed)
            logits, _ = client.evaluate(x)
            np.testing.assert_array_equal(logits[:, 0], x.reshape(3, -1).sum(1))
            assert client.model_version == 1
        assert client.stale_replies >= 4


def test_lazy_pirate_resends_after_silence(scripted):
    # The first request is swallowed; the client times out, reconnects and resends it.
    def script(router, identity, request, n):
        if n > 1:
            answer(router, identity, request)
    server = scripted(script)
    with InferenceClient(server.endpoint, timeout_s=0.3, retries=3) as client:
        x = batch(7)
        logits, _ = client.evaluate(x)
        np.testing.assert_array_equal(logits[:, 0], x.reshape(3, -1).sum(1))
        assert client.reconnects == 1
    identities = [identity for identity, _ in server.received]
    ids = [request_id for _, request_id in server.received]
    assert ids[0] == ids[1] and identities[0] != identities[1]     # same id, fresh socket


def test_gives_up_after_retries(scripted):
    server = scripted(lambda *args: None)
    with InferenceClient(server.endpoint, timeout_s=0.1, retries=2) as client:
        ticket, other = client.submit(batch(0)), client.submit(batch(1))
        with pytest.raises(ServerUnavailable):
            client.receive(ticket)
        assert client.reconnects == 2 and client.in_flight == 0
        with pytest.raises(ServerUnavailable):       # sent with it, given up with it
            client.receive(other)
        with pytest.raises(KeyError):
            client.receive(other)


class SteppedClock:
    """time.monotonic() plus the seconds the test has stepped it on."""

    def __init__(self):
        self.offset = 0.0

    def __call__(self):
        return time.monotonic() + self.offset


def test_requests_resent_together_are_given_up_together(scripted):
    # `other` is sent 40 ms after `ticket` by the client's clock, so only `ticket` is overdue at
    # the first timeout; the reconnect resends both, and from then on they share their send
    # time and attempts.
    server = scripted(lambda *args: None)
    clock = SteppedClock()
    with InferenceClient(server.endpoint, timeout_s=0.1, retries=2, clock=clock) as client:
        ticket = client.submit(batch(0))
        clock.offset += 0.04
        other = client.submit(batch(1))
        with pytest.raises(ServerUnavailable):
            client.receive(ticket)
        assert client.reconnects == 2 and client.in_flight == 0
        with pytest.raises(ServerUnavailable):
            client.receive(other)
    assert len(server.received) == 6          # each sent once and resent twice


def test_one_lost_request_is_noticed_while_others_flow(scripted):
    # The server never answers the first request but answers every other at once. The lost
    # one's timeout counts from its own send, so replies to the others do not hide it.
    def script(router, identity, request, n):
        if n > 1:
            answer(router, identity, request)
    server = scripted(script)
    clock = SteppedClock()
    with InferenceClient(server.endpoint, timeout_s=0.3, retries=3, clock=clock) as client:
        lost = client.submit(batch(0))
        for seed in range(1, 40):                    # ~0.6 s of other traffic, 15 ms apart
            client.evaluate(batch(seed))
            clock.offset += 0.015
        assert client.reconnects >= 1                # noticed and resent while others flowed
        logits, _ = client.receive(lost)
        np.testing.assert_array_equal(logits[:, 0], batch(0).reshape(3, -1).sum(1))


def test_busy_answers_are_retried_after_a_back_off(scripted):
    def script(router, identity, request, n):
        if n <= 3:
            router.send_multipart([identity, *protocol.error_reply(request.request_id, protocol.BUSY,
                                                                   "full")])
        else:
            answer(router, identity, request)
    server = scripted(script)
    with InferenceClient(server.endpoint, timeout_s=2, retries=1) as client:
        logits, _ = client.evaluate(batch(5))
        np.testing.assert_array_equal(logits[:, 0], batch(5).reshape(3, -1).sum(1))
        assert client.busy_replies == 3 and client.reconnects == 0


def test_error_reply_raises(scripted):
    def script(router, identity, request, n):
        router.send_multipart([identity, *protocol.error_reply(request.request_id, "bad_shape", "no")])
    server = scripted(script)
    with InferenceClient(server.endpoint, timeout_s=2) as client:
        with pytest.raises(ServerError) as info:
            client.evaluate(batch(0))
        assert info.value.code == "bad_shape"


def test_client_does_not_import_torch():
    import subprocess
    import sys
    code = ("import sys, wire.client, wire.protocol, network.batch_evaluator;"
            "sys.exit(1 if 'torch' in sys.modules else 0)")
    assert subprocess.run([sys.executable, "-c", code], timeout=60).returncode == 0
