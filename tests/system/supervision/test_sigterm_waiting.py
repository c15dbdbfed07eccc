"""Every `fastgo` command that can wait on a file or a peer ends soon after SIGTERM or SIGINT:
the trainer waiting for self-play and publishing to a server that never answers, a self-play
worker whose server never answers, the recorder with no workers, the evaluator with nothing to
evaluate, the arena with a GTP engine that never answers (at start or in a game; the engine is
ended too), and `fastgo ratings` / `fastgo curve` handed FIFOs (refused, never waited on).

Each process is started through the real command, the test waits for an event that shows it is
waiting (a request arriving at a silent socket, a status file, a ready line, a marker the engine
writes), sends the signal, and bounds the exit."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
import zmq

EXIT_BOUND_S = 10.0        # seconds from the signal to the exit (measured: 0.2 to 3 s)
READY_BOUND_S = 60.0


def _exit_after(proc, number):
    """Sends signal `number`; returns (exit status, seconds it took), or fails the test."""
    sent = time.monotonic()
    proc.send_signal(number)
    try:
        status = proc.wait(EXIT_BOUND_S)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"still running {EXIT_BOUND_S} s after "
                             f"{signal.Signals(number).name}") from None
    return status, time.monotonic() - sent


@pytest.fixture
def silent_server(free_endpoint):
    """(endpoint, ROUTER socket) bound on loopback that receives requests and never answers."""
    context = zmq.Context()
    endpoint = free_endpoint()
    socket = context.socket(zmq.ROUTER)
    socket.setsockopt(zmq.LINGER, 0)
    socket.bind(endpoint)
    try:
        yield endpoint, socket
    finally:
        socket.close(0)
        context.term()


def _kill(proc):
    if proc is not None and proc.poll() is None:
        proc.kill()
        proc.wait(10)


def _tail(path):
    try:
        with open(path, errors="replace") as handle:
            return handle.read()[-2000:]
    except OSError as err:
        return f"({err})"


def test_the_trainer_publishing_to_a_silent_server_stops_on_sigterm(
        tmp_path, silent_server, write_tiny_config, fastgo):
    endpoint, socket = silent_server
    config = write_tiny_config(tmp_path / "c.toml", endpoint=endpoint)
    out = tmp_path / "train.out"
    proc = None
    try:
        proc = fastgo("train", "--config", config, "--run-dir", tmp_path / "run", "--quiet",
                      log_path=out)
        # Ready: its step-0 checkpoint arrives at the server, which never answers.
        assert socket.poll(int(READY_BOUND_S * 1000)), _tail(out)
        status, _ = _exit_after(proc, signal.SIGTERM)
        assert status == 0, _tail(out)
        assert "stopped at step 0" in _tail(out)
    finally:
        _kill(proc)


def test_the_trainer_waiting_for_self_play_stops_on_sigterm(tmp_path, write_tiny_config, fastgo,
                                                           wait_for):
    config = write_tiny_config(tmp_path / "c.toml")
    run = tmp_path / "run"
    heartbeat = run / "logs" / "train.status.json"
    out = tmp_path / "train.out"
    proc = None

    def waiting():
        try:
            return json.loads(heartbeat.read_text()).get("waiting") is True
        except (OSError, ValueError):
            return False
    try:
        proc = fastgo("train", "--config", config, "--run-dir", run, "--no-publish", "--quiet",
                      log_path=out)
        wait_for(lambda: waiting() or proc.poll() is not None, READY_BOUND_S,
                 what="the trainer's heartbeat saying it waits")
        assert proc.poll() is None, _tail(out)
        status, _ = _exit_after(proc, signal.SIGTERM)
        assert status == 0, _tail(out)
    finally:
        _kill(proc)


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_worker_whose_server_never_answers_stops(tmp_path, silent_server, write_tiny_config,
                                                   fastgo, number):
    endpoint, socket = silent_server
    config = write_tiny_config(tmp_path / "c.toml", endpoint=endpoint)
    out = tmp_path / "selfplay.out"
    proc = None
    try:
        proc = fastgo("selfplay", "--config", config, "--run-dir", tmp_path / "run", "--quiet",
                      log_path=out)
        assert socket.poll(int(READY_BOUND_S * 1000)), _tail(out)     # its first batch
        status, _ = _exit_after(proc, number)
        assert status == 0, _tail(out)
        assert "fastgo selfplay: stats" in _tail(out)
    finally:
        _kill(proc)


def test_the_recorder_with_no_workers_stops_on_sigterm(tmp_path, recorder_config, free_endpoint,
                                                       start_recorder):
    config = recorder_config(tmp_path / "c.toml", free_endpoint(), free_endpoint(),
                             shard_seconds=5.0)
    proc = None
    try:
        proc = start_recorder(config, tmp_path / "run", tmp_path / "recorder.log")   # ready line
        status, _ = _exit_after(proc, signal.SIGTERM)
        assert status == 0, _tail(tmp_path / "recorder.log")
    finally:
        _kill(proc)


def test_the_evaluator_with_nothing_to_evaluate_stops_on_sigterm(tmp_path, write_tiny_config,
                                                                 fastgo, wait_for):
    config = write_tiny_config(tmp_path / "c.toml")
    run = tmp_path / "run"
    out = tmp_path / "evaluate.out"
    proc = None
    try:
        proc = fastgo("evaluate", "--config", config, "--run-dir", run, "--quiet", log_path=out)
        wait_for(lambda: (run / "logs" / "evaluate.status.json").exists() or
                 proc.poll() is not None, READY_BOUND_S, what="the evaluator's heartbeat")
        assert proc.poll() is None, _tail(out)
        status, _ = _exit_after(proc, signal.SIGTERM)
        assert status == 0, _tail(out)
    finally:
        _kill(proc)


# A GTP engine that writes its pid to MARKER and then never answers: at once ("start"), or once
# asked for a move ("genmove"); it answers everything else.
SILENT_ENGINE = textwrap.dedent("""
    import os, sys, time
    mode, marker = sys.argv[1], sys.argv[2]

    def hang():
        with open(marker + ".tmp", "w") as handle:
            handle.write(str(os.getpid()))
        os.replace(marker + ".tmp", marker)
        while True:
            time.sleep(60)

    if mode == "start":
        hang()
    for line in sys.stdin:
        words = line.split()
        ident = words.pop(0) if words and words[0].isdigit() else ""
        if words and words[0] == "genmove":
            hang()
        answer = {"protocol_version": "2", "name": "silent", "version": "1",
                  "list_commands": "genmove"}.get(words[0] if words else "", "")
        sys.stdout.write(f"={ident} {answer}\\n\\n")
        sys.stdout.flush()
        if words and words[0] == "quit":
            break
