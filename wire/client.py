"""The socket evaluator: a DEALER connected to the inference server. Imports zmq, numpy and
msgpack, never torch.

It implements the evaluator interface of `network.batch_evaluator` (evaluate, submit,
receive). Batches go out without copying (`copy=False`); any number may be in flight (workers
keep two). Reliability follows the zguide's Lazy Pirate: when a request has had no reply for
`timeout_s` since it was (last) sent - counted per request, so one lost request is noticed
while replies to others flow - the socket is closed, a fresh one connects, and every
outstanding request is sent again with its original id; replies whose id is not outstanding
(stale, duplicate) are discarded, so no reply ever reaches the wrong request. A request sent
`retries` + 1 times without a reply raises `ServerUnavailable`. An eval the server answers
"busy" (its queue is full) is sent again after a back-off, up to MAX_BUSY_RETRIES times.
With `should_stop` (e.g. a role's signal flag), a wait for a reply looks at it every
STOP_POLL_S and, once it is true, gives the reply STOP_GRACE_S more, then raises ClientStopped:
a server that never answers cannot keep a stopping process.
"""
from __future__ import annotations

import hashlib
import itertools
import math
import os
import time
from collections import OrderedDict

import numpy as np
import zmq

from wire import protocol

MAX_BUSY_RETRIES = 100        # then the busy error reaches the caller
BUSY_BACKOFF_S = (0.005, 1.0)    # first and longest wait before an eval refused as busy goes again
STOP_POLL_S = 0.1             # seconds between looks at should_stop() while a reply is awaited
STOP_GRACE_S = 1.0            # seconds a reply may still take once should_stop() is true


class ServerUnavailable(ConnectionError):
    """No reply from the server after all retries."""


class ClientStopped(Exception):
    """should_stop() turned true while a reply was awaited, and STOP_GRACE_S more passed
    without it. The request is left unanswered; the process is stopping."""


class ServerError(RuntimeError):
    """The server answered a request with an error reply."""

    def __init__(self, code, message):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message



def receive_resubmitting_when_busy(receive, resubmit, ticket, should_stop):
    """receive(ticket); while the server answers 'busy' (its queue is full), waits with
    exponential back-off (10 ms doubling to 1 s) and submits the same request again with
    resubmit() -> ticket. Any other error, or should_stop() turning true, is raised."""
    delay = 0.01
    while True:
        try:
            return receive(ticket)
        except ServerError as err:
            if err.code != "busy" or should_stop():
                raise
            time.sleep(delay)
            delay = min(1.0, delay * 2)
            ticket = resubmit()

