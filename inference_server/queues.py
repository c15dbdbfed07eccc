"""The eval requests waiting in the inference server, one FIFO queue per slot: the positions and
payload bytes each queue holds (a request past QUEUE_BYTES_PER_SLOT is refused "busy"), when
its batch is due (`max_wait_s` after the first request still queued), whether it is full (no
request of the slot's recent sizes could still join it), and the whole requests taken from it
into one batch. Only the server loop's thread touches them.
"""
from __future__ import annotations

from collections import deque

from wire import protocol

QUEUE_BYTES_PER_SLOT = 256 << 20   # eval payload bytes queued per slot; beyond: "busy" answers
# A partial batch waits for max_wait_us only while another request could still join it: when
# the queued positions plus the smallest of a slot's last RECENT_REQUESTS requests exceed
# max_batch, it runs at once. (One worker whose requests of ~60 positions never share a batch
# of 64 otherwise idled the server up to a poll tick, 1 ms, per batch.)
RECENT_REQUESTS = 32


class _Pending:
    __slots__ = ("identity", "request_id", "count", "payload", "t_recv")

    def __init__(self, identity, request_id, count, payload, t_recv):
        self.identity = identity
        self.request_id = request_id
        self.count = count
        self.payload = payload
        self.t_recv = t_recv


class RequestQueues:
    """The queued eval requests of the slots `names` (add() one more). `largest_request`: the
    payload bytes of the largest request allowed; `max_wait_s`: a batch's longest wait for more
    requests. Times are time.perf_counter() seconds."""

    def __init__(self, names, largest_request: int, max_wait_s: float):
        self.pending: dict[str, deque[_Pending]] = {name: deque() for name in names}
        self.positions = {name: 0 for name in names}         # slot -> positions queued
        self.bytes = {name: 0 for name in names}             # slot -> payload bytes queued
        # One full request always fits, whatever the limit: a client is never refused for ever.
        self.bytes_limit = max(QUEUE_BYTES_PER_SLOT, 2 * largest_request)
        self.deadlines = {name: 0.0 for name in names}       # slot -> when its batch is due
        self.recent_counts: dict[str, deque[int]] = {   # slot -> its last requests' positions
            name: deque(maxlen=RECENT_REQUESTS) for name in names}
        self.max_wait_s = max_wait_s

    def add(self, name):
        """An empty queue for a slot created while serving."""
        self.pending[name] = deque()
        self.positions[name] = 0
        self.bytes[name] = 0
        self.deadlines[name] = 0.0
        self.recent_counts[name] = deque(maxlen=RECENT_REQUESTS)

    def push(self, name, identity, request, now):
        """Queues the parsed eval `request` of client `identity` for slot `name`, received at
        `now`; ProtocolError BUSY when its payload would take the slot past bytes_limit."""
        queue = self.pending[name]
        size = len(request.payload)
        if self.bytes[name] + size > self.bytes_limit:
            raise protocol.ProtocolError(protocol.BUSY, f"slot {name} has "
                                         f"{self.positions[name]} positions queued; "
                                         f"try again later", request.request_id)
        if not queue:
            self.deadlines[name] = now + self.max_wait_s
        queue.append(_Pending(identity, request.request_id, request.count, request.payload, now))
        self.recent_counts[name].append(request.count)
        self.positions[name] += request.count
        self.bytes[name] += size

    def waiting_deadlines(self) -> list:
        """The deadlines of the slots with requests queued."""
        return [self.deadlines[name] for name, q in self.pending.items() if q]

    def next_ready(self, now, cap):
        """The slot whose batch runs next: of those due at `now` or full for a batch of `cap`
        positions, the one whose oldest request came first; None when none is."""
        ready = [name for name, q in self.pending.items()
                 if q and (now >= self.deadlines[name] or self.full(name, cap))]
        if not ready:
            return None
        return min(ready, key=lambda n: self.pending[n][0].t_recv)

    def full(self, name, cap) -> bool:
        """Whether slot `name`'s queue makes a batch that no request of the recent sizes could
        still join."""
        return self.positions[name] + min(self.recent_counts[name], default=1) > cap

    def take(self, name, cap) -> tuple:
        """([_Pending], positions): whole requests of slot `name`, oldest first, up to `cap`
        positions (or one larger request), taken out of its queue."""
        queue = self.pending[name]
        batch: list[_Pending] = []
        total = 0
        while queue and (not batch or total + queue[0].count <= cap):
            request = queue.popleft()
            batch.append(request)
            total += request.count
            self.bytes[name] -= len(request.payload)
        self.positions[name] -= total
        if queue:
            self.deadlines[name] = queue[0].t_recv + self.max_wait_s
        return batch, total

    def drain(self):
        """Yields every request still queued, each slot's oldest first, taking it out."""
        for name, queue in self.pending.items():
            while queue:
                yield queue.popleft()
            self.positions[name] = self.bytes[name] = 0
