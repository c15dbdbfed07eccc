"""The self-play worker (`fastgo selfplay`): G games at once through one BatchedSearch and one
evaluator (the inference client), two batches in flight, finished games written to shards.

Finished games go to local shards, or to a sink (`sink`: an object with add(record),
poll(timeout_s), full(headroom), close(); selfplay_workers.remote_sink sends them to a recorder
on another host). While the sink could not take the games that may still finish, no new batch is
submitted: self-play pauses, the connections stay, and it resumes when games are confirmed.

Per batch: collect leaves of every searching game into one buffer, submit it, and while it is
out collect the next one; apply replies oldest first. Per move (Python, not per simulation): a
game whose search ended chooses its move (temperature for the first moves, then the most
visited; resignation with a disabled fraction), records the search, plays, and starts the next
search on the reused tree. Never imports torch.
"""
from __future__ import annotations

import logging
import os
import signal
import time
import uuid
from collections import deque

import numpy as np

from fastgo.board import BLACK, IllegalMoveError
from fastgo.game import RESIGN, Game
from fastgo.mcts import BatchedSearch
from fastgo.replay import check_game
from fastgo.shards import GameRecord
from selfplay_workers.game_output import GameOutput

log = logging.getLogger("fastgo.selfplay")


class _GameInProgress:
    """What the worker keeps for one game until it ends (lists of per-move arrays)."""

    __slots__ = ("game", "moves", "full", "root_value", "policy_count", "policy_moves",
                 "policy_visits", "versions", "t_start", "seed")

    def __init__(self, size, komi, seed):
        self.game = Game(size, komi)
        self.moves = []
        self.full = []
        self.root_value = []
        self.policy_count = []
        self.policy_moves = []
        self.policy_visits = []
        self.versions = []
        self.t_start = time.time()
        self.seed = seed