""")


def _gone(pid):
    """True when process `pid` has ended (a zombie counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.mark.parametrize("mode,number", [("start", signal.SIGTERM), ("genmove", signal.SIGTERM),
                                         ("genmove", signal.SIGINT)],
                         ids=["start-SIGTERM", "genmove-SIGTERM", "genmove-SIGINT"])
def test_the_arena_with_a_gtp_engine_that_never_answers_stops(tmp_path, fastgo, wait_for, mode,
                                                              number):
    engine = tmp_path / "silent_engine.py"
    engine.write_text(SILENT_ENGINE)
    marker = tmp_path / "hanging.pid"
    out = tmp_path / "arena.out"
    proc, pid = None, None
    try:
        proc = fastgo("arena", "random", f"gtp:{sys.executable} {engine} {mode} {marker}",
                      "--games", "2", "--size", "5", "--table", tmp_path / "ratings.jsonl",
                      log_path=out)
        wait_for(lambda: marker.exists() or proc.poll() is not None, READY_BOUND_S,
                 what="the engine's marker")
        assert proc.poll() is None, _tail(out)
        pid = int(marker.read_text())
        status, _ = _exit_after(proc, number)
        assert status == 130, _tail(out)
        text = _tail(out)
        assert ("interrupted before the match started" if mode == "start"
                else "interrupted after 0 games") in text
        assert _gone(pid), "the engine was left running"
        assert not (tmp_path / "ratings.jsonl").exists()      # no game: nothing appended
    finally:
        _kill(proc)
        if pid is not None and not _gone(pid):
            os.kill(pid, signal.SIGKILL)


def test_ratings_and_curve_refuse_fifos_without_waiting(tmp_path, fastgo):
    table = tmp_path / "ratings.jsonl"
    os.mkfifo(table)
    run = tmp_path / "run"
    run.mkdir()
    for name in ("ratings.jsonl", "evaluations.jsonl", "metrics.csv"):
        os.mkfifo(run / name)
    for args in (("ratings", table), ("curve", run, "-o", tmp_path / "c.png")):
        proc = fastgo(*args)
        try:
            out, _ = proc.communicate(timeout=EXIT_BOUND_S + 20)      # python start included
        finally:
            _kill(proc)
        assert proc.returncode == 2, out
    assert not (tmp_path / "c.png").exists()
