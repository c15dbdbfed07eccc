"""Where a self-play worker's finished games go: to a sink (selfplay_workers.interfaces.GameSink,
the recorder on another host) or into local shards (rundata.shards.RotatingShards), and one game
in `sgf_every` as an SGF file."""
from __future__ import annotations

import logging
import os

from rundata.shards import RotatingShards
from selfplay_workers.game_sgf import write_game_sgf

log = logging.getLogger("fastgo.selfplay")


class GameOutput:
    """Finished games of one worker: to `sink` when there is one, else into rotating shards in
    `shard_dir` named after `prefix` (closed after `shard_games` games or `shard_seconds`);
    every `sgf_every`-th game also as SGF in `sgf_dir` (0 or no folder: none)."""

    def __init__(self, *, shard_dir, prefix: str, size: int, komi: float, worker: int,
                 shard_games: int, shard_seconds: float, sink=None, sgf_dir=None,
                 sgf_every: int = 0):
        self.sink = sink                 # None: local shards in shard_dir
        self.shards = RotatingShards(shard_dir, prefix=prefix, size=size, komi=komi,
                                     worker=worker, max_games=shard_games,
                                     max_seconds=shard_seconds)
        self.sgf_dir = sgf_dir
        self.sgf_every = int(sgf_every)
        self.games = 0
        self.empty = 0                   # games of no moves, not written

    def add(self, record):
        """Hands `record` (a rundata.shards.GameRecord) on; an SGF that cannot be written is
        logged, never raised. A game of no moves (a resignation before the first move) teaches
        nothing and readers refuse it: it is counted in `empty`, not written."""
        if len(record.moves) == 0:
            self.empty += 1
            return
        if self.sink is not None:
            self.sink.add(record)
        else:
            self.shards.add(record)
        self.games += 1
        if self.sgf_dir and self.sgf_every and self.games % self.sgf_every == 0:
            self._write_sgf(record)

    def maybe_rotate(self):
        """Seals the open shard once it is due (games or seconds)."""
        if self.shards.due():
            self.close_shard()

    def close_shard(self):
        """Seals the open shard (if it holds games) under its final name."""
        closed = self.shards.close()
        if closed is not None:
            log.info("shard closed: %s games=%d", os.path.basename(closed[0]), closed[1])

    def _write_sgf(self, record):
        try:
            write_game_sgf(record, os.path.join(self.sgf_dir, f"{record.id}.sgf"))
        except OSError as err:
            log.warning("could not write SGF of game %s: %s", record.id, err)
