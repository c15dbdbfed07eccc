"""An append to the ratings table (rundata.ratings_table.append_result, fastgo.files.open_append)
where a FIFO, a folder or a device stands: it never waits on it nor writes into it. The append
runs in a thread, guarded by a wait, so a FIFO that blocked it fails the test instead of hanging
the run."""
from __future__ import annotations

import os
import threading

import pytest

from fastgo.files import check_regular, open_append
from rundata.ratings_table import append_result


@pytest.mark.parametrize("kind", ["fifo", "fifo with a reader", "folder", "device"])
def test_an_append_never_waits_on_or_writes_into_what_is_not_a_file(tmp_path, kind):
    path = tmp_path / "ratings.jsonl"
    reader = None
    if kind.startswith("fifo"):
        os.mkfifo(path)
        if kind == "fifo with a reader":
            reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    elif kind == "folder":
        path.mkdir()
    else:
        path.symlink_to("/dev/null")
    done = threading.Event()
    errors = []

    def append():
        try:
            append_result(path, "x", "y", 1, 0)
        except OSError as err:
            errors.append(err)
        done.set()

    try:
        threading.Thread(target=append, daemon=True).start()
        assert done.wait(5), "append_result blocked"
        assert errors and errors[0].strerror == "not a regular file"
        with pytest.raises(OSError, match="not a regular file"):
            check_regular(path)
        with pytest.raises(OSError, match="not a regular file"):
            os.close(open_append(path))
    finally:
        if reader is not None:
            os.close(reader)
