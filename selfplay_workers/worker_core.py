"""The part both self-play workers share: seed and shard names, where finished games go, stop
requests, the pause while the game sink is full, the receive that resubmits on 'busy', the
counters, and the run loop around the worker's own step (tree search or policy play)."""
from __future__ import annotations

import logging
import os
import time

from fastgo.bounds import SEED
from rundata.stop_signals import stop_on_signals
from selfplay_workers.game_output import GameOutput
from wire.client import receive_resubmitting_when_busy

log = logging.getLogger("fastgo.selfplay")

SEED_MASK = SEED.high        # all ones: a seed masked with it lies in SEED
SINK_POLL_S = 0.1                    # how long one poll of a full sink waits for confirmations
REPORT_EVERY_S = 60.0


class WorkerCore:
    """One worker's shared state and loop.

    config: a fastgo Config (selfplay: games, seed, komi, shard_games, shard_seconds,
    sgf_every; model: board_size). sink: a selfplay_workers.interfaces.GameSink, or None for
    local shards in `shard_dir`. status: a rundata.rundir.StatusFile or None; it is beaten with
    `stats` (a callable -> JSON-able dict) after every step and while paused. report(): logs
    the worker's figures, called every `report_every_s` seconds. clock: monotonic seconds (the
    deadline, the pause, the reports and `seconds`); a test passes its own.

    The worker advances the counters games_done (through add_game), moves_done, evals (positions
    evaluated) and batches (requests answered)."""

    def __init__(self, config, *, shard_dir, stats, report, worker_id=0, games=None, seed=None,
                 sink=None, status=None, sgf_dir=None, clock=time.monotonic):
        sp = config.selfplay
        self.clock = clock
        self.worker_id = int(worker_id)
        self.games = int(games or sp.games)
        if seed is None:
            seed = sp.seed or int.from_bytes(os.urandom(7), "little")
        self.seed = int(seed) & SEED_MASK
        self.prefix = f"w{self.worker_id}-{os.getpid()}"
        self.sink = sink
        self.status = status
        self._stats = stats
        self._report = report
        self.output = GameOutput(shard_dir=os.fspath(shard_dir), prefix=self.prefix,
                                 size=config.model.board_size, komi=sp.komi,
                                 worker=self.worker_id, shard_games=sp.shard_games,
                                 shard_seconds=sp.shard_seconds, sink=sink, sgf_dir=sgf_dir,
                                 sgf_every=sp.sgf_every)
        self.shards = self.output.shards
        self._stop = False
        self._signalled = _no_signal
        self.paused_s = 0.0                  # seconds spent paused for the sink
        self.pauses = 0
        self.games_done = 0
        self.moves_done = 0
        self.evals = 0
        self.batches = 0
        self.started = clock()
        self.report_every_s = REPORT_EVERY_S
        self._next_report = self.started + self.report_every_s

    # -- stop requests --------------------------------------------------------------------------

    @property
    def stop_requested(self) -> bool:
        """True once set, or once SIGTERM / SIGINT arrived after install_signal_handlers(): the
        loop ends after its step, a paused wait at once, a busy retry before its next try."""
        return bool(self._stop or self._signalled())

    @stop_requested.setter
    def stop_requested(self, value):
        self._stop = bool(value)

    def install_signal_handlers(self):
        """SIGTERM and SIGINT set stop_requested instead of ending the process."""
        self._signalled = stop_on_signals()

    # -- the loop -------------------------------------------------------------------------------

    def run(self, step, *, max_games=None, seconds=None, finish=None):
        """Calls step(deadline) until stop_requested, `max_games` finished games or `seconds`
        (deadline: the clock's time they end, or None). After every step: reads the sink's
        confirmations, seals a shard that is due, reports when due, beats the heartbeat. On a
        normal end finish() (if given) runs; on any end the open shard is sealed (games in
        progress are dropped). Returns stats()."""
        clock = self.clock
        deadline = None if seconds is None else clock() + seconds
        try:
            while not self.stop_requested:
                if max_games is not None and self.games_done >= max_games:
                    break
                if deadline is not None and clock() >= deadline:
                    break
                step(deadline)
                if self.sink is not None:
                    self.sink.poll()
                self.output.maybe_rotate()
                if clock() >= self._next_report:
                    self._report()
                    self._next_report = clock() + self.report_every_s
                if self.status is not None:
                    self.status.beat(self._stats)
            if finish is not None:
                finish()
        finally:
            self.output.close_shard()
        return self._stats()

    def add_game(self, record):
        """A finished game (rundata.shards.GameRecord) to the sink or the local shards."""
        self.output.add(record)
        self.games_done += 1

    # -- back-pressure --------------------------------------------------------------------------

    def sink_full(self) -> bool:
        """True while the games that may finish before the next submission (at most one per
        game slot) could take the sink's unconfirmed games past its bound; False without a
        sink."""
        return self.sink is not None and self.sink.full(headroom=self.games)

    def wait_for_sink(self, deadline=None):
        """Paused: polls the sink until it has room, a stop, or the clock's `deadline`,
        beating the heartbeat meanwhile. Counts the pause and the seconds spent in it."""
        self.pauses += 1
        clock = self.clock
        t0 = clock()
        log.warning("paused: %d games unconfirmed by the recorder (bound %d with %d games at "
                    "once); waiting for confirmations", len(self.sink.unconfirmed),
                    self.sink.max_unconfirmed, self.games)
        while not self.stop_requested and self.sink_full() \
                and (deadline is None or clock() < deadline):
            self.sink.poll(SINK_POLL_S)
            if self.status is not None:
                self.status.beat(self._stats)
        waited = clock() - t0
        self.paused_s += waited
        log.info("resumed after %.1fs paused (%d unconfirmed)", waited, len(self.sink.unconfirmed))

    # -- the server -----------------------------------------------------------------------------

    def receive(self, receive, resubmit, ticket):
        """receive(ticket); while the server answers 'busy', resubmit() -> ticket sends the same
        planes again (with back-off) until it is answered or stop_requested."""
        return receive_resubmitting_when_busy(receive, resubmit, ticket,
                                              lambda: self.stop_requested)

    # -- figures --------------------------------------------------------------------------------

    def stats(self, **fields) -> dict:
        """The shared figures, then `fields` (the worker's own), then the sink's (with the
        pauses) when there is a sink. seconds: since the core was made; *_per_s over it."""
        elapsed = max(1e-9, self.clock() - self.started)
        return {
            "worker": self.worker_id, "seconds": elapsed, "games": self.games_done,
            "moves": self.moves_done, "evals": self.evals, "batches": self.batches,
            "moves_per_s": self.moves_done / elapsed, "evals_per_s": self.evals / elapsed,
            "mean_batch": self.evals / max(1, self.batches), "shards": self.shards.shards_closed,
            "games_in_shards": self.shards.games_in_shards, "empty_games": self.output.empty,
            **fields,
            **({"paused_s": self.paused_s, "pauses": self.pauses, **self.sink.stats()}
               if self.sink is not None else {}),
        }


class CoreField:
    """A worker's attribute that is its core's (`worker.core.NAME`, NAME the attribute's own
    name): read-only unless `settable`."""

    def __init__(self, *, settable=False):
        self.settable = settable
        self.name = ""

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, worker, owner=None):
        return self if worker is None else getattr(worker.core, self.name)

    def __set__(self, worker, value):
        if not self.settable:
            raise AttributeError(f"{self.name} is read-only")
        setattr(worker.core, self.name, value)


def _no_signal():
    return None
