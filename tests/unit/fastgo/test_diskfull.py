"""A full disk met by the project's writers (fastgo.diskfull with fastgo.files and rundata.shards),
with the disk's answers faked: ENOSPC or EDQUOT, partial writes. Unconfigured, a writer raises
and leaves the file as it was; with "wait" it says so once, waits and finishes the write; with
"stop" it raises DiskFullStop; the role's status file shows the wait even when it cannot be
replaced; a role stopped on a full disk exits with status 75 in one line."""
import errno
import logging
import os

import pytest

from fastgo import diskfull
from fastgo.files import append_bytes, atomic_write

ENOSPC = OSError(errno.ENOSPC, "No space left on device")


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    monkeypatch.setattr(diskfull, "_state", {"policy": None, "should_stop": None,
                                             "heartbeat": None, "waiting": None, "delay": 0.0})
    monkeypatch.setattr(diskfull, "FIRST_WAIT_S", 0.01)
    monkeypatch.setattr(diskfull, "TICK_S", 0.005)


def failing(times, err=ENOSPC):
    """write(handle) that fails `times` times (after writing a part), then writes b"new"."""
    calls = []

    def write(handle):
        calls.append(1)
        handle.write(b"par")
        if len(calls) <= times:
            raise err
        handle.write(b"t-new")
    return write, calls


def test_the_error_is_found_where_torch_wraps_it():
    try:
        try:
            raise OSError(errno.EDQUOT, "Disk quota exceeded")
        except OSError:
            # the implicit __context__ (no `from`) is what disk_full walks, as torch raises it
            raise RuntimeError("[enforce fail at inline_container.cc] unexpected pos")  # noqa: B904
    except RuntimeError as err:
        assert diskfull.disk_full(err).errno == errno.EDQUOT
    assert diskfull.disk_full(OSError(errno.EIO, "I/O error")) is None


def test_unconfigured_a_writer_raises_and_leaves_the_file(tmp_path):
    path = tmp_path / "latest.ckpt"
    path.write_bytes(b"old")
    write, calls = failing(1)
    with pytest.raises(OSError):
        atomic_write(path, write)
    assert path.read_bytes() == b"old" and os.listdir(tmp_path) == ["latest.ckpt"]


def test_wait_says_so_once_waits_and_finishes_the_write(tmp_path, caplog):
    diskfull.configure("wait")
    beats = []
    diskfull.set_heartbeat(lambda: beats.append(diskfull.condition()))
    path = tmp_path / "ratings.json"
    path.write_bytes(b"old")
    write, calls = failing(3)
    with caplog.at_level(logging.INFO, logger="fastgo.disk"):
        atomic_write(path, write)
    assert path.read_bytes() == b"part-new" and len(calls) == 4
    assert os.listdir(tmp_path) == ["ratings.json"]
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2 and "disk full (No space left on device)" in lines[0], lines
    assert str(path) in lines[0] and "waiting for space" in lines[0] and "space again" in lines[1]
    assert beats and beats[0]["path"] == str(path) and diskfull.condition() is None


def test_stop_raises_and_keeps_what_was_there(tmp_path):
    diskfull.configure("stop")
    path = tmp_path / "latest.ckpt"
    path.write_bytes(b"old")
    with pytest.raises(diskfull.DiskFullStop) as info:
        atomic_write(path, failing(1)[0])
    assert str(path) in str(info.value) and "stop" in str(info.value)
    assert path.read_bytes() == b"old" and os.listdir(tmp_path) == ["latest.ckpt"]


def test_a_stop_request_ends_the_wait(tmp_path):
    diskfull.configure("wait", should_stop=lambda: True)
    with pytest.raises(diskfull.DiskFullStop) as info:
        atomic_write(tmp_path / "a", failing(5)[0])
    assert info.value.stopping and os.listdir(tmp_path) == []


class PartialDisk:
    """os.write that writes `room` bytes in all, then fails with ENOSPC until `room` grows."""

    def __init__(self, room):
        self.room = room
        self.real = os.write

    def __call__(self, fd, data):
        if self.room <= 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        n = self.real(fd, bytes(data[:self.room]))
        self.room -= n
        return n


