"""The batching inference server: one ROUTER socket, one loop, one forward pass at a time.

Requests for a slot queue until `max_batch` positions, until no request of the recent sizes
could still join them, or `max_wait_us` after the first; the
batch is gathered into the runner's staging buffer, evaluated once, and each request gets its
own rows back with the model version that answered. With `overlap` the forward pass runs on its
own thread (inference_server.pipeline) while the loop gathers the next batch. Between batches
the loop swaps in reloaded models and polls watched checkpoint files. Only the loop's thread
touches the ROUTER socket. The queued requests are inference_server.queues, binding
inference_server.binding, chunked checkpoint uploads inference_server.uploads, the checks before
a start inference_server.startup; the role that runs it is `fastgo serve` (roles.serve).
"""
from __future__ import annotations

import logging
import math
import time

import numpy as np
import zmq

from inference_server.binding import StartupError, bind
from inference_server.counters import ServerCounters
from inference_server.pipeline import BatchJob, ForwardThread
from inference_server.queues import RequestQueues
from inference_server.slots import Reloader, Slot, file_signature, initial_slots
from inference_server.uploads import Uploads, check_sha256
from network.backend_choice import BackendSetup
from rundata.config import Config
from wire import protocol
from wire.keys import CurveKeyError, make_server

log = logging.getLogger("fastgo.serve")

SHUTDOWN_LINGER_MS = 1000          # time the last replies get to leave at shutdown
# A reload naming an unknown slot whose name starts with this creates the slot once the model
# has loaded (policy-only self-play loads each worker's opponent into its own slot). At most
# MAX_CREATED_SLOTS such slots; a refused load creates nothing.
CREATED_SLOT_PREFIX = "opponent-"
MAX_CREATED_SLOTS = 256
# Forward passes failing in a row before the server stops loudly: one failure (an out-of-memory
# batch) answers its requests with errors and serving goes on; this many in a row means the
# device is gone (a CUDA device lost mid-run), and the supervisor's restart is the way back
# (with server.device = "auto", onto the CPU when no CUDA device is left).
MAX_FAILED_FORWARDS = 8


