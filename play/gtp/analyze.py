"""Live analysis over GTP in the Leela Zero `lz-analyze` format, for Sabaki, Lizzie and GoGui.

`lz-analyze [color] [interval]` (interval in centiseconds; also `interval N`, and `minmoves N` /
`maxmoves N`, accepted and ignored) answers '=' at once, then keeps searching the current
position and prints one line every interval:

    info move D4 visits 120 winrate 5432 prior 1234 order 0 pv D4 E5 ... info move ...

(winrate and prior in 1/10000, winrate for the side to move), until the next command arrives; an
empty line then ends the response and that command is answered as usual. The engine
(play.gtp.engine) offers it when its player can `ponder(game, visits, max_visits)` and report
`analysis()` (the network player, play.search_player).
"""
from __future__ import annotations

import os
import select
import time

from fastgo import coords
from fastgo.gtp import MAX_LINE_CHARS, GtpError, OverlongLine, int_arg, parse_color

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
        self._start = 0                # self._buffer[self._start:] is unread
        self._scanned = 0              # no newline in self._buffer[self._start:self._scanned]
        self._dropping = False         # inside a line too long to keep: dropped up to its newline
        self._eof = False
        self._held = None              # a line taken from self._lines by pending()

    def _fill(self, timeout):
        """Reads what the descriptor has within `timeout` seconds (None: wait). The buffer
        holds at most MAX_LINE_CHARS + 64 KiB bytes: a longer line is dropped as it comes."""
        ready, _, _ = select.select([self._fd], [], [], timeout)
        if not ready:
            return
        data = os.read(self._fd, 65536)
        if not data:
            self._eof = True
            return
        if self._start:
            self._buffer = self._buffer[self._start:]
            self._scanned -= self._start
            self._start = 0
        self._buffer += data
        if self._buffer.find(b"\n", self._scanned) < 0 and len(self._buffer) > MAX_LINE_CHARS:
            self._dropping = True
            self._buffer = b""
            self._scanned = 0

    def _newline(self):
        at = self._buffer.find(b"\n", self._scanned)
        self._scanned = len(self._buffer) if at < 0 else at
        return at

    def readline(self):
        """The next line (text, with its newline if it had one), or None at the end of input;
        a line longer than MAX_LINE_CHARS comes back as an empty OverlongLine. Time linear in
        the input, memory bounded by MAX_LINE_CHARS + 64 KiB."""
        if self._fd is None:
            if self._held is not None:
                line, self._held = self._held, None
                return line
            return next(self._lines, None)
        while self._newline() < 0 and not self._eof:
            self._fill(None)
        at = self._newline()
        if at >= 0:
            line = self._buffer[self._start:at]
            self._start = self._scanned = at + 1
            if self._dropping:
                self._dropping = False
                return OverlongLine()
            return line.decode("utf-8", errors="replace") + "\n"
        line = self._buffer[self._start:]
        self._buffer, self._start, self._scanned = b"", 0, 0
        if self._dropping:
            self._dropping = False
            return OverlongLine()
        return line.decode("utf-8", errors="replace") if line else None

    def pending(self, timeout=0.0):
        """Whether a line (or the end of input) is there to read, waiting up to `timeout` s."""
        if self._fd is None:           # an in-memory iterable: a line, or its end, is always there
            if self._held is None:
                self._held = next(self._lines, None)
            return True
        if self._newline() >= 0 or self._eof:
            return True
        self._fill(timeout)
        return self._newline() >= 0 or self._eof


def leading_color_and_interval(words):
    """Pops the optional leading color and bare interval (centiseconds) that lz-analyze and
    kata-analyze share from the list `words`; returns (color or None, interval_cs, 100 when
    absent)."""
    color, interval_cs = None, 100
    if words and words[0].lower() in ("b", "w", "black", "white"):
        color = parse_color(words.pop(0))
    if words and words[0].isascii() and words[0].isdigit():
        interval_cs = int_arg(words.pop(0), 0, MAX_INTERVAL_CS)
    return color, interval_cs


def parse_analyze_args(args):
    """lz-analyze arguments -> (color or None, interval in seconds). GtpError('syntax error')
    for anything else."""
    words = list(args)
    color, interval_cs = leading_color_and_interval(words)
    while words:
        key = words.pop(0).lower()
        if key not in ("interval", "minmoves", "maxmoves") or not words:
            raise GtpError("syntax error")
        value = int_arg(words.pop(0), 0, MAX_INTERVAL_CS if key == "interval" else None)
        if key == "interval":
            interval_cs = value
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


def stream(player, game, reader, stdout, interval_s, max_visits, report=None):
    """Search `game` with `player` and print info lines every `interval_s` until a line (or the
    end of input) is waiting in `reader`; then end the response with an empty line.
    report(player, game) -> the line to print ('' for none; default lz-analyze's info_line;
    kata-analyze's is play.gtp.kata.reporter)."""
    size = game.board.size
    searching = not game.is_over()
    last_print = time.monotonic() if interval_s > 0 else None
    while not reader.pending(0.0 if searching else max(interval_s, 0.05)):
        if searching:
            searching = player.ponder(game, PONDER_VISITS, max_visits)
        now = time.monotonic()
        if interval_s > 0 and now - last_print >= interval_s:
            if report is None:
                rows = player.analysis()
                line = info_line(rows, size) if rows else ""
            else:
                line = report(player, game)
            if line:
                stdout.write(line + "\n")
                stdout.flush()
            last_print = now
    stdout.write("\n")
    stdout.flush()
