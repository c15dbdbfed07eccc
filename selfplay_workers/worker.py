"""The search self-play worker (`fastgo selfplay`): G games at once through one BatchedSearch
and one evaluator (the inference client), two batches in flight; the loop, the pause for a full
game sink and where games go are selfplay_workers.worker_core's.

While the sink (selfplay_workers.interfaces.GameSink) could not take the games that may still
finish, no new batch is submitted: the batches in flight are applied, then self-play pauses with
its connections kept, and resumes when games are confirmed.

Per batch: collect leaves of every searching game into one buffer, submit it, and while it is
out collect the next one; apply replies oldest first. Per move (Python, not per simulation): a
game whose search ended chooses its move (temperature for the first moves, then the most
visited; resignation with a disabled fraction), records the search, plays, and starts the next
search on the reused tree. Never imports torch.
"""
from __future__ import annotations

import logging
import time
import uuid
from collections import deque

import numpy as np

from fastgo.board import BLACK, IllegalMoveError
from fastgo.game import RESIGN, Game
from fastgo.mcts import BatchedSearch
from fastgo.move_choice import choose_move, own_area_points, points_instead_of_pass
from fastgo.nn_cache import NetworkCache
from fastgo.replay import check_game
from fastgo.search_settings import SearchSettings
from fastgo.variants import Search
from rundata.records import MAX_SURPRISE
from rundata.shards import GameRecord
from selfplay_workers.cached_evaluator import CachedEvaluator
from selfplay_workers.worker_core import SEED_MASK, CoreField, WorkerCore

log = logging.getLogger("fastgo.selfplay")


class _GameInProgress:
    """What the worker keeps for one game until it ends (lists of per-move arrays)."""

    __slots__ = ("game", "moves", "full", "root_value", "policy_count", "policy_moves",
                 "policy_visits", "surprise", "versions", "t_start", "seed")

    def __init__(self, size, komi, seed):
        self.game = Game(size, komi)
        self.moves = []
        self.full = []
        self.root_value = []
        self.policy_count = []
        self.policy_moves = []
        self.policy_visits = []
        self.surprise = []
        self.versions = []
        self.t_start = time.time()
        self.seed = seed