def test_an_append_cut_short_is_taken_back_or_finished(tmp_path, monkeypatch):
    path = tmp_path / "ratings.jsonl"
    path.write_bytes(b'{"a": 1}\n')
    disk = PartialDisk(4)
    monkeypatch.setattr(os, "write", disk)
    with pytest.raises(OSError):
        append_bytes(path, b'{"b": 2}\n')
    assert path.read_bytes() == b'{"a": 1}\n'                  # the part written is cut off

    diskfull.configure("wait")
    disk.room = 4
    diskfull.set_heartbeat(lambda: setattr(disk, "room", 1000))   # space comes back
    append_bytes(path, b'{"c": 3}\n')
    assert path.read_bytes() == b'{"a": 1}\n{"c": 3}\n'


def test_a_shard_keeps_its_games_in_memory_until_there_is_room(tmp_path, monkeypatch,
                                                                game_record, random_moves):
    import numpy as np

    from rundata.shards import ShardWriter, read_shard

    rng = np.random.default_rng(1)
    games = [game_record(5, 0.5, random_moves(5, 0.5, rng, length=20), 0, seed=i) for i in range(4)]
    diskfull.configure("wait")
    disk = PartialDisk(300)                      # the header and a part of a game fit
    monkeypatch.setattr(os, "write", disk)
    writer = ShardWriter(tmp_path, prefix="w0-1", size=5, komi=0.5)
    for game in games:
        writer.add(game)                         # never raises: the rest waits in memory
    diskfull.set_heartbeat(lambda: setattr(disk, "room", 1 << 20))
    path = writer.close("0001-w0-1-00001.shard")
    shard = read_shard(path)
    assert [g.moves.tolist() for g in shard.games] == [list(g.moves) for g in games]
    assert sorted(os.listdir(tmp_path)) == ["0001-w0-1-00001.shard"]


def test_the_status_file_shows_the_wait_when_it_cannot_be_replaced(tmp_path, monkeypatch):
    from rundata import rundir

    run = rundir.open_run_dir(tmp_path / "run")
    status = rundir.StatusFile(run, "train")
    status.beat(lambda: {"step": 7, "note": "x" * 200}, force=True)
    diskfull.configure("wait")

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(rundir, "atomic_write_text", full)
    diskfull._state["waiting"] = {"path": "/run/checkpoints/ckpt-1.ckpt", "reason": "No space",
                                  "since": 1.0, "free_bytes": 0, "policy": "wait"}
    status.keep_alive()
    data, mtime = rundir.read_status(run, "train")
    assert data["step"] == 7 and data["disk_full"]["path"] == "/run/checkpoints/ckpt-1.ckpt"
    assert mtime is not None


def test_the_supervisor_counts_no_crash_for_a_full_disk():
    from types import SimpleNamespace

    from supervision.restarts import Backoff, RestartPolicy

    lines = []
    cc = SimpleNamespace(restart_window_s=100.0, max_restarts=1, backoff_s=0.5,
                         backoff_max_s=1.5, stuck_seconds=10.0, on_disk_full="wait")
    role = SimpleNamespace(role="train", backoff=Backoff(), log_path="L.log", out_path="/no/L.out")
    policy = RestartPolicy(cc, lines.append)
    for now in (0.0, 1.0, 2.0, 3.0):
        assert policy.restart(role, "exited with status 75", now=now, code=diskfull.EXIT_STATUS) is None
    assert role.backoff.count == 0 and not role.backoff.recent and len(lines) == 1
    assert role.backoff.delay == 1.5 and "not counted as a crash" in lines[0]
    cc.on_disk_full = "stop"
    assert "stopped on a full disk" in policy.restart(role, "x", now=4.0, code=diskfull.EXIT_STATUS)
    waiting = {"train": {"disk_full": {"path": "/run/checkpoints/ckpt-9.ckpt", "reason": "No space"}}}
    note = policy.disk_note([role], waiting)
    assert "DISK FULL" in note and "ckpt-9.ckpt" in note and "train: disk full" in lines[-1]
    assert policy.disk_note([role], {"train": {"step": 3}}) == ""
    assert lines[-1] == "train: space again; going on"


def test_the_policy_is_a_config_choice():
    from rundata.config import ConfigError, loads_config

    assert loads_config("").cluster.on_disk_full == "wait"
    assert loads_config("[cluster]\non_disk_full = \"stop\"\n").cluster.on_disk_full == "stop"
    with pytest.raises(ConfigError, match="cluster.on_disk_full"):
        loads_config("[cluster]\non_disk_full = \"retry\"\n")
