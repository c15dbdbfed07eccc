"""Bounded reads and atomic writes: the two ways the project touches a file others write or read.

A bounded read takes a regular file only (a FIFO, socket or device is refused without blocking),
checks its size before it allocates, and reads at most `max_bytes`. An atomic write goes to a
temporary name in the same folder, is flushed and fsynced, renamed over the target, and the
folder is fsynced: a reader sees the old file or the new one, never a part. Stdlib only.
"""
from __future__ import annotations

import errno
import os
import stat
import tempfile

from fastgo import diskfull

_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


class NotRegularFile(OSError):
    """Something other than a regular file (a folder, FIFO, device, socket; a symbolic link
    where links are not followed) where the project reads, appends or replaces a file: errno
    EINVAL, strerror 'not a regular file', `what` the kind of thing there ('a directory', 'a
    FIFO', ...; '' when not known); reason() shows both."""

    def __init__(self, path, mode=None):
        super().__init__(errno.EINVAL, "not a regular file", os.fspath(path))
        self.what = "" if mode is None else (
            "a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode)
            else "a symbolic link" if stat.S_ISLNK(mode) else "")


def read_regular(path, max_bytes: int, *, skip=None, follow: bool = True):
    """(stat of the open file, its bytes) for a regular file of at most `max_bytes` bytes.

    The path is checked with stat before it is opened and again with fstat after (O_NONBLOCK),
    so nothing blocks on a FIFO. `skip(stat) -> bool` may decline the read after the checks
    (then the bytes are None), e.g. when the file is unchanged since the last read. `follow`
    False: a symbolic link as the path's last component is refused (lstat, then O_NOFOLLOW, so
    a link put there between the two is refused too), so nothing is read from where it points.
    Raises OSError: FileNotFoundError when absent, EINVAL for a non-regular file (a link when
    not followed), EFBIG over the bound. The message names the path: do not pass it on to a
    remote peer."""
    path = os.fspath(path)
    mode = (os.stat if follow else os.lstat)(path).st_mode
    if not stat.S_ISREG(mode):
        raise NotRegularFile(path, mode)
    try:
        fd = os.open(path, _OPEN_FLAGS | (0 if follow else getattr(os, "O_NOFOLLOW", 0)))
    except OSError as err:
        if not follow and err.errno == errno.ELOOP:       # a link since the lstat
            raise NotRegularFile(path, stat.S_IFLNK) from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(path, info.st_mode)
        if info.st_size > max_bytes:
            raise OSError(errno.EFBIG, f"{info.st_size} bytes, over the limit of {max_bytes}", path)
        if skip is not None and skip(info):
            return info, None
        chunks, total = [], 0
        while total <= max_bytes:
            # os.read allocates what it is asked for: ask for what fstat said is left (+1 to
            # see the end), so a small file never costs a large buffer
            want = max(info.st_size + 1 - total, 1 << 16)
            chunk = os.read(fd, min(want, 1 << 24, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > max_bytes:
            raise OSError(errno.EFBIG, f"more than {max_bytes} bytes, over the limit", path)
        return info, b"".join(chunks)
    finally:
        os.close(fd)


def open_append(path, mode: int = 0o644) -> int:
    """A file descriptor appending to the regular file at `path` (created when absent). Opened
    without blocking, so a FIFO (with or without a reader), a device or a directory there is
    refused with OSError(EINVAL) instead of waited on or written to."""
    path = os.fspath(path)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK
                     | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0), mode)
    except OSError as err:
        if err.errno in (errno.ENXIO, errno.EISDIR):      # a FIFO without a reader; a folder
            raise NotRegularFile(path, _mode(path)) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(path, mode)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def ends_torn(fd, path) -> bool:
    """True when the regular file open for appending at `fd` (its `path`) is not empty and its
    last byte is not a newline: its last line was cut (a crash mid-append), so a line appended
    now must start on a fresh line."""
    end = os.fstat(fd).st_size
    if end == 0:
        return False
    with open(os.fspath(path), "rb") as handle:
        handle.seek(end - 1)
        return handle.read(1) != b"\n"