class SelfplayWorker:
    """SelfplayWorker(config, evaluator, shard_dir, ...).run(): plays until stopped.

    evaluator: a network.batch_evaluator.BatchEvaluator (submit(planes) -> ticket,
    receive(ticket) -> (logits, values), model_version; the client in production). config: a
    fastgo Config (model for the board size and encoding, selfplay for the search and the
    shards). sink: a GameSink or None (local shards in shard_dir); status: a
    rundata.rundir.StatusFile or None (the heartbeat); clock: the core's monotonic clock
    (selfplay_workers.worker_core.WorkerCore)."""

    stop_requested = CoreField(settable=True)    # True after a signal too: run() then returns
    games_done = CoreField()

    def __init__(self, config, evaluator, *, shard_dir, worker_id=0, games=None, seed=None,
                 sgf_dir=None, status=None, sink=None, clock=time.monotonic):
        self.config = config
        sp = config.selfplay
        self.sp = sp
        self.size = config.model.board_size
        self.evaluator = evaluator
        self.core = WorkerCore(config, shard_dir=shard_dir, stats=self.stats, report=self._report,
                               worker_id=worker_id, games=games, seed=seed, sink=sink,
                               status=status, sgf_dir=sgf_dir, clock=clock)
        self.worker_id, self.games, self.seed = self.core.worker_id, self.core.games, self.core.seed
        self.shards = self.core.shards
        self.search = BatchedSearch(games=self.games, size=self.size, komi=sp.komi,
                                    settings=SearchSettings.for_selfplay(config), seed=self.seed)
        if sp.nn_cache:
            # positions seen again (up to symmetry, same network) answered without a request
            self.evaluator = CachedEvaluator(evaluator, NetworkCache(sp.nn_cache, self.size,
                                                                     self.search.planes))
        self.gumbel = sp.search == Search.GUMBEL
        # self-play's pass rule (fastgo.move_choice), its name (as play's players hold it) and
        # the keyword arguments of the move choice it makes: no winning pass, so "fill" plays
        # games out
        self.pass_rule = sp.pass_rule
        self.pass_options = dict(pass_rule=self.pass_rule, winning_pass=False,
                                 earliest_pass=sp.earliest_pass)
        self.visits = sp.visits_at(None)      # full-search visits now (visits_schedule)
        self._rng = np.random.default_rng(self.seed)
        self.game_seq = 0
        self.evals_discarded = 0       # positions answered after the worker stopped (not applied)
        self.would_resign_games = 0
        self.false_resigns = 0
        self.resigned = 0
        self._live = [None] * self.games
        self._buffers = []             # two uint8 [G * leaves_per_game, P, N, N] leaf buffers
        self._free = []                # indices of the buffers not in flight
        self._pending = deque()        # (ticket, buffer index, count), oldest first

    # -- lifecycle ------------------------------------------------------------------------------

    def install_signal_handlers(self):
        """SIGTERM and SIGINT ask run() to stop after its step."""
        self.core.install_signal_handlers()

    def _new_game(self, g):
        seed = (self.seed * 1_000_003 + self.game_seq) & SEED_MASK
        self.game_seq += 1
        live = _GameInProgress(self.size, self.sp.komi, seed)
        self._live[g] = live
        self.search.set_position(g, live.game)
        self._start(g)

    def _start(self, g):
        """The next search of game g, at the visits the schedule gives the current model."""
        visits = self.sp.visits_at(self.evaluator.model_version)
        cheap = min(self.sp.cheap_visits, visits) if self.sp.cheap_visits else 0
        self.search.start(visits, [g], cheap_visits=cheap)
        self.visits = visits

    def run(self, *, max_games=None, seconds=None):
        """Plays until stop_requested, `max_games` finished games or `seconds`; closes the open
        shard on the way out (games in progress are dropped). Returns the stats dict."""
        search = self.search
        n = self.size
        rows = self.games * search.settings.leaves_per_game
        self._buffers = [np.empty((rows, search.planes, n, n), dtype=np.uint8) for _ in range(2)]
        self._free = [0, 1]
        self._pending.clear()
        for g in range(self.games):
            self._new_game(g)
        return self.core.run(self._step, max_games=max_games, seconds=seconds,
                             finish=self._drain)

    def _step(self, deadline):
        """Submits batches while a buffer is free (none while the sink is full), applies the
        oldest reply, and moves every game whose search ended. With nothing in flight and no
        game ready, waits for the sink (paused) or raises (stalled)."""
        search = self.search
        buffers, free, pending = self._buffers, self._free, self._pending
        paused = self.core.sink_full()
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
            self.core.evals += count
            self.core.batches += 1
            idle = search.idle_games()
        else:
            idle = search.idle_games()
            if not len(idle):
                if paused:
                    self.core.wait_for_sink(deadline)
                    return
                raise RuntimeError("self-play stalled: no batch in flight, no game ready")
        for g in idle:
            self._move(int(g))

    def _drain(self):
        """Receives the replies still owed, so the server's books balance; not applied."""
        pending = self._pending
        while pending:
            ticket, _, count = pending.popleft()
            try:
                self.evaluator.receive(ticket)
                self.evals_discarded += count
            except Exception:          # shutting down: the server may already be gone
                break

    def _receive(self, ticket, planes):
        """The reply to `ticket`; a server answering 'busy' gets the same planes again."""
        return self.core.receive(self.evaluator.receive, lambda: self.evaluator.submit(planes),
                                 ticket)

    # -- one move -------------------------------------------------------------------------------

    def _move(self, g):
        search = self.search
        live = self._live[g]
        game = live.game
        version = self.evaluator.model_version
        if version is not None and (not live.versions or live.versions[-1] != version):
            live.versions.append(int(version))
        if game.is_over():
            self._finish(g, "passes" if game.board.passes >= 2 else "move_cap")
            return
        full = search.is_full_search(g)
        visits = search.root_visits(g)
        nn = self.size * self.size
        # A pass unvisited is neither chosen nor a PUCT target (the improved policy gives every
        # legal move some weight, so a Gumbel target needs the check where it is recorded).
        refused = points_instead_of_pass(game, visits, **self.pass_options,
                                         every_move_weighed=self.gumbel and full)
        no_pass = len(refused) > 0
        if no_pass:
            visits[nn] = 0                       # the pass is not a choice here, nor a target
        # decided: a stone in the own area is played as the pass (a refused pass: not decided)
        own = refused[:0] if no_pass else own_area_points(game, self.pass_rule)
        live.root_value.append(search.root_value(g))
        live.full.append(1 if full else 0)
        if full:
            # The target: the visits (PUCT) or the improved policy (Gumbel), without the pass
            # where it is not a choice; the trainer normalises it.
            target = search.improved_policy(g) if self.gumbel else visits.astype(np.float32)
            if no_pass:
                target[nn] = 0.0
                if self.gumbel and target.sum() > 0:
                    target /= target.sum()
            if len(own):                         # its policy-target weight goes to the pass
                target[nn] += target[own].sum()
                target[own] = 0.0
            points = np.flatnonzero(target > 0)
            live.policy_count.append(len(points))
            live.policy_moves.append(points.astype(np.int16))
            live.policy_visits.append(target[points].astype(np.float32))
            live.surprise.append(policy_surprise(target, search.root_priors(g)))
        else:
            live.policy_count.append(0)
            live.surprise.append(0.0)
        sampled = len(live.moves) < self.sp.temperature_moves
        move = choose_move(search, g, game, **self.pass_options, refused=refused, own_points=own,
                           rng=self._rng if sampled else None)
        if move == RESIGN:
            live.root_value.pop()
            live.full.pop()
            live.policy_count.pop()
            live.surprise.pop()
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
        self.core.moves_done += 1
        if game.is_over():
            self._finish(g, "passes" if game.board.passes >= 2 else "move_cap")
            return
        search.advance(g, int(move))
        self._start(g)

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
            surprise=np.asarray(live.surprise, dtype=np.float32),
            winner=winner, score=score, end=end, ownership=ownership, versions=live.versions,
            worker=self.worker_id, seed=live.seed, id=uuid.uuid4().hex, t_start=live.t_start,
            t_end=time.time(), resign=info)
        self.core.add_game(record)
        self._new_game(g)

    def _report(self):
        s = self.stats()
        log.info("games %d, %.1f moves/s, %.0f evals/s, mean batch %.1f, model version %s, "
                 "resigned %d, would-resign games %d with %d false positives (%.1f%%)%s",
                 s["games"], s["moves_per_s"], s["evals_per_s"], s["mean_batch"],
                 self.evaluator.model_version, s["resigned"],
                 s["would_resign_games"], s["false_resigns"], 100 * s["false_resign_rate"],
                 f", cache hits {100 * s['cache_hit_share']:.1f}%" if "cache_hit_share" in s else "")

    def stats(self) -> dict:
        """The core's figures (selfplay_workers.worker_core.WorkerCore.stats) plus evals_discarded, the
        full-search visits in use and the resignation counters; false_resign_rate in [0, 1]."""
        cache = self.evaluator.stats() if isinstance(self.evaluator, CachedEvaluator) else {}
        return self.core.stats(
            **cache, evals_discarded=self.evals_discarded, resigned=self.resigned, visits=self.visits,
            would_resign_games=self.would_resign_games, false_resigns=self.false_resigns,
            false_resign_rate=self.false_resigns / max(1, self.would_resign_games))


def policy_surprise(target, prior) -> float:
    """KL(target || prior) in nats, KataGo's policy surprise: how far the search's policy
    target (visits or an improved policy, any scale) moved from the network's prior at the root;
    0 for an empty target, at most rundata.records.MAX_SURPRISE. Per move, numpy."""
    total = float(target.sum())
    if total <= 0:
        return 0.0
    where = target > 0
    t = target[where] / total
    p = np.maximum(prior[where], 1e-9)
    return float(min(MAX_SURPRISE, max(0.0, float(np.sum(t * np.log(t / p))))))


def _concat(parts, dtype):
    return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype=dtype)
