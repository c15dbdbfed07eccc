"""The ratings table: every match result of the arena and the periodic evaluator, one JSON line
each, in a file only ever appended to; read by `fastgo ratings`, the learning curve and the Elo fit
(rundata.elo_fit). A line is {"time": unix seconds, "a", "b", "wins_a", "wins_b", "draws",
"games", ...metadata}. Names and counts are checked on the way in (TableError) and on the way out
(a line that fails is skipped and counted, never fatal). Stdlib and numpy only.
"""
from __future__ import annotations

import hashlib
import json
import os
import time

import numpy as np

from fastgo.files import ends_torn, escaped, open_append
from rundata.statefiles import count, read_jsonl

try:
    import fcntl
except ImportError:        # not on Windows: appends are then unlocked
    fcntl = None  # type: ignore[assignment]

__all__ = ["append_result", "result_line", "read_table", "RatingsTable", "TableError",
           "check_name", "table_name", "player_games"]

REQUIRED = ("a", "b", "wins_a", "wins_b", "draws")
MAX_LINE = 1 << 20            # bytes; a longer line is counted as damaged


class TableError(ValueError):
    """An append with bad arguments (names, counts or metadata), or a table too large to fit."""


class RatingsTable(list):
    """The readable rows of a table (list of dicts, file order). `skipped` counts damaged lines;
    `skipped_lines` holds their 1-based line numbers."""

    def __init__(self, rows=(), skipped_lines=()):
        super().__init__(rows)
        self.skipped_lines = list(skipped_lines)
        self.note = ""             # how much of the file was read, when not all of it

    @property
    def skipped(self) -> int:
        return len(self.skipped_lines)


def _count(value, what):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise TableError(f"{what} must be a non-negative integer, got {value!r}")
    return int(value)


MAX_NAME = 200               # characters of a player's name


def _good_name(value) -> bool:
    """A non-empty string of at most MAX_NAME printable characters: no newline, escape or
    other control character reaches a terminal or a log through a name."""
    return (isinstance(value, str) and bool(value.strip()) and len(value) <= MAX_NAME
            and value.isprintable())


def table_name(text: str) -> str:
    """A name the table takes for any `text` (e.g. a GTP engine's command line): control
    characters escaped, and when longer than MAX_NAME, its start and a digest of the whole (two
    texts give the same name only when equal)."""
    shown = escaped(str(text)).strip() or "?"
    if len(shown) <= MAX_NAME:
        return shown
    digest = hashlib.sha256(str(text).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{shown[:MAX_NAME - 20]}..{digest}"


def check_name(value, what):
    """`value` as a player's name in a table, or TableError naming `what`."""
    if not _good_name(value):
        raise TableError(f"player {what} must be a non-empty string of at most {MAX_NAME} "
                         f"printable characters, got {repr(value)[:MAX_NAME]}")
    return value


def result_line(a, b, wins_a, wins_b, draws=0, **meta) -> tuple[dict, bytes]:
    """(the row, its JSON line) of one match result, names and counts checked (TableError);
    `meta` (e.g. size, visits, source) must be JSON-serialisable and may override "time"."""
    row = {"time": round(time.time(), 3), "a": check_name(a, "a"), "b": check_name(b, "b"),
           "wins_a": _count(wins_a, "wins_a"), "wins_b": _count(wins_b, "wins_b"),
           "draws": _count(draws, "draws")}
    row["games"] = row["wins_a"] + row["wins_b"] + row["draws"]
    for key in meta:
        if key in REQUIRED or key == "games":
            raise TableError(f"metadata key {key!r} is a result field")
    row.update(meta)
    try:
        line = json.dumps(row, separators=(",", ":"), allow_nan=False) + "\n"
    except (TypeError, ValueError) as exc:
        raise TableError(f"metadata is not JSON-serialisable: {exc}") from None
    return row, line.encode("utf-8")


def append_result(path, a, b, wins_a, wins_b, draws=0, **meta) -> dict:
    """Appends one match result as a JSON line (creating the file if missing), flushed and
    fsynced before returning; returns the row written (result_line). A file whose last line
    lost its newline (a torn write) gets the newline first, so the damage stays on that one
    line."""
    row, data = result_line(a, b, wins_a, wins_b, draws, **meta)
    fd = open_append(path)       # a FIFO or device there: OSError, never a wait
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        if ends_torn(fd, path):
            data = b"\n" + data
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    finally:
        os.close(fd)     # releases the lock
    return row


MAX_META_KEYS = 32           # metadata kept per row: scalars and short flat lists only
MAX_META_LIST = 16


def _small(value) -> bool:
    scalar = (str, int, float, bool, type(None))
    if isinstance(value, str):
        return len(value) <= 1000
    if isinstance(value, list):
        return len(value) <= MAX_META_LIST and all(
            isinstance(v, scalar) and not (isinstance(v, str) and len(v) > 100) for v in value)
    return isinstance(value, scalar)


def _valid(row):
    """The row with its counts checked (names as _good_name takes them, counts integers in
    0..MAX_COUNT), or None. Metadata is kept only while it is small (at most
    MAX_META_KEYS scalars or flat lists of MAX_META_LIST), so a row held in memory costs about
    what a written one does, whatever a line of the file holds."""
    for key in ("a", "b"):
        if not _good_name(row.get(key)):
            return None
    for key in ("wins_a", "wins_b", "draws"):
        count(row.get(key), key)
    if "games" in row:
        count(row["games"], "games")
    out = {key: row[key] for key in REQUIRED}
    out["games"] = row.get("games", out["wins_a"] + out["wins_b"] + out["draws"])
    meta = [(k, v) for k, v in row.items() if k not in out]
    if len(meta) <= MAX_META_KEYS:
        out.update((k, v) for k, v in meta if _small(v))
    return out


def read_table(path) -> RatingsTable:
    """Every readable row of the table, in file order; a missing file is an empty table. A line
    that is not a JSON object with string names a, b and integer counts wins_a, wins_b, draws in
    0..MAX_COUNT (a truncated write, garbage) is skipped and counted, never fatal; the file is
    read as rundata.statefiles reads every state file (regular, bounded, never blocking)."""
    rows = read_jsonl(path, _valid, max_line=MAX_LINE)
    table = RatingsTable(rows, rows.skipped_lines)
    table.note = rows.note
    return table


def player_games(results) -> dict:
    """{name: games played} over all rows (self-pairings count once per game)."""
    games: dict[str, int] = {}
    for row in results:
        n = row["wins_a"] + row["wins_b"] + row.get("draws", 0)
        games[row["a"]] = games.get(row["a"], 0) + n
        if row["b"] != row["a"]:
            games[row["b"]] = games.get(row["b"], 0) + n
    return games
