"""roles.start: every role is started by run_role, which alone loads the config, opens the run
directory, sets up the log, installs the stop signals with the disk-full policy and maps how the
body ends to the exit status. A bad run directory is the same one line and exit status 2 for
every role; a full disk is one line and 75; no role module keeps a copy of the start."""
from __future__ import annotations

import ast
import errno
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from fastgo import diskfull
from fastgo_cli.main import main
from roles.registry import Role
from roles.start import REFUSED, RoleContext, exit_status
from rundata.config import ConfigError, loads_config

ROOT = Path(__file__).resolve().parents[3]
# what only roles/start.py may call or import: the start's steps
START_STEPS = {"open_run_dir", "setup_logging", "stop_on_signals", "on_stop_signals",
               "configure", "diskfull", "stop_signals", "exit_status"}


def test_a_role_stopped_on_a_full_disk_is_one_line_and_status_75(capsys):
    def stopped():
        raise diskfull.DiskFullStop("/run/metrics.csv", errno.ENOSPC)

    def unguarded():
        raise OSError(errno.ENOSPC, "No space left on device", "/run/x")
    for body in (stopped, unguarded):
        assert exit_status("train", body) == diskfull.EXIT_STATUS
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "disk full (No space left on device) writing /run/" in err[0]


RUN_DIR_ROLES = [Role.TRAIN, Role.SELFPLAY, Role.RECORDER, Role.EVALUATE]


@pytest.mark.parametrize("role", RUN_DIR_ROLES)
def test_every_role_refuses_a_run_directory_it_cannot_open_in_the_same_line(
        tmp_path, capsys, write_tiny_config, role):
    config = write_tiny_config(tmp_path / "c.toml")
    not_a_folder = tmp_path / "run"
    not_a_folder.write_text("a file where the run directory goes\n")
    assert main([role.command, "--config", config, "--run-dir", str(not_a_folder)]) == REFUSED
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err == (f"fastgo {role.command}: --run-dir {not_a_folder}: run directory "
                   f"{not_a_folder} exists and is not a directory\n")


def test_the_server_refuses_a_log_file_it_cannot_open_in_one_line(tmp_path, capsys,
                                                                   write_tiny_config):
    config = write_tiny_config(tmp_path / "c.toml")
    assert main(["serve", "--config", config, "--log-file", str(tmp_path)]) == REFUSED
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"fastgo serve: {config}: server.log_file: cannot open {tmp_path}: ")


