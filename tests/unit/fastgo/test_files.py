"""What fastgo.files.atomic_write finds at its destination or meets on the way: something other
than a regular file there (a folder, a FIFO, a device, a link to one) is refused with
NotRegularFile before any work is done, and a write that fails (a full disk) leaves neither its
temporary file nor a changed destination; a bounded read that does not follow links refuses one
as the path's last part, also one put there after the check."""
import errno
import os

import pytest

from fastgo.files import NotRegularFile, append_bytes, atomic_write, atomic_write_text, read_bounded, reason


def make(kind, path):
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        path.symlink_to("/dev/null")
    elif kind == "link to a folder":
        (path.parent / "elsewhere").mkdir()
        path.symlink_to(path.parent / "elsewhere")


KINDS = {"folder": "a directory", "fifo": "a FIFO", "device": "a device",
         "link to a folder": "a directory"}


@pytest.mark.parametrize("kind", KINDS)
def test_a_non_file_destination_is_refused_before_the_work(tmp_path, kind):
    path = tmp_path / "ratings.json"
    make(kind, path)
    calls = []
    with pytest.raises(NotRegularFile) as info:
        atomic_write(path, calls.append)
    assert calls == []                                      # write() never ran
    assert info.value.errno == errno.EINVAL and info.value.filename == str(path)
    assert reason(info.value) == f"not a regular file ({KINDS[kind]})"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp-")) == []
    for other in (lambda: append_bytes(path, b"x"), lambda: read_bounded(path, 10)):
        with pytest.raises(NotRegularFile):
            other()


def test_a_read_that_does_not_follow_links_refuses_one_even_if_it_appears_after_the_check(
        tmp_path, monkeypatch):
    (tmp_path / "outside").write_bytes(b"not to be read")
    link = tmp_path / "index.json"
    link.symlink_to(tmp_path / "outside")
    assert read_bounded(link, 100) == b"not to be read"                  # followed by default
    with pytest.raises(NotRegularFile) as info:
        read_bounded(link, 100, follow=False)
    assert reason(info.value) == "not a regular file (a symbolic link)"
    # a link put there between the check and the open: O_NOFOLLOW refuses it as well
    regular = os.lstat(tmp_path / "outside")
    monkeypatch.setattr(os, "lstat", lambda path: regular)
    with pytest.raises(NotRegularFile) as info:
        read_bounded(link, 100, follow=False)
    assert reason(info.value) == "not a regular file (a symbolic link)"


def test_a_failed_write_leaves_no_temporary_file_and_the_old_file(tmp_path):
    path = tmp_path / "latest.ckpt"
    path.write_bytes(b"old")

    def full(handle):
        handle.write(b"part")
        raise OSError(errno.ENOSPC, "No space left on device")
    with pytest.raises(OSError) as info:
        atomic_write(path, full)
    assert info.value.errno == errno.ENOSPC
    assert [p.name for p in tmp_path.iterdir()] == ["latest.ckpt"]
    assert path.read_bytes() == b"old"


def test_a_regular_file_or_nothing_is_replaced(tmp_path):
    path = tmp_path / "a.json"
    atomic_write_text(path, "1")
    atomic_write_text(path, "2")
    assert path.read_text() == "2"
