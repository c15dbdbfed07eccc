"""What a role child says it is busy with (RoleChild.busy) and the server's start-up lines as its
progress before it answers (RoleChild.progress), over files written by hand: a process stands in
as its start time only."""
import os
import time
from types import SimpleNamespace

from rundata.rundir import open_run_dir
from supervision.role_child import RoleChild

STARTING = "fake serve: starting: "


def _started(child, seconds_ago):
    child.process = SimpleNamespace(started=time.monotonic() - seconds_ago, pid=None)


def _age(path, seconds):
    """Sets the file's mtime `seconds` into the past."""
    when = time.time() - seconds
    os.utime(path, (when, when))


def test_a_status_files_busy_mark_counts_only_once_this_start_has_written_it(tmp_path):
    child = RoleChild("train", open_run_dir(tmp_path / "run"), "train")
    _started(child, 10.0)
    marked = {"step": 3, "busy": "compiling the training step"}
    assert child.busy(marked, True) == "compiling the training step"
    assert child.busy(marked, False) is None          # the previous start's file
    assert child.busy({"step": 3}, True) is None and child.busy(None, False) is None
    assert child.busy({"busy": ""}, True) is None and child.busy({"busy": 7}, True) is None


def test_a_servers_start_up_lines_are_its_progress_and_what_it_is_busy_with(tmp_path):
    child = RoleChild("serve", open_run_dir(tmp_path / "run"), None, starting=STARTING)
    _started(child, 10.0)
    out = child.out_path
    with open(out, "w") as handle:
        handle.write(f"an earlier run\n{STARTING}timing fp32\n{STARTING}timing int8\n")
    data, last, beaten = child.progress()
    assert data is None and not beaten
    assert time.monotonic() - last < 1.0               # the line just written, not the start
    assert child.busy(data, beaten) == "timing int8"

    _age(out, 20.0)                                    # written before this start: not its own
    data, last, beaten = child.progress()
    assert 10.0 <= time.monotonic() - last < 11.0 and child.busy(data, beaten) is None

    with open(out, "a") as handle:                     # its last line says something else
        handle.write("a warning\n")
    data, last, beaten = child.progress()
    assert 10.0 <= time.monotonic() - last and child.busy(data, beaten) is None


def test_a_server_that_has_answered_is_not_busy_whatever_it_printed(tmp_path):
    child = RoleChild("serve", open_run_dir(tmp_path / "run"), None, starting=STARTING)
    _started(child, 10.0)
    with open(child.out_path, "w") as handle:
        handle.write(f"{STARTING}timing int8\n")
    _age(child.out_path, 5.0)                          # its line, 5 s ago
    child.ping.last_ok = time.monotonic() - 2.0        # then its answer, 2 s ago
    data, last, beaten = child.progress()
    assert beaten and 1.9 < time.monotonic() - last < 3.0 and child.busy(data, beaten) is None


def test_a_role_without_start_up_lines_is_never_busy_by_its_output(tmp_path):
    child = RoleChild("serve", open_run_dir(tmp_path / "run"), None)
    _started(child, 10.0)
    with open(child.out_path, "w") as handle:
        handle.write(f"{STARTING}timing int8\n")
    data, last, beaten = child.progress()
    assert child.busy(data, beaten) is None and 10.0 <= time.monotonic() - last
