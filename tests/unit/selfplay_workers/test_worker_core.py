"""The loop both self-play workers share (selfplay_workers.worker_core), run under the search worker and
the policy-only worker: a game sink that stays full pauses the worker, which keeps beating its
status heartbeat, counts the pause, and still honours a stop request (an assignment or SIGTERM)
and its deadline."""
from __future__ import annotations

import os
import signal

import numpy as np
import pytest

from network.batch_evaluator import UniformEvaluator
from rundata.config import loads_config
from rundata.rundir import open_run_dir
from selfplay_workers.worker_core import SINK_POLL_S

GAMES = 4
BOUND = 6          # full(headroom=GAMES) once 3 games are held: the worker pauses at 3..6 held


class _Clock:
    """A monotonic clock that moves only when a wait advances it."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


class _SilentSink:
    """A recorder that never confirms: every game added stays unconfirmed. poll(timeout_s)
    waits its whole timeout, as a socket with nothing to read does: it advances the clock by
    it. After every such wait, on_wait(waits) runs (waits: how many so far); past `most`
    waits the test fails instead of looping for ever."""

    def __init__(self, bound, clock, on_wait=None, most=1000):
        self.max_unconfirmed = bound
        self.unconfirmed = {}
        self.polls = 0
        self.waits = 0
        self.clock = clock
        self.on_wait = on_wait
        self.most = most

    def add(self, record):
        self.unconfirmed[record.id] = record

    def full(self, headroom=0):
        return len(self.unconfirmed) + headroom > self.max_unconfirmed

    def poll(self, timeout_s=0.0):
        self.polls += 1
        if timeout_s > 0:
            self.waits += 1
            assert self.waits <= self.most, f"still paused after {self.most} waits"
            self.clock.now += timeout_s
            if self.on_wait is not None:
                self.on_wait(self.waits)
        return 0

    def flush(self, wait_s):
        return not self.unconfirmed

    def close(self):
        pass

    def stats(self):
        return {"unconfirmed": len(self.unconfirmed)}


class _Heartbeat:
    """A StatusFile that keeps every beat's figures (StatusFile's own interval is its tests')."""

    def __init__(self):
        self.beats = []

    def beat(self, fields_fn, force=False):
        self.beats.append(dict(fields_fn()))


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


def _search_worker(tmp_path, sink, status, clock):
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
                          status=status, sink=sink, clock=clock)


def _policy_worker(tmp_path, sink, status, clock):
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
                        status=status, sink=sink, clock=clock)


WORKERS = {"search": _search_worker, "policy": _policy_worker}


@pytest.mark.parametrize("kind", sorted(WORKERS))
def test_a_worker_paused_by_a_silent_sink_keeps_beating_and_counts_the_pause(tmp_path, kind):
    clock, status = _Clock(), _Heartbeat()
    worker = None

    def stop_after_five(waits):
        if waits == 5:
            worker.stop_requested = True          # as an assignment or SIGTERM would

    sink = _SilentSink(BOUND, clock, on_wait=stop_after_five)
    worker = WORKERS[kind](tmp_path, sink, status, clock)
    stats = worker.run()
    assert stats["pauses"] == 1 and stats["paused_s"] == pytest.approx(5 * SINK_POLL_S)
    assert stats["games"] == len(sink.unconfirmed)
    assert GAMES - 1 <= len(sink.unconfirmed) <= BOUND      # paused once held + GAMES > BOUND
    # one beat per wait while paused and the loop's after the step, each counting the pause,
    # with no further game
    paused = [beat for beat in status.beats if beat.get("pauses")]
    assert len(paused) == 5 + 1
    assert all(beat["pauses"] == 1 for beat in paused)
    assert all(beat["games"] == beat["unconfirmed"] == len(sink.unconfirmed) for beat in paused)
    seconds = [beat["seconds"] for beat in paused]
    assert seconds == sorted(seconds) and seconds[-1] - seconds[0] == pytest.approx(4 * SINK_POLL_S)


@pytest.mark.parametrize("kind", sorted(WORKERS))
def test_a_worker_paused_by_a_silent_sink_stops_at_its_deadline(tmp_path, kind):
    clock = _Clock()
    sink = _SilentSink(BOUND, clock)
    worker = WORKERS[kind](tmp_path, sink, None, clock)
    started = clock()
    seconds = 1.0
    stats = worker.run(seconds=seconds)               # the sink fails the test if it never ends
    elapsed = clock() - started
    assert seconds <= elapsed <= seconds + SINK_POLL_S + 1e-9
    assert sink.waits == round(elapsed / SINK_POLL_S)
    assert stats["pauses"] == 1 and stats["paused_s"] == pytest.approx(elapsed)
    assert stats["games"] == len(sink.unconfirmed) <= BOUND


@pytest.mark.parametrize("kind", sorted(WORKERS))
def test_sigterm_after_install_signal_handlers_stops_the_worker_before_its_first_step(tmp_path, kind):
    worker = WORKERS[kind](tmp_path, None, None, _Clock())
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
