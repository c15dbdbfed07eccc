"""The one reader of a run directory's state files (ratings.jsonl, evaluations.jsonl, metrics.csv,
status files): regular files only, opened without blocking (a FIFO or device is refused, never
waited on), at most MAX_STATE_BYTES read (of a longer file, its last MAX_STATE_BYTES), line by
line with each line at most MAX_LINE_BYTES, every row validated by the caller's function. A bad
row is skipped and counted, one warning per file names how many; nothing raises on content, and
the file is never rewritten. Stdlib only.
"""
from __future__ import annotations

import logging
import math
import os
import stat

from fastgo import bounded_json
from fastgo.coords import json_number
from fastgo.files import NotRegularFile

log = logging.getLogger("rundata.statefiles")
log.addHandler(logging.NullHandler())    # a role's log gets the warnings; a command's stderr not

MAX_STATE_BYTES = 16 << 20      # a row held costs several times its line: this bounds memory
MAX_LINE_BYTES = 1 << 20
MAX_COLUMNS = 256               # columns of a CSV state file's header
MAX_COUNT = 10 ** 12            # any count in a state file (games, wins, steps) at most this

_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


class StateRows(list):
    """Rows read from a state file; `skipped_lines` holds the line numbers that were not valid
    rows, `note` why the file was not read (absent: empty note) or how much of it was."""

    def __init__(self, rows=(), skipped_lines=(), note=""):
        super().__init__(rows)
        self.skipped_lines = list(skipped_lines)
        self.note = note

    @property
    def skipped(self) -> int:
        return len(self.skipped_lines)


