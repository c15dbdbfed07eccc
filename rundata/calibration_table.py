"""The ladder's calibration games as data: CALIBRATION_NAME beside the reference players' index
(fastgo.reference_players.references_dir), one result a line in the ratings table's format
(rundata.ratings_table: {"time", "a", "b", "wins_a", "wins_b", "draws", "games", ...}).

`fastgo ladder calibrate` adds games to it, one row per finished game, each addition a whole
new file renamed over the old one under a lock (add_rows): a reader sees the table before or
after an addition, never a part of one, whether the writer is interrupted, killed or out of
disk. The shipped table (in the package) holds the shipped rungs' games; a folder named by
FASTGO_REFERENCES holds its own, read beside the shipped rows that name no reference player
(those name other networks there). Stdlib and numpy only.
"""
from __future__ import annotations

import errno
import os
import stat

from fastgo.files import atomic_write
from fastgo.reference_players import REFERENCES_DIR, references_dir
from rundata.ratings_table import RatingsTable, read_table, result_line

try:
    import fcntl
except ImportError:        # not on Windows: additions are then unlocked
    fcntl = None  # type: ignore[assignment]

__all__ = ["CALIBRATION_NAME", "MAX_CALIBRATION_BYTES", "CalibrationError", "calibration_path",
           "read_calibration", "calibration_rows", "add_rows"]

CALIBRATION_NAME = "calibration.jsonl"
MAX_CALIBRATION_BYTES = 16 << 20     # about 100,000 games at one row each


class CalibrationError(ValueError):
    """A calibration table that cannot be read or written: one line naming the file."""


def calibration_path(folder=None) -> str:
    """The table of the reference players' folder `folder` (default: references_dir())."""
    return os.path.join(os.fspath(folder) if folder is not None else references_dir(),
                        CALIBRATION_NAME)


def _checked(path):
    """lstat of the table at `path`, or None when absent; CalibrationError for a link (nothing
    is read outside the folder), something other than a regular file, or one over the bound."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as err:
        raise CalibrationError(f"{path}: {err.strerror or err}") from None
    if stat.S_ISLNK(info.st_mode):
        raise CalibrationError(f"{path}: a symbolic link (the table must be a file of its folder)")
    if not stat.S_ISREG(info.st_mode):
        raise CalibrationError(f"{path}: not a regular file")
    if info.st_size > MAX_CALIBRATION_BYTES:
        raise CalibrationError(f"{path}: {info.st_size} bytes, over the limit of "
                               f"{MAX_CALIBRATION_BYTES}")
    return info


def read_calibration(path) -> RatingsTable:
    """Every readable row of the table at `path` (empty when absent); damaged lines are skipped
    and counted (RatingsTable.skipped_lines), as in every ratings table. CalibrationError for a
    table that is a link, not a regular file, or over MAX_CALIBRATION_BYTES."""
    path = os.fspath(path)
    if _checked(path) is None:
        return RatingsTable()
    return read_table(path)


_CACHE: dict = {}        # (paths) -> (stat keys, RatingsTable)


def _key(path):
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_ino, info.st_mtime_ns, info.st_size)


def calibration_rows(folder=None) -> RatingsTable:
    """The calibration games that apply here: the shipped table's rows, and where the reference
    players' folder is another one (FASTGO_REFERENCES, or `folder`), the shipped rows that name
    no ref: player plus that folder's table. Read again only when a file changed.
    CalibrationError as read_calibration gives it."""
    folder = os.path.abspath(os.fspath(folder) if folder is not None else references_dir())
    shipped = calibration_path(REFERENCES_DIR)
    own = calibration_path(folder)
    paths = (shipped,) if own == os.path.abspath(shipped) else (shipped, own)
    keys = tuple(_key(p) for p in paths)
    cached = _CACHE.get(paths)
    if cached is not None and cached[0] == keys and None not in keys:
        return cached[1]
    table = read_calibration(shipped)
    rows, skipped = list(table), list(table.skipped_lines)
    if len(paths) > 1:
        rows = [row for row in rows if not any(str(row[k]).startswith("ref:") for k in "ab")]
        theirs = read_calibration(own)
        rows += theirs
        skipped += theirs.skipped_lines
    table = RatingsTable(rows, skipped)
    if len(_CACHE) > 8:
        _CACHE.clear()
    _CACHE[paths] = (keys, table)
    return table


def _locked_fd(path):
    """An fd of the table at `path` (created empty when absent), locked, and still the file at
    `path` once locked (an addition that renamed a new file over it meanwhile: locked again)."""
    while True:
        _checked(path)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
                         | getattr(os, "O_CLOEXEC", 0), 0o644)
        except OSError as err:
            raise CalibrationError(f"{path}: {err.strerror or err}") from None
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            if os.fstat(fd).st_ino == os.stat(path).st_ino:
                return fd
        except OSError:
            pass
        os.close(fd)


TMP_SUFFIX = f".{CALIBRATION_NAME}"    # of the temporary files additions write (atomic_write)


def add_rows(path, rows) -> None:
    """Adds `rows` (dicts of a, b, wins_a, wins_b, draws and small metadata, as
    rundata.ratings_table.result_line takes them) to the table at `path`: under an exclusive
    lock, the old table and the new lines are written whole to a new file renamed over it
    (fastgo.files.atomic_write), so the table is whole before and after. CalibrationError
    (nothing changed) when a row is malformed, the table would pass MAX_CALIBRATION_BYTES, or
    the write fails (a full disk: the old table stays)."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd = _locked_fd(path)
    try:
        # under the lock a temporary file is only ever a writer's that was killed: gone
        for name in os.listdir(directory):
            if name.startswith(".tmp-") and name.endswith(TMP_SUFFIX):
                try:
                    os.unlink(os.path.join(directory, name))
                except OSError:
                    pass
        old = bytearray()
        while chunk := os.read(fd, 1 << 20):
            old += chunk
            if len(old) > MAX_CALIBRATION_BYTES:
                raise CalibrationError(f"{path}: over the limit of {MAX_CALIBRATION_BYTES} bytes")
        if old and not old.endswith(b"\n"):
            old += b"\n"                  # a torn last line (an older writer) stays one line
        try:
            for row in rows:
                row = {k: v for k, v in row.items() if k != "games"}
                a, b, wins_a, wins_b = (row.pop(k) for k in ("a", "b", "wins_a", "wins_b"))
                old += result_line(a, b, wins_a, wins_b, row.pop("draws", 0), **row)[1]
        except (KeyError, ValueError) as err:
            raise CalibrationError(f"{path}: games not added ({err}); the table is as it was") \
                from None
        if len(old) > MAX_CALIBRATION_BYTES:
            raise CalibrationError(f"{path}: the table would pass the limit of "
                                   f"{MAX_CALIBRATION_BYTES} bytes")
        try:
            atomic_write(path, lambda handle: handle.write(old), suffix=TMP_SUFFIX)
        except OSError as err:
            why = "the disk is full" if err.errno == errno.ENOSPC else (err.strerror or str(err))
            raise CalibrationError(f"{path}: games not added ({why}); the table is as it was") \
                from None
    finally:
        os.close(fd)
