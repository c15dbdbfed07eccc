"""Policy-only self-play (`fastgo selfplay` with [trainer] algorithm = "reinforce" or "value"):
G games at once, every move sampled from the network's policy (fastgo.policy_play), no search.

REINFORCE: each mini-batch of G games is the current policy (slot `current`) against ONE
opponent drawn from the pool file `pool.json` of the run directory (seeded by the worker's seed,
its id and the mini-batch index), served from one of this worker's own slots `opponent-wID-0/1`
(mini-batches alternate between them so two can overlap), which the worker fills with the
opponent's checkpoint bytes (the server creates such a slot on its first load). The learner
plays Black in the even games, White in the odd ones; steps alternate between the positions
whose learner is to move (one request) and those whose opponent is to move. Without a pool
file (before the trainer writes it) the opponent is the server's `current` slot as it stands,
named "initial": the network the run starts from, which is the pool's first entry; the
untrained step-0 checkpoint is never an opponent.
REINFORCE evaluates every position under the identity symmetry (the trainer rebuilds them so).
Value mode: the current policy plays both sides of every game, under random symmetries.

Games go to the same shards as search self-play: full = 1 on the learner's moves, the played
move as a one-entry policy, the value head's output as root_value, versions = [learner,
opponent], players = {"learner": 1 / -1 / 0, "opponent": NAME}. Never imports torch.
"""
from __future__ import annotations

import logging
import os
import time
import uuid

import numpy as np

from fastgo.board import BLACK, WHITE
from fastgo.files import read_regular, reason
from fastgo.move_choice import policy_may_pass
from fastgo.policy_play import PHASE_ALL, PHASE_LEARNER, PHASE_OPPONENT, PolicyPlay
from fastgo.variants import Algorithm, Worker, selfplay_worker
from rundata.pool import PoolError, draw_opponent, pool_path, read_pool
from rundata.shards import GameRecord
from selfplay_workers.worker_core import SEED_MASK, CoreField, WorkerCore
from wire.client import ServerError

log = logging.getLogger("fastgo.selfplay")

INITIAL = "initial"                      # opponent name of the start network without a pool


class _MiniBatch:
    """G games of one opponent: game g of mini-batch k is played in game slot g."""

    __slots__ = ("index", "group", "opponent", "slot", "versions", "started", "finished",
                 "black", "wins")

    def __init__(self, index, group, opponent, slot, opponent_version):
        self.index, self.group, self.opponent, self.slot = index, group, opponent, slot
        self.versions = {"learner": None, "opponent": opponent_version}
        self.started = self.finished = self.black = self.wins = 0