class SelfplayWorker:
    """SelfplayWorker(config, evaluator, shard_dir, ...).run(): plays until stopped.

    evaluator: submit(planes) -> ticket, receive(ticket) -> (logits, values), model_version
    (inference_server.evaluator's interface; the client in production). config: a fastgo Config
    (model for the board size and encoding, selfplay for the search and the shards)."""

    def __init__(self, config, evaluator, *, shard_dir, worker_id=0, games=None, seed=None,
                 sgf_dir=None, status=None, sink=None):
        self.config = config
        sp = config.selfplay
        self.sp = sp
        self.size = config.model.board_size
        self.evaluator = evaluator
        self.shard_dir = os.fspath(shard_dir)
        self.sgf_dir = sgf_dir
        self.status = status                 # fastgo.rundir.StatusFile or None (heartbeat)
        self.sink = sink                     # None: local shards in shard_dir
        self.paused_s = 0.0                  # time spent paused for the sink
        self.pauses = 0
        self.worker_id = int(worker_id)
        self.games = int(games or sp.games)
        if seed is None:
            seed = sp.seed or int.from_bytes(os.urandom(7), "little")
        self.seed = int(seed) & ((1 << 63) - 1)
        self.search = BatchedSearch(
            games=self.games, size=self.size, komi=sp.komi, encoding=config.model.encoding,
            c_puct=sp.c_puct, fpu_reduction=sp.fpu_reduction,
            dirichlet_alpha=sp.dirichlet_alpha or None, noise_weight=sp.noise_weight,
            max_batches=2, temperature_moves=sp.temperature_moves,
            resign_threshold=None if sp.resign_threshold <= -1.0 else sp.resign_threshold,
            resign_consecutive=sp.resign_consecutive,
            resign_disabled_fraction=sp.resign_disabled_fraction,
            cheap_visits=sp.cheap_visits or None,
            full_search_fraction=sp.full_search_fraction if sp.cheap_visits else 1.0,
            seed=self.seed)
        self.prefix = f"w{self.worker_id}-{os.getpid()}"
        self._rng = np.random.default_rng(self.seed)
        self.stop_requested = False
        self.output = GameOutput(shard_dir=self.shard_dir, prefix=self.prefix, size=self.size,
                                 komi=sp.komi, worker=self.worker_id, shard_games=sp.shard_games,
                                 shard_seconds=sp.shard_seconds, sink=self.sink,
                                 sgf_dir=self.sgf_dir, sgf_every=sp.sgf_every)
        self.shards = self.output.shards
        self.game_seq = 0
        # counters (also the final stats line)
        self.games_done = 0
        self.moves_done = 0
        self.evals = 0                 # positions evaluated and applied to the search
        self.evals_discarded = 0       # positions answered after the worker stopped (not applied)
        self.batches = 0
        self.would_resign_games = 0
        self.false_resigns = 0
        self.resigned = 0
        self.started = time.monotonic()
        self.report_every_s = 60.0
        self._next_report = self.started + self.report_every_s
        self._live = [None] * self.games

    # -- lifecycle ------------------------------------------------------------------------------

    def install_signal_handlers(self):
        def handler(signum, frame):
            self.stop_requested = True
        signal.signal(signal.SIGTERM, handler)
        signal.signal(signal.SIGINT, handler)

    def _new_game(self, g):
        seed = (self.seed * 1_000_003 + self.game_seq) & ((1 << 63) - 1)
        self.game_seq += 1
        live = _GameInProgress(self.size, self.sp.komi, seed)
        self._live[g] = live
        self.search.set_position(g, live.game)
        self.search.start(self.sp.visits, [g])

    def run(self, *, max_games=None, seconds=None):
        """Plays until stop_requested, `max_games` finished games or `seconds`; closes the open
        shard on the way out (games in progress are dropped). Returns the stats dict."""
        search = self.search
        n = self.size
        rows = self.games * search.leaves_per_game
        buffers = [np.empty((rows, search.planes, n, n), dtype=np.uint8) for _ in range(2)]
        free = [0, 1]
        pending = deque()
        deadline = None if seconds is None else time.monotonic() + seconds
        for g in range(self.games):
            self._new_game(g)
        try:
            while not self.stop_requested:
                if max_games is not None and self.games_done >= max_games:
                    break
                if deadline is not None and time.monotonic() >= deadline:
                    break
                paused = self.sink is not None and self._sink_full()
                while free and not paused:
                    k = free.pop()
                    count = search.collect(buffers[k])
                    if count == 0:
                        free.append(k)
                        break
                    pending.append((self.evaluator.submit(buffers[k][:count]), k, count))
                if pending:
                    ticket, k, count = pending.popleft()
                    logits, values = self._receive(ticket, buffers[k][:count])
                    search.apply(logits, values)
                    free.append(k)
                    self.evals += count
                    self.batches += 1
                    idle = search.idle_games()
                else:
                    idle = search.idle_games()
                    if not len(idle):
                        if paused:
                            self._wait_for_sink(deadline)
                            continue
                        raise RuntimeError("self-play stalled: no batch in flight, no game ready")
                for g in idle:
                    self._move(int(g))
                if self.sink is not None:
                    self.sink.poll()
                self.output.maybe_rotate()
                if time.monotonic() >= self._next_report:
                    self._report()
                if self.status is not None:
                    self.status.beat(self.stats)
            # Replies still owed are received so the server's books balance; not applied.
            while pending:
                ticket, k, count = pending.popleft()
                try:
                    self.evaluator.receive(ticket)
                    self.evals_discarded += count
                except Exception:          # shutting down: the server may already be gone
                    break
        finally:
            self.output.close_shard()
        return self.stats()

    def _sink_full(self):
        """True while the games that may finish before the next submission (at most one per
        game slot) could take the sink's unconfirmed games past its bound."""
        return self.sink.full(headroom=self.games)

    def _wait_for_sink(self, deadline=None):
        """Paused: nothing in flight, every game waiting for a batch. Polls the sink until it
        has room, a stop or the monotonic `deadline`, beating the heartbeat meanwhile."""
        self.pauses += 1
        t0 = time.monotonic()
        log.warning("paused: %d games unconfirmed by the recorder (bound %d with %d games at "
                    "once); waiting for confirmations", len(self.sink.unconfirmed),
                    self.sink.max_unconfirmed, self.games)
        while not self.stop_requested and self._sink_full() \
                and (deadline is None or time.monotonic() < deadline):
            self.sink.poll(0.1)
            if self.status is not None:
                self.status.beat(self.stats)
        waited = time.monotonic() - t0
        self.paused_s += waited
        log.info("resumed after %.1fs paused (%d unconfirmed)", waited, len(self.sink.unconfirmed))

    def _receive(self, ticket, planes):
        """The reply to `ticket`; a server answering 'busy' gets the same planes again."""
        from inference_server.client import receive_resubmitting_when_busy

        return receive_resubmitting_when_busy(self.evaluator.receive,
                                              lambda: self.evaluator.submit(planes), ticket,
                                              lambda: self.stop_requested)

    # -- one move -------------------------------------------------------------------------------

    def _move(self, g):
        search = self.search
        live = self._live[g]
        game = live.game
        version = getattr(self.evaluator, "model_version", None)
        if version is not None and (not live.versions or live.versions[-1] != version):
            live.versions.append(int(version))
        if game.is_over():
            self._finish(g, "passes" if game.board.passes >= 2 else "move_cap")
            return
        full = search.is_full_search(g)
        visits = search.root_visits(g)
        nn = self.size * self.size
        candidates = None                        # board points allowed instead of a pass
        if self.sp.pass_when_filled and visits[nn] > 0:   # a pass unvisited is neither chosen nor a target
            candidates = self._unfilled_points(game)
        elif len(live.moves) < self.sp.no_pass_before and visits[:nn].any():
            candidates = np.flatnonzero(visits[:nn])
        no_pass = candidates is not None and len(candidates) > 0
        if no_pass:
            visits[nn] = 0                       # the pass is not a choice here, nor a target
        live.root_value.append(search.root_value(g))
        live.full.append(1 if full else 0)
        if full:
            points = np.flatnonzero(visits)
            live.policy_count.append(len(points))
            live.policy_moves.append(points.astype(np.int16))
            live.policy_visits.append(visits[points].astype(np.float32))
        else:
            live.policy_count.append(0)
        move = search.choose_move(g)
        if no_pass and move == nn:
            move = self._choose_without_pass(visits, candidates, search.root_priors(g),
                                             len(live.moves))
        if move == RESIGN:
            live.root_value.pop()
            live.full.pop()
            live.policy_count.pop()
            if full:
                live.policy_moves.pop()
                live.policy_visits.pop()
            self.resigned += 1
            game.resign(game.to_move)
            self._finish(g, "resign")
            return
        try:
            game.play(int(move))                 # superko is the search's too: never refused
        except IllegalMoveError as err:          # defensive: a refused move becomes a pass
            log.error("game %d: search chose %s: %s; passing instead", g, move, err)
            move = game.board.pass_move
            game.play(move)
        live.moves.append(int(move))
        self.moves_done += 1
        if game.is_over():
            self._finish(g, "passes" if game.board.passes >= 2 else "move_cap")
            return
        search.advance(g, int(move))
        search.start(self.sp.visits, [g])

    @staticmethod
    def _unfilled_points(game):
        """Legal board points (superko included) that do not fill the mover's own eye."""
        board = game.board
        color = board.to_move
        legal = np.flatnonzero(game.legal_moves()[:-1])
        return np.array([m for m in legal if not board.is_eye(int(m), color)], dtype=np.int64)

    def _choose_without_pass(self, visits, candidates, priors, move_number):
        """A point among `candidates` when passing is not allowed: by the search's visits
        (sampled in proportion before temperature_moves, else the most visited), by the prior
        where none was visited."""
        weights = visits[candidates].astype(np.float64)
        if weights.sum() <= 0:
            return int(candidates[int(np.argmax(priors[candidates]))])
        if move_number < self.sp.temperature_moves:
            return int(self._rng.choice(candidates, p=weights / weights.sum()))
        return int(candidates[int(np.argmax(weights))])

    def _finish(self, g, end):
        live = self._live[g]
        info = self.search.resign_info(g)
        moves = np.asarray(live.moves, dtype=np.int16)
        _, _, _, score, ownership = check_game(self.size, self.sp.komi, moves)
        game = live.game
        if end == "resign":
            winner = 1 if game.winner == BLACK else -1
        else:
            winner = 1 if score > 0 else (-1 if score < 0 else 0)
        if info["disabled"] and info["would_resign"]:
            self.would_resign_games += 1
            loser = 1 if info["would_resign"] == BLACK else -1
            if winner == loser:
                self.false_resigns += 1
        record = GameRecord(
            size=self.size, komi=self.sp.komi, moves=moves,
            full=np.asarray(live.full, dtype=np.uint8),
            root_value=np.clip(np.asarray(live.root_value, dtype=np.float32), -1.0, 1.0),
            policy_count=np.asarray(live.policy_count, dtype=np.uint16),
            policy_moves=_concat(live.policy_moves, np.int16),
            policy_visits=_concat(live.policy_visits, np.float32),
            winner=winner, score=score, end=end, ownership=ownership, versions=live.versions,
            worker=self.worker_id, seed=live.seed, id=uuid.uuid4().hex, t_start=live.t_start,
            t_end=time.time(), resign=info)
        self.output.add(record)
        self.games_done += 1
        self._new_game(g)

    def _report(self):
        s = self.stats()
        log.info("games %d, %.1f moves/s, %.0f evals/s, mean batch %.1f, model version %s, "
                 "resigned %d, would-resign games %d with %d false positives (%.1f%%)",
                 s["games"], s["moves_per_s"], s["evals_per_s"], s["mean_batch"],
                 getattr(self.evaluator, "model_version", None), s["resigned"],
                 s["would_resign_games"], s["false_resigns"], 100 * s["false_resign_rate"])
        self._next_report = time.monotonic() + self.report_every_s

    def stats(self) -> dict:
        elapsed = max(1e-9, time.monotonic() - self.started)
        return {
            "worker": self.worker_id, "seconds": elapsed, "games": self.games_done,
            "moves": self.moves_done, "evals": self.evals, "evals_discarded": self.evals_discarded, "batches": self.batches,
            "moves_per_s": self.moves_done / elapsed, "evals_per_s": self.evals / elapsed,
            "mean_batch": self.evals / max(1, self.batches), "shards": self.shards.shards_closed,
            "games_in_shards": self.shards.games_in_shards, "resigned": self.resigned,
            "would_resign_games": self.would_resign_games, "false_resigns": self.false_resigns,
            "false_resign_rate": self.false_resigns / max(1, self.would_resign_games),
            **({"paused_s": self.paused_s, "pauses": self.pauses, **self.sink.stats()}
               if self.sink is not None and hasattr(self.sink, "stats") else {}),
        }


def _concat(parts, dtype):
    return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype=dtype)
