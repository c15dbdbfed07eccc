"""Where the self-play trainers take shards in: RUN/shards read and checked against the model's
board size and the config's komi; a shard that fails goes to RUN/quarantine with its reason and
is counted, never fatal. The shards kept on disk are a bounded tail (trainer.shards_kept_mb):
past it the oldest shards taken in and no longer held are deleted (`prune`), so a run of a week
keeps what a day keeps.
"""
from __future__ import annotations

import logging
import os

from fastgo.files import printable
from rundata.shards import ShardError, list_shards, quarantine, read_shard

log = logging.getLogger("fastgo.train")


class ShardIntake:
    """Reads the run's shards for a model of `size` x `size` and komi `komi`; quarantined counts
    the shards sent to quarantine (a resumed trainer sets it from its checkpoint)."""

    def __init__(self, run_dir, size: int, komi: float, quarantined: int = 0, kept_bytes: int = 0):
        self.run_dir = run_dir
        self.size = size
        self.komi = komi
        self.quarantined = quarantined
        self.kept_bytes = int(kept_bytes)     # 0: every shard kept
        self._sizes: dict[str, int] = {}      # shard name -> bytes, of the names listed lately

    def names(self) -> list[str]:
        """The complete shards of RUN/shards, by name (rundata.shards.list_shards order)."""
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

    def prune(self, used, held) -> list[str]:
        """Deletes the oldest shards (by name: a shard's name starts with its time) while RUN/shards
        holds more than kept_bytes, only shards in `used` (taken in) and not in `held` (still
        in the window or queued); returns the names deleted (the caller forgets them). Nothing
        with kept_bytes 0. A shard that cannot be deleted is left, with one warning."""
        if self.kept_bytes <= 0:
            return []
        names = self.names()
        sizes = {}
        for name in names:
            size = self._sizes.get(name)
            if size is None:
                try:
                    size = os.stat(self.path(name)).st_size
                except OSError:
                    continue
            sizes[name] = size
        self._sizes = sizes
        total = sum(sizes.values())
        deleted = []
        for name in names:
            if total <= self.kept_bytes:
                break
            if name not in used or name in held or name not in sizes:
                continue
            try:
                os.unlink(self.path(name))
            except FileNotFoundError:
                pass
            except OSError as err:
                log.warning("could not delete %s past the shards kept: %s", printable(name),
                            printable(err.strerror or err))
                continue
            total -= sizes.pop(name)
            deleted.append(name)
        if deleted:
            log.info("deleted %d old shard(s) (%s .. %s): RUN/shards holds %.0f MB, %d MB kept "
                     "(trainer.shards_kept_mb)", len(deleted), printable(deleted[0]),
                     printable(deleted[-1]), total / (1 << 20), self.kept_bytes >> 20)
        return deleted
