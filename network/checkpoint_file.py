"""A checkpoint's file, before torch: its bytes read with a bound and its zip archive checked, so
a missing path, a folder, a FIFO, a file over the limit or bytes that are no fastgo checkpoint
archive are refused without importing torch (about 3 CPU-s: `fastgo gtp --model typo.ckpt`
answers in a third of a second). network.checkpoint reads what passes.
"""
from __future__ import annotations

import io
import os
import zipfile

from fastgo.files import escaped, read_bounded

MAX_CHECKPOINT_BYTES = 1 << 32   # default limit on a checkpoint file (4 GiB)
MAX_ENTRIES = 10_000             # zip entries (a checkpoint has one per tensor, plus four)
SHOWN_CHARS = 80                # of a value an error names (its repr)


class CheckpointError(ValueError):
    """A checkpoint that cannot be used; the message names the file and the reason."""


class CheckpointUnreadable(CheckpointError):
    """Nothing readable as a fastgo checkpoint is there: the path is missing, not a regular
    file, not permitted or too large, or its bytes are not a fastgo checkpoint archive. A
    server answering a client that named the path says no more than that."""


def read_checkpoint_bytes(path, max_bytes: int = MAX_CHECKPOINT_BYTES) -> bytes:
    """The bytes of checkpoint file `path` (a regular file of at most `max_bytes`; a FIFO or
    device is refused without blocking), their archive checked (check_archive).
    CheckpointUnreadable or CheckpointError naming the file and what is wrong."""
    path = os.fspath(path)
    try:
        data = read_bounded(path, max_bytes)
    except OSError as err:
        raise CheckpointUnreadable(f"{path}: cannot read checkpoint: "
                                   f"{err.strerror or type(err).__name__}") from None
    check_archive(path, data)
    return data


def check_archive(path, data):
    """The zip's entries are stored (not compressed) and their sizes add up to no more than
    the bytes held: nothing in the archive can expand beyond the input."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            entries = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as err:
        raise CheckpointUnreadable(f"{path}: not a fastgo checkpoint (not a zip archive: {err})") from None
    if len(entries) > MAX_ENTRIES:
        raise CheckpointError(f"{path}: {len(entries)} archive entries, the limit is {MAX_ENTRIES}")
    declared = 0
    for entry in entries:
        if entry.compress_type != zipfile.ZIP_STORED or entry.compress_size != entry.file_size:
            raise CheckpointError(f"{path}: compressed archive entry "
                                  f"{escaped(repr(entry.filename), SHOWN_CHARS)}")
        declared += entry.file_size
    if declared > len(data):
        raise CheckpointError(f"{path}: archive entries declare {declared} bytes in a "
                              f"{len(data)}-byte file")
