"""Live analysis over GTP in the Leela Zero `lz-analyze` format, for Sabaki, Lizzie and GoGui.

`lz-analyze [color] [interval]` (interval in centiseconds; also `interval N`, and `minmoves N` /
`maxmoves N`, accepted and ignored) answers '=' at once, then keeps searching the current
position and prints one line every interval:

    info move D4 visits 120 winrate 5432 prior 1234 order 0 pv D4 E5 ... info move ...

(winrate and prior in 1/10000, winrate for the side to move), until the next command arrives; an
empty line then ends the response and that command is answered as usual. The engine
(selfplay_workers.gtp_engine) offers it when its player can `ponder(game, visits, max_visits)` and report
`analysis()` (the network player, selfplay_workers.search_player).
"""
from __future__ import annotations

import os
import select
import time

from fastgo import coords
from fastgo.gtp import GtpError, parse_color

PONDER_VISITS = 32             # root visits added between two looks at the input
MAX_INTERVAL_CS = 360_000      # an hour


class LineReader:
    """Input lines with a non-blocking look-ahead, so analysis can run until a command arrives.

    Over a real file descriptor (a pipe or a terminal) it reads raw bytes and splits lines
    itself: a text stream's own buffer could hold the next command where select() cannot see
    it. Any other iterable of lines (tests) is read as is."""

    def __init__(self, stream):
        try:
            self._fd = stream.fileno()
        except (AttributeError, OSError, ValueError):
            self._fd = None
        self._lines = iter(stream) if self._fd is None else None
        self._buffer = b""
        self._eof = False
        self._held = None              # a line taken from self._lines by pending()

    def _fill(self, timeout):
        """Reads what the descriptor has within `timeout` seconds (None: wait)."""
        ready, _, _ = select.select([self._fd], [], [], timeout)
        if not ready:
            return
        data = os.read(self._fd, 65536)
        if data:
            self._buffer += data
        else:
            self._eof = True

    def readline(self):
        """The next line (text, with its newline if it had one), or None at the end of input."""
        if self._fd is None:
            if self._held is not None:
                line, self._held = self._held, None
                return line
            return next(self._lines, None)
        while b"\n" not in self._buffer and not self._eof:
            self._fill(None)
        if b"\n" in self._buffer:
            line, _, self._buffer = self._buffer.partition(b"\n")
            return line.decode("utf-8", errors="replace") + "\n"
        if self._buffer:
            line, self._buffer = self._buffer, b""
            return line.decode("utf-8", errors="replace")
        return None

    def pending(self, timeout=0.0):
        """Whether a line (or the end of input) is there to read, waiting up to `timeout` s."""
        if self._fd is None:           # an in-memory iterable: a line, or its end, is always there
            if self._held is None:
                self._held = next(self._lines, None)
            return True
        if b"\n" in self._buffer or self._eof:
            return True
        self._fill(timeout)
        return b"\n" in self._buffer or self._eof


def parse_analyze_args(args):
    """lz-analyze arguments -> (color or None, interval in seconds). GtpError('syntax error')
    for anything else."""
    color, interval_cs = None, 100
    words = list(args)
    if words and words[0].lower() in ("b", "w", "black", "white"):
        color = parse_color(words.pop(0))
    if words and words[0].isdigit():
        interval_cs = int(words.pop(0))
    while words:
        key = words.pop(0).lower()
        if key not in ("interval", "minmoves", "maxmoves") or not words or not words[0].isdigit():
            raise GtpError("syntax error")
        value = int(words.pop(0))
        if key == "interval":
            interval_cs = value
    if interval_cs > MAX_INTERVAL_CS:
        raise GtpError("syntax error")
    return color, interval_cs / 100.0


def info_line(rows, size):
    """One lz-analyze line from the player's analysis rows (most visited first)."""
    parts = []
    for order, row in enumerate(rows):
        pv = " ".join(coords.to_gtp(m, size) for m in row["pv"])
        parts.append(f"info move {coords.to_gtp(row['move'], size)} visits {row['visits']} "
                     f"winrate {round(10000 * row['winrate'])} prior {round(10000 * row['prior'])} "
                     f"order {order} pv {pv}")
    return " ".join(parts)


def stream(player, game, reader, stdout, interval_s, max_visits):
    """Search `game` with `player` and print info lines every `interval_s` until a line (or the
    end of input) is waiting in `reader`; then end the response with an empty line."""
    size = game.board.size
    searching = not game.is_over()
    last_print = time.monotonic() if interval_s > 0 else None
    while not reader.pending(0.0 if searching else max(interval_s, 0.05)):
        if searching:
            searching = player.ponder(game, PONDER_VISITS, max_visits)
        now = time.monotonic()
        if interval_s > 0 and now - last_print >= interval_s:
            rows = player.analysis()
            if rows:
                stdout.write(info_line(rows, size) + "\n")
                stdout.flush()
            last_print = now
    stdout.write("\n")
    stdout.flush()
