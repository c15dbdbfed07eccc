"""Input lines for the analysis engine, read on a thread with bounded memory.

`LineFeed(stream, max_line_bytes)` reads the binary stream in chunks on a daemon thread and
puts each line's bytes (without its newline) on a bounded queue, a line longer than
`max_line_bytes` as an `Overlong(length)` (its bytes are dropped as they arrive: a 100 MB line
never sits in memory), and None at the end of input. `get(timeout)` takes the next item
(`EMPTY` when none came in time). `nesting(text)` measures a line's nesting before anything parses
it (fastgo.bounded_json's scan), and for a line nested deeper than MAX_NESTING finds the query
and field its error names.
"""
from __future__ import annotations

import queue
import re
import threading

from fastgo import bounded_json
from fastgo.bounded_json import nesting_depth

CHUNK = 1 << 16
MAX_NESTING = 32         # arrays and objects inside each other; KataGo's queries need 4
MAX_LINE_BYTES = 1 << 30  # the longest line an engine may be set to read (--max-line-bytes)
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


_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"?|[{}\[\],:]', re.S)   # a string, or a structural mark


def _json_string(token):
    try:
        value = bounded_json.loads(token, max_size=MAX_LINE_BYTES)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def nesting(text, limit=MAX_NESTING, *, scan_chars=1 << 16):
    """(deepest nesting of arrays and objects in the JSON text, the top-level key whose value
    first went deeper than `limit` or None, the top-level "id" string or None): a line nested
    too deep is refused before json.loads, so no reader of it can run out of stack, and its
    error still names the query. Linear; key and id are looked for in the first `scan_chars`
    characters only, and only when the line is too deep."""
    deepest = nesting_depth(text)
    if deepest <= limit:
        return deepest, None, None
    text = text[:scan_chars]
    depth = 0
    is_object = text.lstrip()[:1] == "{"
    key = field = ident = value_of = None
    key_next = False
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token[0] == '"':
            if depth == 1 and is_object:
                if key_next:
                    key, key_next = _json_string(token), False
                elif value_of == "id" and ident is None:
                    ident = _json_string(token)
            value_of = None
        elif token in "{[":
            depth += 1
            if depth == limit + 1 and field is None:
                field = key if is_object else None
            key_next = depth == 1 and token == "{"
            value_of = None
        elif token in "}]":
            depth -= 1
        elif depth == 1 and token == ",":
            key_next, value_of = True, None
        elif depth == 1 and token == ":":
            value_of = key
    return deepest, field, ident
