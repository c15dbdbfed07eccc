"""The server's forward thread (`server.overlap = true`): batches run on a thread of their own
while the server loop parses, gathers the next batch and scatters the last one. At most two
batches are outstanding, staged in the runner's two buffers (they alternate), and they finish
in submission order. Each completion is signalled on an inproc PAIR socket that the server loop
polls beside its ROUTER, so the loop never spins and zmq sockets stay on their own threads.
"""
from __future__ import annotations

import collections
import queue
import threading
import time

import zmq


class BatchJob:
    """One gathered batch: requests [(identity, request_id, count)], rows staged in
    `runner.staging(count, buffer)`; after the forward pass, logits/values or error."""

    __slots__ = ("slot", "version", "runner", "buffer", "count", "requests",
                 "logits", "values", "error", "forward_s")

    def __init__(self, slot, version, runner, buffer, count, requests):
        self.slot = slot
        self.version = version
        self.runner = runner
        self.buffer = buffer
        self.count = count
        self.requests = requests
        self.logits = self.values = self.error = None
        self.forward_s = 0.0

    def run(self):
        start = time.perf_counter()
        try:
            self.logits, self.values = self.runner.run(self.count, buffer=self.buffer)
        except Exception as err:  # reported per request by the server loop
            self.error = err
        self.forward_s = time.perf_counter() - start


class ForwardThread:
    def __init__(self, context: zmq.Context):
        self._context = context
        self._address = f"inproc://fastgo-forward-{id(self)}"
        self.signal = context.socket(zmq.PAIR)      # polled by the server loop, read here
        self.signal.setsockopt(zmq.LINGER, 0)
        self.signal.bind(self._address)
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._done: collections.deque[BatchJob] = collections.deque()
        self.outstanding = 0                       # submitted, not yet collected (loop only)
        self.failure = None                        # what ended the thread, if not stop()
        self._thread = threading.Thread(target=self._work, name="forward", daemon=True)
        self._thread.start()

    @property
    def alive(self) -> bool:
        """False once the thread has ended (stop(), or a failure outside a job's forward
        pass): the server loop then stops rather than wait for jobs that will never finish."""
        return self._thread.is_alive()

    def submit(self, job: BatchJob):
        self.outstanding += 1
        self._jobs.put(job)

    def collect(self) -> list:
        """Finished jobs in submission order (call when `signal` is readable, or any time)."""
        while True:
            try:
                self.signal.recv(zmq.NOBLOCK)
            except zmq.Again:
                break
        finished = []
        while self._done:
            finished.append(self._done.popleft())
        self.outstanding -= len(finished)
        return finished

    def _work(self):
        notify = self._context.socket(zmq.PAIR)
        notify.setsockopt(zmq.LINGER, 0)
        notify.connect(self._address)
        try:
            while True:
                job = self._jobs.get()
                if job is None:
                    return
                job.run()
                self._done.append(job)
                notify.send(b"")
        except BaseException as err:      # the loop sees `alive` turn False and stops loudly
            self.failure = err
            raise
        finally:
            notify.close(0)

    def stop(self, timeout_s=10.0):
        self._jobs.put(None)
        self._thread.join(timeout_s)
        self.signal.close(0)
