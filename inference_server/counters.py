"""The inference server's counters: requests, positions, batches, where the time went, errors
and reloads, cumulative since the server started (inference_server.server keeps one)."""
from __future__ import annotations

import time


class ServerCounters:
    """Cumulative counters of one server since it started; a stats request returns them with
    the server's own figures."""

    def __init__(self):
        self.started = time.time()
        self.requests = 0
        self.positions = 0
        self.batches = 0
        self.queue_wait_s = 0.0       # sum over requests: arrival -> its batch starts
        self.forward_s = 0.0          # sum over batches: the runner's forward pass
        self.overhead_s = 0.0         # parse + gather + scatter; waiting for requests excluded (wall)
        self.overhead_cpu_s = 0.0     # the same sections in this thread's CPU time (no preemption)
        self.errors = {}              # code -> count
        self.dropped = 0              # messages that could not be answered at all
        self.reloads = 0
        self.reloads_refused = 0
        self.reloads_unchanged = 0      # reloads of the weights in service: answered, not rebuilt
        self.last_reload_error = ""

    def error(self, code):
        self.errors[code] = self.errors.get(code, 0) + 1
