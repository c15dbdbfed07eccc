"""The loop both self-play workers share (selfplay_workers.worker_core), run under the search worker and
the policy-only worker: a game sink that stays full pauses the worker, which keeps beating its
status heartbeat, counts the pause, and still honours a stop request (an assignment or SIGTERM)
and its deadline."""
from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest

from fastgo.config import loads_config
from fastgo.rundir import StatusFile, open_run_dir, read_status
from inference_server.batch_evaluator import UniformEvaluator

GAMES = 4
BOUND = 6          # full(headroom=GAMES) once 3 games are held: the worker pauses at 3..6 held


class _SilentSink:
    """A recorder that never confirms: every game added stays unconfirmed. poll(timeout_s)
    waits its whole timeout, as a socket with nothing to read does."""

    def __init__(self, bound):
        self.max_unconfirmed = bound
        self.unconfirmed = {}
        self.polls = 0
        self._never = threading.Event()

    def add(self, record):
        self.unconfirmed[record.id] = record

    def full(self, headroom=0):
        return len(self.unconfirmed) + headroom > self.max_unconfirmed

    def poll(self, timeout_s=0.0):
        self.polls += 1
        if timeout_s > 0:
            self._never.wait(timeout_s)
        return 0

    def flush(self, wait_s):
        return not self.unconfirmed

    def close(self):
        pass

    def stats(self):
        return {"unconfirmed": len(self.unconfirmed)}


class _PolicyClient:
    """The policy worker's client interface: uniform logits, value 0.25, model version 3."""

    model_version = None

    def __init__(self):
        self._replies = {}
        self._tickets = 0

    def submit(self, planes, slot=None):
        self._tickets += 1
        self._replies[self._tickets] = len(planes)
        return self._tickets

    def receive(self, ticket):
        count = self._replies.pop(ticket)
        self.model_version = 3
        return np.zeros((count, 26), np.float32), np.full(count, 0.25, np.float32)

    def reload(self, slot, path="", *, data=None):
        raise AssertionError("value mode loads no opponent")


def _search_worker(tmp_path, sink, status):
    from selfplay_workers.worker import SelfplayWorker

    config = loads_config(f"""
[model]
board_size = 5
[selfplay]
games = {GAMES}
visits = 4
komi = 0.5
resign_threshold = -1.0
""")
    return SelfplayWorker(config, UniformEvaluator(5), shard_dir=tmp_path / "shards", seed=1,
                          status=status, sink=sink)


def _policy_worker(tmp_path, sink, status):
    from selfplay_workers.policy_worker import PolicyWorker

    config = loads_config(f"""
[model]
board_size = 5
[selfplay]
games = {GAMES}
komi = 0.5
[trainer]
algorithm = "value"
""")
    return PolicyWorker(config, _PolicyClient(), run_dir=open_run_dir(tmp_path / "run"), seed=1,
                        status=status, sink=sink)


WORKERS = {"search": _search_worker, "policy": _policy_worker}


def _wait_for(predicate, timeout_s, what):
    """predicate()'s first truthy value, polled every 10 ms for at most timeout_s."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.01)
    raise AssertionError(f"timed out after {timeout_s}s waiting for {what}")


def _start(worker, **run_args):
    result = []
    thread = threading.Thread(target=lambda: result.append(worker.run(**run_args)), daemon=True)
    thread.start()
    return thread, result


@pytest.mark.parametrize("kind", sorted(WORKERS))
def test_a_worker_paused_by_a_silent_sink_keeps_beating_and_counts_the_pause(tmp_path, kind):
    run_dir = open_run_dir(tmp_path / "status")
    status = StatusFile(run_dir, "selfplay-w0", interval_s=0.02)
    sink = _SilentSink(BOUND)
    worker = WORKERS[kind](tmp_path, sink, status)
    thread, result = _start(worker)
    try:
        paused = _wait_for(lambda: (s := read_status(run_dir, "selfplay-w0")[0])
                           and s.get("pauses", 0) >= 1 and s, 30, "a heartbeat that counts a pause")
        _, mtime = read_status(run_dir, "selfplay-w0")
        # still paused: the heartbeat goes on, with no further game
        again, _ = _wait_for(lambda: (r := read_status(run_dir, "selfplay-w0"))[0] != paused
                                 and r[1] is not None and r[1] > mtime and r, 10,
                                 "a heartbeat while paused")
        assert again["pauses"] == paused["pauses"] == 1
        assert again["games"] == paused["games"] == len(sink.unconfirmed)
        assert GAMES - 1 <= len(sink.unconfirmed) <= BOUND     # paused once held + GAMES > BOUND
        assert again["unconfirmed"] == len(sink.unconfirmed)
        assert again["seconds"] > paused["seconds"]
        polls = sink.polls
        _wait_for(lambda: sink.polls > polls, 10, "the paused worker to poll its sink")
    finally:
        worker.stop_requested = True
        thread.join(30)
    assert not thread.is_alive(), "the paused worker ignored the stop request"
    stats = result[0]
    assert stats["pauses"] == 1 and stats["paused_s"] > 0
    assert stats["games"] == len(sink.unconfirmed) <= BOUND


@pytest.mark.parametrize("kind", sorted(WORKERS))
def test_a_worker_paused_by_a_silent_sink_stops_at_its_deadline(tmp_path, kind):
    sink = _SilentSink(BOUND)
    worker = WORKERS[kind](tmp_path, sink, None)
    seconds = 1.0
    started = time.monotonic()
    thread, result = _start(worker, seconds=seconds)
    thread.join(20)
    try:
        assert not thread.is_alive(), "the paused worker ran past its deadline"
    finally:
        worker.stop_requested = True
        thread.join(30)
    elapsed = time.monotonic() - started
    stats = result[0]
    assert stats["pauses"] == 1 and 0 < stats["paused_s"] <= elapsed
    assert seconds <= elapsed < 30
    assert stats["games"] == len(sink.unconfirmed) <= BOUND


@pytest.mark.parametrize("kind", sorted(WORKERS))
def test_sigterm_after_install_signal_handlers_stops_the_worker_before_its_first_step(tmp_path, kind):
    worker = WORKERS[kind](tmp_path, None, None)
    previous = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        worker.install_signal_handlers()
        assert not worker.stop_requested
        os.kill(os.getpid(), signal.SIGTERM)      # os.kill runs the Python handler before returning
        assert worker.stop_requested
        stats = worker.run(max_games=1)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    assert stats["games"] == stats["moves"] == stats["evals"] == 0
    assert "pauses" not in stats                  # no sink: no pause figures
    with pytest.raises(AttributeError):
        worker.games_done = 5                     # the core counts the games