def start_steps(path):
    """The start's steps (START_STEPS) that the module at `path` names or imports (a context's
    own stop_on_signals, an attribute, is the one start's)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            found |= {alias.name for alias in node.names} | set((node.module or "").split("."))
        elif isinstance(node, ast.Import):
            found |= {part for alias in node.names for part in alias.name.split(".")}
        elif isinstance(node, ast.Name):
            found.add(node.id)
    return found & START_STEPS


def test_every_role_body_is_started_through_the_one_context():
    for role in Role:
        path = ROOT / "roles" / f"{role.value}.py"
        source = path.read_text(encoding="utf-8")
        assert "run_role(Role." in source, role
        assert start_steps(path) == set(), role
    assert start_steps(ROOT / "roles" / "start.py") >= {"open_run_dir", "setup_logging",
                                                          "stop_on_signals", "diskfull"}


def test_the_scan_finds_a_copy_of_the_start(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("from rundata.rundir import open_run_dir\n"
                    "from rundata.stop_signals import on_stop_signals\n"
                    "run = open_run_dir(x)\ndiskfull.configure('wait')\n")
    assert start_steps(path) == {"open_run_dir", "on_stop_signals", "stop_signals", "diskfull"}


def test_the_context_installs_the_stop_signals_with_the_disk_full_policy(monkeypatch):
    seen = []
    monkeypatch.setattr(diskfull, "configure",
                        lambda policy, should_stop=None: seen.append((policy, should_stop)))
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    stops = []
    try:
        context = RoleContext(Role.RECORDER, None, None, None, None, "wait")
        assert context.stopping() is None
        stopping = context.stop_on_signals(lambda: stops.append(1))
        assert seen == [("wait", stopping)] and context.stopping is stopping
        signal.getsignal(signal.SIGTERM)(signal.SIGTERM, None)
        assert stopping() == "SIGTERM" and stops == [1]
        RoleContext(Role.SERVE, None, None, None, None, None).stop_on_signals()
        assert len(seen) == 1                       # the server's disk-full policy stays off
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def test_a_role_log_stays_bounded_and_keeps_the_file_before(tmp_path, monkeypatch):
    from roles import start

    monkeypatch.setattr(start, "MAX_LOG_BYTES", 4000)
    path = tmp_path / "train.log"
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    try:
        start.setup_logging(str(path), quiet=True)
        log = logging.getLogger("fastgo.test")
        for k in range(2000):                      # about 140 KB of lines
            log.info("line %05d of a long run", k)
        for handler in root.handlers:
            handler.flush()
    finally:
        for handler in root.handlers:
            handler.close()
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["train.log", "train.log.1"]
    assert path.stat().st_size <= 4000 and (tmp_path / "train.log.1").stat().st_size <= 4000
    # the newest lines are in the current file, the ones just before in LOG.1
    assert path.read_text().rstrip().endswith("line 01999 of a long run")
    last_before = (tmp_path / "train.log.1").read_text().rstrip().splitlines()[-1]
    first_now = path.read_text().splitlines()[0]
    assert int(last_before.split("line ")[1][:5]) + 1 == int(first_now.split("line ")[1][:5])


NICE_PROBE = """
import logging, os, sys
from roles.registry import Role
from roles.start import yield_cores
from rundata.config import loads_config
config = loads_config("[cluster]\\nselfplay_nice = %d\\n")
before = os.getpriority(os.PRIO_PROCESS, 0)
role = Role(sys.argv[1])
after = yield_cores(role, config, logging.getLogger("probe"))
print(before, after, os.getpriority(os.PRIO_PROCESS, 0))
"""


@pytest.mark.parametrize("role,nice,lowered", [(Role.SERVE, 3, 3), (Role.SELFPLAY, 7, 7),
                                               (Role.TRAIN, 5, 0), (Role.EVALUATE, 5, 0),
                                               (Role.SELFPLAY, 0, 0)])
def test_selfplay_nice_lowers_the_server_and_the_workers_only(role, nice, lowered):
    # in a child process: a process's niceness cannot be raised back by its owner
    out = subprocess.run([sys.executable, "-c", NICE_PROBE % nice, role.value], cwd=ROOT,
                         capture_output=True, text=True, timeout=60, check=True).stdout
    before, returned, after = map(int, out.split())
    assert returned == after == min(19, before + lowered)


GROUP_PROBE = """
import logging, os
from roles.registry import Role
from roles.start import yield_cores
from rundata.config import loads_config
def group():
    # empty for a process whose cgroup is not an autogroup (a container's, a CI runner's)
    words = open("/proc/self/autogroup").read().split()
    return int(words[words.index("nice") + 1]) if "nice" in words else -1
before = group()
yield_cores(Role.SELFPLAY, loads_config("[cluster]\\nselfplay_nice = 4\\n"), logging.getLogger("probe"))
print(before, group())
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/autogroup"), reason="no autogroup on this kernel")
@pytest.mark.parametrize("own_session", [True, False])
def test_selfplay_nice_lowers_the_session_group_of_a_session_leader_only(own_session):
    # Under autogroup a process's nice value orders it only within its session: the supervisor
    # starts each role as a session leader, whose group is lowered with it; a role started
    # inside another session (a shell's) leaves that session's group alone.
    out = subprocess.run([sys.executable, "-c", GROUP_PROBE], cwd=ROOT, capture_output=True,
                         text=True, timeout=60, check=True, start_new_session=own_session).stdout
    before, after = map(int, out.split())
    lowered = own_session and before >= 0
    assert after == (min(19, before + 4) if lowered else before)


@pytest.mark.parametrize("value", ["-1", "20", "2.5", "true"])
def test_selfplay_nice_out_of_range_is_refused_by_name(value):
    with pytest.raises(ConfigError, match="selfplay_nice"):
        loads_config(f"[cluster]\nselfplay_nice = {value}\n")