class InferenceServer:
    """The server of `config`: binds its endpoint, then builds each slot's runner; `setup`
    (network.backend_choice.BackendSetup; None: no shards, nothing said) reaches every runner
    it builds, at start and on each reload."""

    def __init__(self, config: Config, context: zmq.Context | None = None, *,
                 setup: BackendSetup | None = None):
        self.config = config
        self.server = config.server
        # Every slot serves config.model's board size and encoding (reloads are checked
        # against them), so the largest request is known before any model is built.
        largest = config.model.planes * config.model.board_size ** 2
        self.context = context or zmq.Context.instance()
        # The endpoint first: a server that cannot bind says so before it loads any model.
        self.socket = self.context.socket(zmq.ROUTER)
        self.socket.setsockopt(zmq.LINGER, 0)
        # No message is larger than the largest eval (checkpoint bytes come in upload chunks).
        self.socket.setsockopt(zmq.MAXMSGSIZE, self.server.max_request_positions * largest
                               + protocol.CHUNK_BYTES + (64 << 10))
        self.uploads = Uploads()
        try:
            self.curve_allow = None   # with CURVE: counts the clients ZAP refused
            if self.server.curve_secret_key_file:
                try:
                    self.curve_allow = make_server(self.socket, self.server.curve_secret_key_file,
                                                   self.server.curve_allowed, what="server")
                except CurveKeyError as err:
                    raise StartupError(f"server.curve_secret_key_file / curve_allowed: {err}") from None
            bind(self.socket, self.server.endpoint)
            self.slots = initial_slots(config.model, config.server, setup=setup)
        except BaseException:
            self.socket.close(0)
            raise
        self.reloader = Reloader(config.model, config.server,
                                 loaded={name: slot.content_hash for name, slot in self.slots.items()},
                                 setup=setup)
        self.stats = ServerCounters()
        self.failed_forwards = 0      # forward passes failed in a row (MAX_FAILED_FORWARDS)
        self.queues = RequestQueues(self.slots, self.server.max_request_positions * largest,
                                    self.server.max_wait_us / 1e6)
        self._stop = False
        self._next_watch = 0.0
        self.endpoint = self.socket.getsockopt_string(zmq.LAST_ENDPOINT)
        self._buffer = 0          # staging buffer of the last gathered batch
        self.forward = ForwardThread(self.context) if self.server.overlap else None

    # -- loop ---------------------------------------------------------------------------------

    def stop(self, *_):
        self._stop = True

    def serve_forever(self):
        poller = zmq.Poller()
        poller.register(self.socket, zmq.POLLIN)
        if self.forward is not None:
            poller.register(self.forward.signal, zmq.POLLIN)
        while not self._stop:
            if self.forward is not None and not self.forward.alive:
                self.close()
                raise RuntimeError(f"the forward thread died: {self.forward.failure!r}")
            poller.poll(self._poll_timeout_ms())
            self._drain()
            if self.forward is not None:
                self._collect()
            self._run_ready_batches()
            self._apply_reloads()
            now = time.monotonic()
            if now >= self._next_watch:
                self._next_watch = now + self.server.watch_interval_s
                self._watch()
        self.close()

    def close(self):
        """Answers every request still here (queued, in the socket, waiting for a reload) with
        a shutting_down error, gives those replies SHUTDOWN_LINGER_MS to leave, and stops."""
        if self.socket.closed:
            return
        if self.forward is not None:
            deadline = time.monotonic() + 5.0
            while self.forward.outstanding and self.forward.alive and time.monotonic() < deadline:
                self.forward.signal.poll(100)
                self._collect()
            self.forward.stop()
        message = "the server is shutting down"
        for pending in self.queues.drain():
            self._send(pending.identity, protocol.error_reply(pending.request_id,
                                                              protocol.SHUTTING_DOWN, message))
        for identity, request_id in self.reloader.abandon():
            self._send(identity, protocol.error_reply(request_id, protocol.SHUTTING_DOWN, message))
        for _ in range(10000):
            try:
                frames = self.socket.recv_multipart(zmq.NOBLOCK, copy=False)
            except zmq.Again:
                break
            if len(frames) < 2:
                continue
            try:
                request_id = protocol.parse_request(frames[1:], self.server.max_request_positions,
                                                    self.server.max_checkpoint_bytes).request_id
            except protocol.ProtocolError as err:
                request_id = err.request_id
            self._send(frames[0].bytes, protocol.error_reply(request_id, protocol.SHUTTING_DOWN, message))
        self.socket.close(SHUTDOWN_LINGER_MS)

    def _poll_timeout_ms(self):
        waiting = self.queues.waiting_deadlines()
        if not waiting or (self.forward is not None and self.forward.outstanding >= 2):
            return 100            # nothing due, or the forward thread's signal will wake us
        left = min(waiting) - time.perf_counter()
        # At most 1 ms late; never spins; and at most 100 ms, so a stop signal is seen soon
        # (a signal does not end a poll early) whatever max_wait_us is.
        return min(100, max(0, math.ceil(left * 1000)))

    def _drain(self):
        """Take every queued message, but stop early once a slot has a full batch."""
        socket, cap = self.socket, self.server.max_batch
        for _ in range(10000):
            try:
                frames = socket.recv_multipart(zmq.NOBLOCK, copy=False)
            except zmq.Again:
                return
            t0, c0 = time.perf_counter(), time.thread_time()
            self._handle(frames, t0)
            self.stats.overhead_s += time.perf_counter() - t0
            self.stats.overhead_cpu_s += time.thread_time() - c0
            if any(n >= cap for n in self.queues.positions.values()):
                return

    def _handle(self, frames, now):
        if len(frames) < 2:
            self.stats.dropped += 1
            return
        identity = frames[0].bytes
        try:
            request = protocol.parse_request(frames[1:], self.server.max_request_positions,
                                             self.server.max_checkpoint_bytes)
            if request.kind == "eval":
                self._enqueue(identity, request, now)
            elif request.kind == "stats":
                self._send(identity, protocol.stats_reply(request.request_id, self.snapshot()))
            elif request.kind == "upload":
                self._upload(identity, request, now)
            elif request.kind == "reload":
                self._reload(identity, request)
        except protocol.ProtocolError as err:
            self.stats.error(err.code)
            refused = sum(self.stats.errors.values())
            if refused <= 20 or refused % 1000 == 0:     # a flood of garbage must not flood the log
                log.warning("refused a message (%d so far): %s", refused, err)
            self._send(identity, protocol.error_reply(err.request_id, err.code, err.message))

    def _may_create(self, name) -> bool:
        created = sum(1 for n in self.slots if n.startswith(CREATED_SLOT_PREFIX)
                      and n not in self.server.slots)
        return name.startswith(CREATED_SLOT_PREFIX) and created < MAX_CREATED_SLOTS

    def _create_slot(self, name, runner, version, content_hash):
        self.slots[name] = Slot(name, runner, version, content_hash=content_hash)
        self.queues.add(name)
        log.info("slot %s: created", name)

    def _upload(self, identity, request, now):
        received = self.uploads.add(identity, request, now)
        self._send(identity, protocol.uploaded_reply(request.request_id, request.upload, received))

    def _reload(self, identity, request):
        """Queues a reload of a slot (an existing one, or one CREATED_SLOT_PREFIX allows) from
        a path, bytes sent along, or a finished upload; the reply comes once it loaded or was
        refused. Raises ProtocolError."""
        if request.slot not in self.slots and not self._may_create(request.slot):
            raise protocol.ProtocolError(protocol.UNKNOWN_SLOT, f"no slot {request.slot!r}",
                                         request.request_id)
        if request.upload >= 0:
            data = self.uploads.take(identity, request.upload, request.request_id)
            path = f"<{len(data)} bytes uploaded by a client>"
        elif request.data is not None:   # bytes outlive this frame: copy them
            path, data = f"<{len(request.data)} bytes from a client>", bytes(request.data)
        else:
            path, data = request.path, None
        if request.sha256 and data is not None:
            check_sha256(data, request.sha256, request.request_id)
        if not self.reloader.request(request.slot, path, waiter=(identity, request.request_id),
                                     data=data):
            raise protocol.ProtocolError(protocol.BUSY, "too many reloads waiting; try again later",
                                         request.request_id)

    def _enqueue(self, identity, request, now):
        slot = self.slots.get(request.slot)
        if slot is None:
            raise protocol.ProtocolError(protocol.UNKNOWN_SLOT, f"no slot {request.slot!r} "
                                         f"(serving {list(self.slots)})", request.request_id)
        cfg = slot.runner.config
        if (request.board_size, request.planes) != (cfg.board_size, cfg.planes):
            raise protocol.ProtocolError(
                protocol.BAD_SHAPE, f"slot {slot.name} serves {cfg.board_size}x{cfg.board_size} "
                f"with {cfg.planes} planes, got {request.board_size}x{request.board_size} with "
                f"{request.planes}", request.request_id)
        self.queues.push(slot.name, identity, request, now)
        self.stats.requests += 1

    def _run_ready_batches(self):
        cap = self.server.max_batch
        while self.forward is None or self.forward.outstanding < 2:
            name = self.queues.next_ready(time.perf_counter(), cap)
            if name is None:
                return
            job = self._gather(name)
            if self.forward is None:
                job.run()
                self._finish(job)
            else:
                self.forward.submit(job)

    def _collect(self):
        for job in self.forward.collect():
            self._finish(job)

    def _gather(self, name) -> BatchJob:
        """Take whole requests (up to max_batch positions, or one larger request) into a
        staging buffer; buffers alternate so the next batch never overwrites a running one."""
        t0, c0 = time.perf_counter(), time.thread_time()
        slot = self.slots[name]
        batch, total = self.queues.take(name, self.server.max_batch)
        self._buffer ^= 1
        rows = slot.runner.staging(total, self._buffer).reshape(total, -1)
        offset = 0
        for request in batch:
            rows[offset:offset + request.count] = np.frombuffer(
                request.payload, dtype=np.uint8).reshape(request.count, -1)
            offset += request.count
            self.stats.queue_wait_s += t0 - request.t_recv
        job = BatchJob(name, slot.version, slot.runner, self._buffer, total,
                       [(r.identity, r.request_id, r.count) for r in batch])
        self.stats.overhead_s += time.perf_counter() - t0
        self.stats.overhead_cpu_s += time.thread_time() - c0
        return job

    def _finish(self, job: BatchJob):
        """Scatter a finished batch: each request gets its rows and the version that ran."""
        t0, c0 = time.perf_counter(), time.thread_time()
        stats = self.stats
        if job.error is not None:   # a failing forward answers errors (MAX_FAILED_FORWARDS)
            log.error("forward pass failed on slot %s: %r", job.slot, job.error)
            for identity, request_id, _ in job.requests:
                stats.error(protocol.SERVER_ERROR)
                self._send(identity, protocol.error_reply(request_id, protocol.SERVER_ERROR,
                                                          f"forward failed: {job.error}"))
            self.failed_forwards += 1
            if self.failed_forwards >= MAX_FAILED_FORWARDS:
                raise RuntimeError(f"{self.failed_forwards} forward passes failed in a row "
                                   f"(the last: {str(job.error)[:200]}); the device is gone?")
            return
        self.failed_forwards = 0
        offset, logits, values = 0, job.logits, job.values
        for identity, request_id, count in job.requests:
            stop = offset + count
            self._send(identity, protocol.result_reply(request_id, job.slot, job.version,
                                                       logits[offset:stop], values[offset:stop]))
            offset = stop
        stats.batches += 1
        stats.positions += job.count
        stats.forward_s += job.forward_s
        stats.overhead_s += time.perf_counter() - t0
        stats.overhead_cpu_s += time.thread_time() - c0

    def _send(self, identity, frames):
        try:
            self.socket.send_multipart([identity, *frames], copy=False)
        except zmq.ZMQError as err:        # peer gone or HWM: its reply is lost, nobody else's
            self.stats.dropped += 1
            log.debug("reply dropped: %s", err)

    # -- hot reload ---------------------------------------------------------------------------

    def _apply_reloads(self):
        while True:
            try:
                job = self.reloader.done.get_nowait()
            except Exception:
                return
            self.reloader.busy.discard((job.slot, job.path))
            slot = self.slots.get(job.slot)
            if slot is None and not job.error:     # a created slot (CREATED_SLOT_PREFIX)
                self._create_slot(job.slot, job.runner, job.version, job.content_hash)
                slot = self.slots[job.slot]
            if slot is not None and job.path == slot.path:
                slot.signature = job.signature
            if job.error:
                self.stats.reloads_refused += 1
                self.stats.last_reload_error = job.error
                log.warning("slot %s: refused %s, keeping version %s: %s", job.slot, job.path,
                            slot.version if slot is not None else "none", job.error)
                for identity, request_id in job.waiters:
                    self._send(identity, protocol.error_reply(request_id, protocol.RELOAD_FAILED, job.error))
                continue
            if job.unchanged:                      # the weights in service (Reloader.loaded)
                slot.version = job.version
                self.stats.reloads_unchanged += 1
                log.debug("slot %s: %s holds the weights in service (version %d)", job.slot,
                          job.path, job.version)
            else:
                slot.runner, slot.version, slot.content_hash = job.runner, job.version, job.content_hash
                self.stats.reloads += 1
                log.info("slot %s: now serving %s version %d (%s)", job.slot, job.path,
                         job.version, job.runner.config.name)
            for identity, request_id in job.waiters:
                self._send(identity, protocol.reloaded_reply(request_id, job.slot, job.version))

    def _watch(self):
        for slot in self.slots.values():
            if not slot.path or (slot.name, slot.path) in self.reloader.busy:
                continue
            signature = file_signature(slot.path)
            if signature is not None and signature != slot.signature:
                self.reloader.request(slot.name, slot.path, signature=signature)

    # -- stats --------------------------------------------------------------------------------

    def snapshot(self) -> dict:
        """The stats reply's figures (ServerCounters.figures)."""
        return self.stats.figures(self.server, self.slots, sum(self.queues.positions.values()),
                                  self.curve_allow.denied if self.curve_allow is not None else 0)
