"""Where the self-play trainers take shards in: RUN/shards read and checked against the model's
board size and the config's komi; a shard that fails goes to RUN/quarantine with its reason and
is counted, never fatal.
"""
from __future__ import annotations

import logging
import os

from fastgo.files import printable
from fastgo.run.shards import ShardError, list_shards, quarantine, read_shard

log = logging.getLogger("fastgo.train")


class ShardIntake:
    """Reads the run's shards for a model of `size` x `size` and komi `komi`; quarantined counts
    the shards sent to quarantine (a resumed trainer sets it from its checkpoint)."""

    def __init__(self, run_dir, size: int, komi: float, quarantined: int = 0):
        self.run_dir = run_dir
        self.size = size
        self.komi = komi
        self.quarantined = quarantined

    def names(self) -> list[str]:
        """The complete shards of RUN/shards, by name (fastgo.run.shards.list_shards order)."""
        return list_shards(self.run_dir.shards)

    def path(self, name: str) -> str:
        return os.path.join(self.run_dir.shards, name)

    def read(self, name: str):
        """The shard `name` if it reads, checks and fits the board size and komi; else it goes
        to quarantine with its reason and None is returned."""
        path = self.path(name)
        try:
            shard = read_shard(path)
            if shard.header["size"] != self.size:
                raise ShardError(f"{path}: board size {shard.header['size']}, the model plays "
                                 f"{self.size}")
            if shard.header["komi"] != self.komi:
                raise ShardError(f"{path}: komi {shard.header['komi']}, the config says "
                                 f"{self.komi}")
        except ShardError as err:
            self.quarantine(path, str(err))
            return None
        return shard

    def quarantine(self, path, reason: str):
        """Moves `path` to RUN/quarantine with `reason` beside it and counts it."""
        self.quarantined += 1
        try:
            target = quarantine(path, self.run_dir.quarantine, reason)
            log.warning("quarantined %s: %s", printable(os.path.basename(target)), printable(reason))
        except OSError as err:
            log.warning("could not quarantine %s (%s): %s", printable(path), printable(err),
                        printable(reason))
