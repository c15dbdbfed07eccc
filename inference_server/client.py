"""The socket evaluator: a DEALER connected to the inference server. Used by self-play workers,
the arena and the GTP engine; imports zmq, numpy and msgpack, never torch.

It implements the evaluator interface of `inference_server.evaluator` (evaluate, submit,
receive). Batches go out without copying (`copy=False`); any number may be in flight (workers
keep two). Reliability follows the zguide's Lazy Pirate: when no reply arrives for `timeout_s`
while requests are outstanding, the socket is closed, a fresh one connects, and every
outstanding request is sent again with its original id; replies whose id is not outstanding
(stale, duplicate) are discarded, so no reply ever reaches the wrong request. After `retries`
silent timeouts in a row, `ServerUnavailable` is raised.
"""
from __future__ import annotations

import itertools
import os
import time
from collections import OrderedDict

import numpy as np
import zmq

from inference_server import protocol


class ServerUnavailable(ConnectionError):
    """No reply from the server after all retries."""


class ServerError(RuntimeError):
    """The server answered a request with an error reply."""

    def __init__(self, code, message):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class InferenceClient:
    """Evaluator over the wire. Not thread-safe: one thread per client.

    The planes array given to `submit` must stay unchanged until its `receive` returns: it is
    sent without a copy, and sent again after a reconnect. Arrays returned by `receive` are
    read-only views of the reply frames.
    """

    def __init__(self, endpoint: str, *, slot: str = "current", timeout_s: float = 10.0,
                 retries: int = 5, context: zmq.Context | None = None,
                 server_public_key: str | bytes | None = None):
        """server_public_key: the Z85 CURVE public key of a server that uses CURVE (remote
        hosts); each connection then gets a fresh client key pair."""
        self.endpoint = endpoint
        self.server_public_key = (server_public_key.encode() if isinstance(server_public_key, str)
                                  else server_public_key)
        self.slot = slot
        self.timeout_s = float(timeout_s)
        self.retries = int(retries)
        self.context = context or zmq.Context.instance()
        self.model_version = None          # version that answered the latest received result
        self.reconnects = 0
        self.stale_replies = 0
        self._ids = itertools.count(int.from_bytes(os.urandom(3), "little") << 20)
        self._in_flight = OrderedDict()    # request id -> frames (kept for resending)
        self._done = {}                    # request id -> protocol.Reply
        self._abandoned = set()            # ids given up after ServerUnavailable
        self._last_progress = time.monotonic()
        self._silent_timeouts = 0
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
        self._send(request_id, protocol.stats_request(request_id))
        reply = self._wait(request_id, timeout_s)
        if reply.kind != "stats":
            raise ServerError(reply.header.get("code", reply.kind), reply.header.get("msg", ""))
        return reply.header["stats"]

    def reload(self, slot: str, path: str = "", *, data: bytes | None = None,
               timeout_s: float = 120.0) -> int:
        """Ask the server to load `path` (a file on the server's host) or the checkpoint bytes
        `data` into `slot`; returns the new version or raises ServerError(reload_failed) when
        the checkpoint is refused."""
        request_id = next(self._ids)
        self._send(request_id, protocol.reload_request(request_id, slot, path, data))
        reply = self._wait(request_id, timeout_s)
        if reply.kind != "reloaded":
            raise ServerError(reply.header.get("code", reply.kind), reply.header.get("msg", ""))
        return reply.header["version"]

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
            public, secret = zmq.curve_keypair()
            socket.curve_serverkey = self.server_public_key
            socket.curve_publickey = public
            socket.curve_secretkey = secret
        socket.connect(self.endpoint)
        self._socket = socket

    def _send(self, request_id, frames):
        if not self._in_flight:
            self._last_progress = time.monotonic()
        self._in_flight[request_id] = frames
        self._socket.send_multipart(frames, copy=False)

    def _wait(self, ticket, timeout_s):
        timeout = self.timeout_s if timeout_s is None else float(timeout_s)
        while True:
            reply = self._done.pop(ticket, None)
            if reply is not None:
                return reply
            if ticket not in self._in_flight:
                if ticket in self._abandoned:
                    self._abandoned.discard(ticket)
                    raise ServerUnavailable(f"request {ticket} was abandoned: the server stayed silent")
                raise KeyError(f"unknown or already received ticket {ticket}")
            left = self._last_progress + timeout - time.monotonic()
            if left > 0 and self._socket.poll(max(1, int(left * 1000)), zmq.POLLIN):
                self._read_available()
                continue
            if time.monotonic() - self._last_progress >= timeout:
                self._reconnect()

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
            if self._in_flight.pop(reply.request_id, None) is None:
                self.stale_replies += 1          # an answer to something no longer asked
                continue
            self._done[reply.request_id] = reply
            self._last_progress = time.monotonic()
            self._silent_timeouts = 0

    def _reconnect(self):
        self._silent_timeouts += 1
        if self._silent_timeouts > self.retries:
            lost = list(self._in_flight)
            self._in_flight.clear()
            self._abandoned.update(lost)
            self._silent_timeouts = 0
            raise ServerUnavailable(f"no reply from {self.endpoint} after {self.retries} retries "
                                    f"of {self.timeout_s:g}s; {len(lost)} requests abandoned")
        self.reconnects += 1
        self.close()
        self._connect()
        self._last_progress = time.monotonic()
        for frames in self._in_flight.values():
            self._socket.send_multipart(frames, copy=False)
