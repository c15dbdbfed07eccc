"""The inference server's counters: requests, positions, batches, where the time went, errors
and reloads, cumulative since the server started (inference_server.server keeps one), and the
stats reply made of them and the server's own figures."""
from __future__ import annotations

import os
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

    def figures(self, server, slots, queued_positions, curve_denied) -> dict:
        """The stats reply: these counters with the server's own figures: `server` its
        ServerConfig, `slots` {name: Slot}, `queued_positions` the positions its queues hold,
        `curve_denied` the clients CURVE refused."""
        batches, requests = max(1, self.batches), max(1, self.requests)
        any_runner = next(iter(slots.values())).runner
        return {
            "pid": os.getpid(),
            "uptime_s": round(time.time() - self.started, 3),
            "requests": self.requests,
            "positions": self.positions,
            "batches": self.batches,
            "max_batch": server.max_batch,
            "max_wait_us": server.max_wait_us,
            "mean_batch_size": self.positions / batches,
            "mean_batch_fill": self.positions / (batches * server.max_batch),
            "queue_wait_ms_mean": 1e3 * self.queue_wait_s / requests,
            "forward_ms_mean": 1e3 * self.forward_s / batches,
            "overhead_us_per_batch": 1e6 * self.overhead_s / batches,
            "overhead_cpu_us_per_batch": 1e6 * self.overhead_cpu_s / batches,
            "forward_s_total": self.forward_s,
            "overhead_s_total": self.overhead_s,
            "overhead_cpu_s_total": self.overhead_cpu_s,
            "queued_positions": queued_positions,
            "errors": dict(self.errors),
            "errors_total": sum(self.errors.values()),
            "dropped": self.dropped,
            "reloads": self.reloads,
            "reloads_unchanged": self.reloads_unchanged,
            "reloads_refused": self.reloads_refused,
            "last_reload_error": self.last_reload_error[:300],
            "versions": {name: slot.version for name, slot in slots.items()},
            "models": {name: slot.runner.config.name for name, slot in slots.items()},
            "runner": any_runner.describe(),
            "overlap": server.overlap,
            "curve_denied": curve_denied,
        }

