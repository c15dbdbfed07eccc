"""Input lines for the analysis engine, read on a thread with bounded memory.

`LineFeed(stream, max_line_bytes)` reads the binary stream in chunks on a daemon thread and
puts each line's bytes (without its newline) on a bounded queue, a line longer than
`max_line_bytes` as an `Overlong(length)` (its bytes are dropped as they arrive: a 100 MB line
never sits in memory), and None at the end of input. `get(timeout)` takes the next item
(`EMPTY` when none came in time).
"""
from __future__ import annotations

import queue
import threading

CHUNK = 1 << 16
EMPTY = object()


class Overlong:
    """A line longer than the cap: only its length is kept."""

    def __init__(self, length):
        self.length = length


class LineFeed:
    def __init__(self, stream, max_line_bytes=1 << 20, max_queued=256):
        self.max_line_bytes = int(max_line_bytes)
        self._stream = stream
        self._queue = queue.Queue(maxsize=max_queued)
        self._thread = threading.Thread(target=self._run, name="analysis-input", daemon=True)
        self._thread.start()

    def _read(self):
        read = getattr(self._stream, "read1", None) or self._stream.read
        try:
            return read(CHUNK)
        except (OSError, ValueError):
            return b""

    def _run(self):
        pending = bytearray()
        dropped = 0                   # bytes of an overlong line dropped so far (0: none)
        while True:
            data = self._read()
            if not data:
                break
            start = 0
            while True:
                end = data.find(b"\n", start)
                if end < 0:
                    rest = data[start:]
                    if dropped or len(pending) + len(rest) > self.max_line_bytes:
                        dropped += len(pending) + len(rest)
                        pending.clear()
                    else:
                        pending += rest
                    break
                piece = data[start:end]
                if dropped or len(pending) + len(piece) > self.max_line_bytes:
                    self._queue.put(Overlong(dropped + len(pending) + len(piece)))
                else:
                    self._queue.put(bytes(pending + piece))
                pending.clear()
                dropped = 0
                start = end + 1
        if dropped:
            self._queue.put(Overlong(dropped))
        elif pending:
            self._queue.put(bytes(pending))
        self._queue.put(None)

    def get(self, timeout=None):
        """The next line (bytes), an Overlong, None at the end of input, or EMPTY when nothing
        arrived within `timeout` seconds (None: wait)."""
        try:
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            return EMPTY