def open_regular(path):
    """A binary handle on a regular file, or None when absent; NotRegularFile for anything else
    (a FIFO, a device, a directory), checked before and after opening without blocking."""
    path = os.fspath(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(mode):
        raise NotRegularFile(path, mode)
    fd = os.open(path, _FLAGS)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(path, mode)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_lines(path, *, max_bytes=MAX_STATE_BYTES, max_line=MAX_LINE_BYTES):
    """([(line number, bytes without the line end)], [numbers of lines over max_line], note);
    absent: ([], [], ""). Of a file over max_bytes only the tail is read, numbered from 1."""
    lines = _Lines(path, max_bytes=max_bytes, max_line=max_line)
    return list(lines), lines.too_long, lines.note


class _Lines:
    """Iterates (line number, bytes without the line end) of a state file as read_lines reads
    it, one line in memory at a time; too_long and note are complete once iterated. A UTF-8
    byte order mark before the first line is dropped."""

    def __init__(self, path, *, max_bytes=MAX_STATE_BYTES, max_line=MAX_LINE_BYTES):
        self.path, self.max_bytes, self.max_line = path, max_bytes, max_line
        self.too_long, self.note = [], ""

    def __iter__(self):
        max_bytes, max_line = self.max_bytes, self.max_line
        try:
            handle = open_regular(self.path)
        except OSError as err:
            self.note = f"not read: {err.strerror or err}"
            return
        except ValueError:                           # a NUL byte in the path
            self.note = "not read: not a usable path"
            return
        if handle is None:
            return
        with handle:
            size = os.fstat(handle.fileno()).st_size
            if size > max_bytes:
                handle.seek(size - max_bytes)
                handle.readline(max_line + 1)            # a partial first line
                self.note = f"read its last {max_bytes} of {size} bytes"
            total, number = 0, 0
            while total <= max_bytes:
                raw = handle.readline(max_line + 1)
                if not raw:
                    break
                number += 1
                total += len(raw)
                if len(raw) > max_line:
                    self.too_long.append(number)
                    while raw and not raw.endswith(b"\n") and total <= max_bytes:
                        raw = handle.readline(max_line + 1)      # the rest of that line
                        total += len(raw)
                    continue
                if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                    raw = raw[3:]
                yield number, raw.rstrip(b"\r\n")


def _report(path, rows: StateRows):
    if rows.skipped or rows.note:
        log.warning("%s: %s%s", os.fspath(path),
                    f"{rows.skipped} line(s) skipped as not valid rows (first: line "
                    f"{rows.skipped_lines[0]})" if rows.skipped else "",
                    ("; " if rows.skipped and rows.note else "") + rows.note)


def read_jsonl(path, validate, **bounds) -> StateRows:
    """JSON objects, one per line, for which validate(dict) returns a row (or raises ValueError,
    TypeError, KeyError, OverflowError: skipped)."""
    lines = _Lines(path, **bounds)
    rows, skipped = [], []
    for number, raw in lines:
        if not raw.strip():
            continue
        value = None
        try:
            value = bounded_json.loads(raw, max_size=lines.max_line)
            row = validate(value) if isinstance(value, dict) else None
        except (ValueError, TypeError, KeyError, OverflowError):
            row = None
        del value
        if row is None:
            skipped.append(number)
        else:
            rows.append(row)
    out = StateRows(rows, sorted(skipped + lines.too_long), lines.note)
    _report(path, out)
    return out


def read_json(path, max_bytes=1 << 20):
    """One JSON object from a small state file, or None (absent, not regular, too large, not an
    object)."""
    lines, _, note = read_lines(path, max_bytes=max_bytes, max_line=max_bytes)
    if note or not lines:
        return None
    try:
        value = bounded_json.loads(b"\n".join(raw for _, raw in lines), max_size=max_bytes)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


RATINGS_MAX_BYTES = 16 << 20       # RUN/ratings.json read at most (8 hours' run: ~100 KB)
MAX_ELO = 1e6                      # any rating or bound of ratings.json, in Elo, at most this
MAX_PLAYER_CHARS = 400             # a player's name in ratings.json
_said: set = set()                 # (path, why) already logged: a file read every status line


def _refuse(path, why):
    if (path, why) not in _said:
        _said.add((path, why))
        log.warning("%s: %s", path, why)


def _elo(value):
    """A rating or bound as a float, NaN where it is not a number within MAX_ELO."""
    try:
        return _finite(value, low=-MAX_ELO, high=MAX_ELO)
    except ValueError:
        return math.nan


def _latest(latest, path):
    """ratings.json's "latest" of checked types: {} (refused, logged) unless it is an object
    whose player is a name; elo, elo_low, elo_high floats (NaN where not a number in range);
    results a list of str; step, seconds, cpu_share and anchors kept only where well typed."""
    if not isinstance(latest, dict):
        if latest is not None:
            _refuse(path, f'"latest" refused: an object expected, not {type(latest).__name__}')
        return {}
    player = latest.get("player")
    if not isinstance(player, str) or not 0 < len(player) <= MAX_PLAYER_CHARS:
        _refuse(path, f'"latest" refused: its player must be a name of 1..{MAX_PLAYER_CHARS} '
                      f'characters, not {type(player).__name__}')
        return {}
    out = dict(latest, player=player)
    for key in ("elo", "elo_low", "elo_high"):
        out[key] = _elo(latest.get(key))
    results = latest.get("results")
    out["results"] = [r[:200] for r in results if isinstance(r, str)][:1000] \
        if isinstance(results, list) else []
    for key, check in (("step", lambda v: count(v)), ("seconds", lambda v: _finite(v, low=0)),
                       ("cpu_share", lambda v: _finite(v, low=0, high=MAX_COUNT))):
        if key in out:
            try:
                out[key] = check(out[key])
            except ValueError:
                _refuse(path, f'"latest.{key}" refused: not a number in range')
                del out[key]
    anchors = latest.get("anchors")
    out["anchors"] = {k: _elo(v) for k, v in anchors.items() if isinstance(k, str)} \
        if isinstance(anchors, dict) else {}
    return out


def _ratings(ratings, path):
    """{player: [elo, low, high]} of ratings.json with every entry checked: a name and three
    numbers or nulls, each a float (NaN where not a number within MAX_ELO: an unbounded
    interval, or not rated); other entries are dropped, logged."""
    if not isinstance(ratings, dict):
        if ratings is not None:
            _refuse(path, f'"ratings" refused: an object expected, not {type(ratings).__name__}')
        return {}
    out, dropped = {}, []
    for name, value in ratings.items():
        triple = None
        if isinstance(value, list) and len(value) == 3 and not any(
                isinstance(v, bool) or not isinstance(v, (int, float, type(None))) for v in value):
            triple = [_elo(v) for v in value]
        if triple is None or not 0 < len(name) <= MAX_PLAYER_CHARS:
            dropped.append(name)
        else:
            out[name] = triple
    if dropped:
        _refuse(path, f'"ratings": {len(dropped)} entr{"y" if len(dropped) == 1 else "ies"} '
                      f'refused as not [elo, low, high] (first: {dropped[0][:60]!r})')
    return out


def read_ratings(path) -> dict:
    """The evaluator's ratings.json (evaluation.evaluator writes it), the one reader of it:
    {"latest": dict, "ratings": {player: [elo, low, high]}}, each {} where the file is
    missing, larger than RATINGS_MAX_BYTES, not JSON or not of that shape, every value inside
    of the types its readers take (_latest, _ratings): a refused part is logged once, never
    raised."""
    data = read_json(path, max_bytes=RATINGS_MAX_BYTES) or {}
    where = os.fspath(path)
    return {"latest": _latest(data.get("latest"), where),
            "ratings": _ratings(data.get("ratings"), where)}


def count(value, what="count") -> int:
    """A non-negative integer count of at most MAX_COUNT (bool refused); ValueError else."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
        raise ValueError(f"{what} must be an integer in 0..{MAX_COUNT}")
    return value


def _finite(value, what="number", low=None, high=None) -> float:
    """A finite int or float within [low, high] (bool refused), by the one strict reader
    (coords.json_number: an integer of any length is refused by its range, never by
    OverflowError); ValueError naming `what` else."""
    return json_number(value, low=low, high=high, what=what)