class PolicyWorker:
    """PolicyWorker(config, client, run_dir=..., ...).run(): plays mini-batches until stopped.

    Two mini-batches overlap: a game slot whose game of mini-batch k ended starts its game of
    k + 1 at once (against k + 1's opponent, in the other of this worker's two opponent slots
    `opponent-wID-0` / `-1`), so the batch stays full while k's last games finish; k + 2 waits
    until k is complete. Value mode has no opponent: every slot restarts at once.

    client: a selfplay_workers.interfaces.PolicyClient (the inference client). run_dir: a
    rundata.rundir.RunDir (pool.json; shards unless `shard_dir`). sink: a GameSink or None
    (local shards); status: a rundata.rundir.StatusFile or None (the heartbeat); sgf_dir: one
    game in selfplay.sgf_every is written there as SGF; clock: the core's monotonic clock
    (selfplay_workers.worker_core.WorkerCore)."""

    stop_requested = CoreField(settable=True)    # True after a signal too: run() then returns
    games_done = CoreField()

    def __init__(self, config, client, *, run_dir, worker_id=0, games=None, seed=None,
                 status=None, shard_dir=None, sink=None, sgf_dir=None, clock=time.monotonic):
        sp = config.selfplay
        self.config, self.sp = config, sp
        self.algorithm = config.trainer.algorithm
        if selfplay_worker(self.algorithm) is not Worker.POLICY:
            raise ValueError(f"policy-only self-play serves reinforce and value, not "
                             f"{str(self.algorithm)!r}")
        self.reinforce = self.algorithm == Algorithm.REINFORCE   # one opponent per mini-batch
        self.size = config.model.board_size
        self.client = client
        self.run_dir = run_dir
        self.core = WorkerCore(config, shard_dir=shard_dir or run_dir.shards, stats=self.stats,
                               report=self._report, worker_id=worker_id, games=games, seed=seed,
                               sink=sink, status=status, sgf_dir=sgf_dir, clock=clock)
        self.worker_id, self.games, self.seed = self.core.worker_id, self.core.games, self.core.seed
        self.shards = self.core.shards
        self.current_slot = config.trainer.publish_slot
        self.opponent_slots = (f"opponent-w{self.worker_id}-0", f"opponent-w{self.worker_id}-1")
        # REINFORCE: every position under the identity symmetry, the one the trainer rebuilds
        # them with, so the update's pi is the policy that chose the moves. The value stage
        # keeps the 8 symmetries for varied positions.
        self.play = PolicyPlay(games=self.games, size=self.size, komi=sp.komi,
                               encoding=config.model.encoding, floor=sp.policy_floor,
                               allow_pass=policy_may_pass(sp.policy_pass_rule),
                               symmetries=not self.reinforce)
        self.max_checkpoint_bytes = config.server.max_checkpoint_bytes
        self._open = {}                       # mini-batch index -> _MiniBatch with games left
        self._slot_batch = [None] * self.games   # the mini-batch game slot g plays now, or None
        self._slot_next = [0] * self.games    # the mini-batch game slot g plays next
        self._slot_started = [0.0] * self.games   # unix time game slot g's game started
        self._loaded = [None, None]           # (path, mtime_ns, size) in each opponent slot
        self._loaded_entry = [None, None]     # its PoolEntry
        self._loaded_version = [None, None]   # its model version
        self._pool_problem = ""
        self._buffer = None                   # uint8 [G, P, N, N]: the positions of one step
        self._phase = PHASE_ALL               # whose positions the next step evaluates
        self.minibatches = 0
        self.learner_wins = 0
        self.learner_games = 0
        self.opponent_loads = 0

    def install_signal_handlers(self):
        """SIGTERM and SIGINT ask run() to stop after its step."""
        self.core.install_signal_handlers()

    # -- the opponent ---------------------------------------------------------------------------

    def _pool(self):
        try:
            pool = read_pool(pool_path(self.run_dir.root), run_root=self.run_dir.root)
        except PoolError as err:
            if str(err) != self._pool_problem:
                log.error("%s; keeping the opponents already loaded", err)
                self._pool_problem = str(err)
            return "bad"
        self._pool_problem = ""
        return pool

    def _read_checkpoint(self, rel, group):
        root = os.path.realpath(self.run_dir.root)
        path = os.path.realpath(os.path.join(root, rel))
        if os.path.commonpath([root, path]) != root:
            raise OSError(f"{rel}: outside the run directory")
        def unchanged(info):
            return (rel, info.st_mtime_ns, info.st_size) == self._loaded[group]

        try:
            info, data = read_regular(path, self.max_checkpoint_bytes, skip=unchanged)
        except OSError as err:
            raise OSError(f"{rel}: {reason(err)} (server.max_checkpoint_bytes "
                          f"{self.max_checkpoint_bytes})") from None
        return (rel, info.st_mtime_ns, info.st_size), data

    def _load(self, entry, group):
        """Puts `entry`'s checkpoint into opponent slot `group` (unless it is there already);
        returns True, or False (logged) when it cannot be read or the server refuses it."""
        slot = self.opponent_slots[group]
        try:
            key, data = self._read_checkpoint(entry.path, group)
            if data is not None:
                self._loaded_version[group] = int(self.client.reload(slot, data=data))
                self._loaded[group] = key
                self.opponent_loads += 1
                log.info("opponent %s (%s, step %d) loaded into slot %s as version %d", entry.name,
                         entry.path, entry.step, slot, self._loaded_version[group])
        except (OSError, ServerError) as err:
            if isinstance(err, ServerError) and err.code == "unknown_slot":
                raise                             # a server that creates no opponent slots
            log.error("opponent %s (%s) not loaded: %s", entry.name, entry.path, err)
            return False
        self._loaded_entry[group] = entry
        return True

    def _opponent(self, index, group):
        """(name, slot, version or None) of mini-batch `index`'s opponent."""
        pool = self._pool()
        kept = self._loaded_entry[group]
        if pool == "bad":
            pool = None if kept is None else [kept]
        if pool is None:
            return INITIAL, self.current_slot, None
        entry = draw_opponent(pool, self.seed, self.worker_id, index)
        if self._load(entry, group) or kept is not None:    # else: keep what is in the slot
            return (self._loaded_entry[group].name, self.opponent_slots[group],
                    self._loaded_version[group])
        return "current", self.current_slot, None          # nothing loadable: itself

    def _batch(self, index):
        """Mini-batch `index`, opened (opponent drawn and loaded) if needed; None while
        mini-batch index - 2 still has games (its opponent slot is in use)."""
        batch = self._open.get(index)
        if batch is not None:
            return batch
        if self.reinforce and any(k <= index - 2 for k in self._open):
            return None
        group = index % 2
        if self.reinforce:
            name, slot, version = self._opponent(index, group)
        else:
            name, slot, version = "self", self.current_slot, None
        batch = self._open[index] = _MiniBatch(index, group, name, slot, version)
        return batch

    def _seed(self, index, g):
        return (self.seed * 1_000_003 + index * self.games + g) & SEED_MASK

    def _fill(self):
        """Starts the next game in every idle game slot whose mini-batch may open."""
        for g in range(self.games):
            if self._slot_batch[g] is not None:
                continue
            batch = self._batch(self._slot_next[g])
            if batch is None:
                continue
            if self.reinforce:
                learner = BLACK if g % 2 == 0 else WHITE
            else:
                learner = 0
            self.play.start(g, learner, self._seed(batch.index, g), batch.group)
            self._slot_batch[g] = batch
            self._slot_next[g] = batch.index + 1
            self._slot_started[g] = time.time()
            batch.started += 1

    # -- the games ------------------------------------------------------------------------------

    def run(self, *, max_games=None, seconds=None):
        """Plays until stop_requested, `max_games` finished games or `seconds`; closes the open
        shard on the way out (games in progress are dropped). Returns the stats dict."""
        n = self.size
        self._buffer = np.zeros((self.games, self.play.planes, n, n), dtype=np.uint8)
        self._phase = PHASE_OPPONENT if self.reinforce else PHASE_ALL
        return self.core.run(self._step, max_games=max_games, seconds=seconds)

    def _step(self, deadline):
        """One move in every game whose side to move this step's phase names (REINFORCE
        alternates opponent and learner steps); waits instead while the sink is full."""
        if self.core.sink_full():
            self.core.wait_for_sink(deadline)
            return
        play, phase = self.play, self._phase
        self._fill()
        if not play.live:
            raise RuntimeError("policy self-play stalled: no game could start")
        count = play.collect(self._buffer, phase)
        learner_phase = phase != PHASE_OPPONENT
        if phase != PHASE_ALL:
            self._phase = PHASE_OPPONENT if phase == PHASE_LEARNER else PHASE_LEARNER
        if count == 0:
            return
        logits, values = self._evaluate(self._buffer, count, learner_phase)
        moves_before = play.moves_played
        if play.apply(logits, values):
            for g in range(self.games):
                if self._slot_batch[g] is not None and play.is_over(g):
                    self._finish(g)
        self.core.moves_done += play.moves_played - moves_before
        self.core.evals += count

    def _evaluate(self, buffer, count, learner_phase):
        """(logits, values) for buffer[:count]: the learner's rows from the current slot, or
        the opponents' rows (group 0 first, then group 1) from their mini-batches' slots."""
        if learner_phase:
            parts = [(0, count, self.current_slot, None)]
        else:
            c0, c1 = self.play.group_counts
            parts = []
            for group, lo, hi in ((0, 0, c0), (1, c0, c0 + c1)):
                if hi > lo:
                    batch = next(b for b in self._open.values() if b.group == group)
                    parts.append((lo, hi, batch.slot, batch))
        tickets = [self.client.submit(buffer[lo:hi], slot=slot) for lo, hi, slot, _ in parts]
        replies = []
        for ticket, (lo, hi, slot, batch) in zip(tickets, parts):
            replies.append(self._receive(ticket, buffer[lo:hi], slot))
            self.core.batches += 1
            version = self.client.model_version
            for b in ([batch] if batch is not None else []):
                if b.versions["opponent"] is None:
                    b.versions["opponent"] = version
            if learner_phase:
                for b in self._open.values():
                    if b.versions["learner"] is None:
                        b.versions["learner"] = version
        if len(replies) == 1:
            return replies[0]
        return (np.concatenate([r[0] for r in replies]), np.concatenate([r[1] for r in replies]))

    def _receive(self, ticket, planes, slot):
        """The reply to `ticket`; a server answering 'busy' gets the same planes again."""
        return self.core.receive(self.client.receive,
                                 lambda: self.client.submit(planes, slot=slot), ticket)

    def _finish(self, g):
        play = self.play
        batch = self._slot_batch[g]
        self._slot_batch[g] = None
        moves, values = play.record(g)
        score, ownership = play.result(g)
        learner = play.learner(g)
        colour = 0 if learner == 0 else (1 if learner == BLACK else -1)
        if learner == 0:
            full = np.ones(len(moves), dtype=np.uint8)
        else:
            movers = np.where(np.arange(len(moves)) % 2 == 0, BLACK, WHITE)
            full = (movers == learner).astype(np.uint8)
        winner = 1 if score > 0 else (-1 if score < 0 else 0)
        learner_version = batch.versions["learner"] if batch.versions["learner"] is not None else 0
        opponent_version = (batch.versions["opponent"] if batch.versions["opponent"] is not None
                            else learner_version)
        record = GameRecord(
            size=self.size, komi=self.sp.komi, moves=moves, full=full, root_value=values,
            policy_count=np.ones(len(moves), dtype=np.uint16), policy_moves=moves.copy(),
            policy_visits=np.ones(len(moves), dtype=np.float32), winner=winner, score=score,
            end="passes" if len(moves) < play.cap else "move_cap", ownership=ownership,
            versions=[int(learner_version), int(opponent_version)], worker=self.worker_id,
            seed=self._seed(batch.index, g), id=uuid.uuid4().hex, t_start=self._slot_started[g],
            t_end=time.time(), players={"learner": colour, "opponent": batch.opponent})
        self.core.add_game(record)
        batch.finished += 1
        if colour:
            self.learner_games += 1
            self.learner_wins += winner == colour
            batch.black += colour == 1
            batch.wins += winner == colour
        if batch.finished == self.games:
            del self._open[batch.index]
            self.minibatches += 1
            if self.reinforce:
                log.info("mini-batch %d: opponent %s, learner black %d white %d, learner wins "
                         "%d of %d", batch.index, batch.opponent, batch.black,
                         batch.finished - batch.black, batch.wins, batch.finished)

    def _report(self):
        s = self.stats()
        log.info("games %d, %.1f moves/s, %.0f evals/s, mean batch %.1f, mini-batches %d, "
                 "learner wins %d of %d, opponent loads %d", s["games"], s["moves_per_s"],
                 s["evals_per_s"], s["mean_batch"], s["minibatches"], s["learner_wins"],
                 s["learner_games"], s["opponent_loads"])

    def stats(self) -> dict:
        """The core's figures (selfplay_workers.worker_core.WorkerCore.stats) plus the algorithm,
        finished mini-batches, the learner's wins of its games and the opponent loads."""
        return self.core.stats(
            algorithm=self.algorithm, minibatches=self.minibatches,
            learner_wins=self.learner_wins, learner_games=self.learner_games,
            opponent_loads=self.opponent_loads)
