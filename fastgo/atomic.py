"""Files that others read (checkpoints, ratings summaries, SGFs, plots) are written whole or not
at all: into a temporary name in the same folder, flushed, fsynced, renamed over the target,
then the folder fsynced. Stdlib only."""
from __future__ import annotations

import os
import tempfile


def atomic_write(path, write, *, binary=True, suffix=""):
    """Calls write(handle) on a temporary file beside `path`, then renames it to `path`. On any
    error the temporary file is removed and `path` is left as it was."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=suffix, dir=directory)
    try:
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return path