class InferenceClient:
    """Evaluator over the wire. Not thread-safe: one thread per client.

    The planes array given to `submit` must stay unchanged until its `receive` returns: it is
    sent without a copy, and sent again after a reconnect. Arrays returned by `receive` are
    read-only views of the reply frames.
    """

    def __init__(self, endpoint: str, *, slot: str = "current", timeout_s: float = 10.0,
                 retries: int = 5, context: zmq.Context | None = None,
                 server_public_key: str | bytes | None = None, key_pair=None,
                 should_stop=None, clock=time.monotonic):
        """server_public_key: the Z85 CURVE public key of a server that uses CURVE (remote
        hosts); key_pair: this client's (public, secret) Z85 keys, which such a server must
        allow (wire.keys), or None for a fresh pair per connection; should_stop:
        None or a callable, see the top (also settable later as an attribute); clock: monotonic
        seconds that send times and timeouts are read on (tests move theirs on)."""
        self.endpoint = endpoint
        self.server_public_key = (server_public_key.encode() if isinstance(server_public_key, str)
                                  else server_public_key)
        self.key_pair = key_pair
        self.slot = slot
        self.timeout_s = float(timeout_s)
        self.retries = int(retries)
        self.context = context or zmq.Context.instance()
        self.should_stop = should_stop
        self.clock = clock
        self.model_version = None          # version that answered the latest received result
        self.reconnects = 0
        self.stale_replies = 0
        self.busy_replies = 0
        self._ids = itertools.count(int.from_bytes(os.urandom(3), "little") << 20)
        self._in_flight: OrderedDict[int, list] = OrderedDict()  # request id -> frames (kept for resending)
        self._sent_at: dict[int, float] = {}         # request id -> monotonic time it was last sent
        self._timeout: dict[int, float] = {}         # request id -> seconds it may go unanswered
        self._attempts: dict[int, int] = {}          # request id -> times sent again on a reconnect
        self._busy: dict[int, int] = {}              # eval id -> busy answers so far
        self._retry_at: dict[int, float] = {}        # eval id refused as busy -> when to send it again
        self._done: dict[int, protocol.Reply] = {}   # request id -> protocol.Reply
        self._abandoned: set[int] = set()            # ids given up after ServerUnavailable
        self._socket = None
        self._connect()

    # -- the evaluator interface --------------------------------------------------------------

    def evaluate(self, planes: np.ndarray):
        """uint8 [B, P, N, N] -> (logits float32 [B, N*N+1], values float32 [B])."""
        return self.receive(self.submit(planes))

    __call__ = evaluate          # an evaluator is a callable too (the search takes one)

    def submit(self, planes: np.ndarray, slot: str | None = None) -> int:
        """Send one batch; returns its ticket (the request id)."""
        request_id = next(self._ids)
        self._busy[request_id] = 0         # an eval: a busy answer sends it again later
        self._send(request_id, protocol.eval_request(request_id, planes, slot or self.slot))
        return request_id

    def receive(self, ticket: int, timeout_s: float | None = None):
        """Block until the reply to `ticket` arrives -> (logits, values). Raises ServerError
        on an error reply, ServerUnavailable when the server stays silent."""
        reply = self._wait(ticket, timeout_s)
        if reply.kind == "error":
            raise ServerError(reply.header.get("code"), reply.header.get("msg"))
        if reply.kind != "result":
            raise ServerError(protocol.BAD_KIND, f"expected a result, got {reply.kind!r}")
        self.model_version = reply.header["version"]
        return reply.logits, reply.values

    @property
    def in_flight(self) -> int:
        return len(self._in_flight)

    # -- admin --------------------------------------------------------------------------------

    def stats(self, timeout_s: float | None = None) -> dict:
        request_id = next(self._ids)
        self._send(request_id, protocol.stats_request(request_id), timeout_s)
        reply = self._wait(request_id, timeout_s)
        if reply.kind != "stats":
            raise ServerError(reply.header.get("code", reply.kind), reply.header.get("msg", ""))
        return reply.header["stats"]

    def reload(self, slot: str, path: str = "", *, data: bytes | None = None,
               timeout_s: float = 120.0) -> int:
        """Ask the server to load `path` (a file on the server's host) or the checkpoint bytes
        `data` into `slot`; returns the new version or raises ServerError(reload_failed) when
        the checkpoint is refused. Bytes go with their sha256, which the server checks before
        it loads them."""
        digest = hashlib.sha256(data).hexdigest() if data is not None else None
        upload = None
        if data is not None and len(data) > protocol.CHUNK_BYTES:
            upload = self._upload(data, timeout_s)
            data = None
        request_id = next(self._ids)
        self._send(request_id, protocol.reload_request(request_id, slot, path, data, upload, digest),
                   timeout_s)
        reply = self._wait(request_id, timeout_s)
        if reply.kind != "reloaded":
            raise ServerError(reply.header.get("code", reply.kind), reply.header.get("msg", ""))
        return reply.header["version"]

    def _upload(self, data, timeout_s):
        """Sends `data` in chunks of protocol.CHUNK_BYTES, each acknowledged; returns the id."""
        upload = int.from_bytes(os.urandom(7), "little")
        view = memoryview(data).cast("B")
        for offset in range(0, len(view), protocol.CHUNK_BYTES):
            request_id = next(self._ids)
            chunk = view[offset:offset + protocol.CHUNK_BYTES]
            self._send(request_id, protocol.upload_request(request_id, upload, offset, len(view), chunk),
                       timeout_s)
            reply = self._wait(request_id, timeout_s)
            if reply.kind != "uploaded":
                raise ServerError(reply.header.get("code", reply.kind), reply.header.get("msg", ""))
        return upload

    def close(self):
        if self._socket is not None:
            self._socket.close(0)
            self._socket = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- Lazy Pirate --------------------------------------------------------------------------

    def _connect(self):
        socket = self.context.socket(zmq.DEALER)
        socket.setsockopt(zmq.LINGER, 0)
        if self.server_public_key:
            public, secret = self.key_pair or zmq.curve_keypair()
            socket.curve_serverkey = self.server_public_key
            socket.curve_publickey = public
            socket.curve_secretkey = secret
        socket.connect(self.endpoint)
        self._socket = socket

    def _send(self, request_id, frames, timeout_s=None):
        self._in_flight[request_id] = frames
        self._sent_at[request_id] = self.clock()
        if timeout_s is not None or request_id not in self._timeout:
            self._timeout[request_id] = self.timeout_s if timeout_s is None else float(timeout_s)
        self._attempts.setdefault(request_id, 0)
        self._transmit(frames)

    def _transmit(self, frames):
        """Sends without blocking. With no connection to queue on (e.g. a CURVE handshake
        the server refused), the message is dropped like a lost one: its timeout resends it."""
        try:
            self._socket.send_multipart(frames, zmq.NOBLOCK, copy=False)
        except zmq.Again:
            pass

    def _forget(self, request_id):
        self._in_flight.pop(request_id, None)
        self._sent_at.pop(request_id, None)
        self._timeout.pop(request_id, None)
        self._attempts.pop(request_id, None)
        self._busy.pop(request_id, None)
        self._retry_at.pop(request_id, None)

    def _wait(self, ticket, timeout_s):
        if timeout_s is not None and ticket in self._timeout:
            self._timeout[ticket] = float(timeout_s)
        stop_at = None                 # monotonic time ClientStopped is raised, once stopping
        while True:
            reply = self._done.pop(ticket, None)
            if reply is not None:
                return reply
            if ticket not in self._in_flight:
                if ticket in self._abandoned:
                    self._abandoned.discard(ticket)
                    raise ServerUnavailable(f"request {ticket} was abandoned: the server stayed silent")
                raise KeyError(f"unknown or already received ticket {ticket}")
            now = self.clock()
            for request_id, when in list(self._retry_at.items()):
                if when <= now:                     # refused as busy: its turn again
                    del self._retry_at[request_id]
                    self._send(request_id, self._in_flight[request_id])
            deadlines = {request_id: self._sent_at[request_id] + self._timeout[request_id]
                         for request_id in self._in_flight if request_id not in self._retry_at}
            wake = min([*deadlines.values(), *self._retry_at.values()])
            left = wake - now
            if self.should_stop is not None:
                if stop_at is None and self.should_stop():
                    stop_at = now + STOP_GRACE_S
                if stop_at is not None and now >= stop_at:
                    raise ClientStopped(f"stopped while waiting for {self.endpoint} to answer "
                                        f"request {ticket}")
                left = min(left, STOP_POLL_S if stop_at is None else stop_at - now)
            if left > 0 and self._socket.poll(max(1, math.ceil(left * 1000)), zmq.POLLIN):
                self._read_available()
                continue
            now = self.clock()
            overdue = [request_id for request_id, when in deadlines.items() if now >= when]
            if overdue:
                self._timed_out(overdue, ticket)

    def _read_available(self):
        while True:
            try:
                frames = self._socket.recv_multipart(zmq.NOBLOCK, copy=False)
            except zmq.Again:
                return
            try:
                reply = protocol.parse_reply(frames)
            except protocol.ProtocolError:
                self.stale_replies += 1
                continue
            request_id = reply.request_id
            if request_id not in self._in_flight or request_id in self._retry_at:
                self.stale_replies += 1          # an answer to something no longer asked
                continue
            if reply.kind == "error" and reply.header.get("code") == protocol.BUSY \
                    and request_id in self._busy and self._busy[request_id] < MAX_BUSY_RETRIES:
                self.busy_replies += 1
                tries = self._busy[request_id] = self._busy[request_id] + 1
                first, longest = BUSY_BACKOFF_S
                when = self.clock() + min(longest, first * 2 ** min(tries, 20))
                self._retry_at[request_id] = when
                self._sent_at[request_id] = when     # its timeout counts from the next send
                continue
            self._forget(request_id)
            self._done[request_id] = reply

    def _timed_out(self, overdue, ticket):
        """Requests `overdue` had no reply for their timeout: reconnect and send every
        outstanding request again. One sent `retries` + 1 times is given up: ServerUnavailable
        now if it is `ticket`, else when its own receive comes."""
        given_up = []
        for request_id in overdue:
            if self._attempts[request_id] >= self.retries:
                self._forget(request_id)
                given_up.append(request_id)
        if ticket in given_up:
            self._abandoned.update(r for r in given_up if r != ticket)
            raise ServerUnavailable(f"no reply from {self.endpoint} to request {ticket} after "
                                    f"{self.retries} retries of {self.timeout_s:g}s")
        self._abandoned.update(given_up)
        if not self._in_flight:
            return
        self.reconnects += 1
        self.close()
        self._connect()
        self._retry_at.clear()
        now = self.clock()     # one send time: requests resent together time out together
        for request_id, frames in self._in_flight.items():
            self._attempts[request_id] += 1
            self._sent_at[request_id] = now
            self._transmit(frames)