def append_bytes(path, data: bytes, *, sync: bool = False, line: bool = False) -> None:
    """Appends `data` to the regular file at `path` (open_append: created when absent, never a
    wait on a FIFO), fsynced when `sync`. `line`: `data` is one line of a line-per-record file
    (JSON lines): after a torn last line (ends_torn) a newline goes first, so the damage stays
    on that one line. A full disk midway: in a process that waits for space (fastgo.diskfull)
    the rest is written once there is room; else the part written is cut off again (the file
    ends where it did) and the OSError raised."""
    fd = open_append(path)
    try:
        if line and ends_torn(fd, path):
            data = b"\n" + data
        view = memoryview(data)
        start = os.fstat(fd).st_size
        while True:
            try:
                while view:
                    view = view[os.write(fd, view):]
                if sync:
                    os.fsync(fd)
                break
            except OSError as err:
                if not diskfull.handle(err, path):
                    if diskfull.disk_full(err) and len(view) < len(data):
                        _cut(fd, start, start + len(data) - len(view))
                    raise
        diskfull.recovered(path)
    finally:
        os.close(fd)


def _cut(fd, start, end):
    """Truncates the file back to `start` if it ends at `end` (no one appended since)."""
    try:
        if os.fstat(fd).st_size == end:
            os.ftruncate(fd, start)
    except OSError:
        pass


def check_regular(path) -> None:
    """Nothing when `path` is absent or a regular file; NotRegularFile (an OSError, EINVAL) for
    anything else there (a FIFO, a device, a directory), checked without opening it."""
    mode = _mode(path)
    if mode is not None and not stat.S_ISREG(mode):
        raise NotRegularFile(path, mode)


def _mode(path):
    """st_mode of what is at `path` (links followed), None when nothing is."""
    try:
        return os.stat(os.fspath(path)).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None


def read_bounded(path, max_bytes: int, *, follow: bool = True) -> bytes:
    """The bytes of a regular file of at most `max_bytes` bytes (see read_regular; `follow`
    False: a symbolic link there is refused)."""
    return read_regular(path, max_bytes, follow=follow)[1]


def reason(err: OSError) -> str:
    """An OSError as a short reason without the path: 'not a regular file (a directory)', 'No
    such file or directory', ..."""
    text = err.strerror or type(err).__name__
    what = getattr(err, "what", "")       # NotRegularFile's file type
    return f"{text} ({what})" if what else text


def printable(text) -> str:
    """`text` (a str or a path) safe to log or write as UTF-8: a file name that is not valid
    UTF-8 keeps its undecodable bytes as \\xNN-style escapes instead of raising on output."""
    text = os.fsdecode(text) if isinstance(text, bytes) else str(text)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def escaped(text, limit: int = 0, *, one_line: bool = False, quoted: bool = False) -> str:
    """`text` (a str, bytes, path, or any object: its str()) as a message shows it to a person:
    printable() text with control characters (newline, escape, bidi overrides) escaped too, so
    it shows on one line as it is. one_line: runs of whitespace (newlines included) become one
    space first, for prose such as an error's text. Longer than `limit` (when > 0): its start
    and the length it had. quoted: in single quotes (the length after them). The one helper for
    text in messages: names, paths, values read from files or peers, errors passed on."""
    text = printable(text)
    if one_line:
        text = " ".join(text.split())
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    more = ""
    if 0 < limit < len(shown):
        shown, more = shown[:limit] + "...", f" ({len(shown)} characters)"
    return (f"'{shown}'" if quoted else shown) + more


def fsync_dir(directory) -> None:
    """Makes a rename inside `directory` durable."""
    fd = os.open(os.fspath(directory), os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path, write, *, binary=True, suffix=""):
    """Calls write(handle) on a temporary file beside `path`, then renames it to `path`. On any
    error (a full disk included) the temporary file is removed and `path` is left as it was;
    in a process that waits for space (fastgo.diskfull) a full disk is waited out and the whole
    write done again, so write() must be callable more than once. Something other than a regular
    file at `path` (a folder, a FIFO, a device, or a link to one) is refused with NotRegularFile
    before write() is called."""
    path = os.fspath(path)
    check_regular(path)
    directory = os.path.dirname(os.path.abspath(path))
    while True:
        try:
            _write_replace(path, directory, write, binary, suffix)
        except Exception as err:
            if diskfull.handle(err, path):        # waited for space: write it all again
                continue
            raise
        diskfull.recovered(path)
        return


def _write_replace(path, directory, write, binary, suffix):
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=suffix, dir=directory)
    try:
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    fsync_dir(directory)


def atomic_write_text(path, text: str, *, suffix="") -> None:
    atomic_write(path, lambda handle: handle.write(text), binary=False, suffix=suffix)
