"""Experience shards: the one schema for finished games on disk, written by the self-play
workers and the recorder, read by the trainer and `fastgo bench train`. A record's checks and
its decoding bounds are rundata.records.

A shard is one file: a msgpack header map, then one msgpack map per game, then a fixed 48-byte
trailer (TRAILER_MAGIC, the record count as uint64, the sha256 of every byte before the
trailer). The count and checksum are written at close, so a truncated or altered shard is
detected, never read as a shorter one. Games store moves, not planes: positions are rebuilt by
replaying them (fastgo.replay), which keeps shards small and encoding-independent.

A shard is written under a temporary name starting with '.', flushed, fsynced and renamed to
its final `*.shard` name; readers list `*.shard` only, so they never see a partial shard.

Record fields (all arrays little-endian raw bytes, L = number of moves, N = board size):
  id            32 hex characters, unique per game
  worker, seed  integers (0 .. 2**63 - 1)
  size, komi    the board; the header's values
  moves         int16 [L], pass = N*N
  full          uint8 [L], 1 where the move had a full search (a policy target)
  root_value    float32 [L], the search's root value for the side to move, in [-1, 1]
  policy_count  uint16 [L], visit-distribution entries stored for each move
  policy_moves  int16 [E], policy_visits float32 [E]: the sparse visit distributions, in move order
  winner        1 Black, -1 White, 0 draw;  score: Tromp-Taylor score of the final position
  end           'passes', 'move_cap', 'resign', or 'recorded' (an SGF import's written result)
  ownership     int8 [N*N], Tromp-Taylor ownership of the final position (Black's view)
  versions      model versions that played, in order;  t_start, t_end: unix seconds
  resign        {'disabled': bool, 'would_resign': 0 / 1 Black / 2 White, 'would_resign_move': int}
  players       optional (policy-only play): {'learner': 1 Black / -1 White / 0 both,
                'opponent': the opponent's pool entry name}; absent in search self-play
  surprise      optional float32 [L]: KL(policy target || the network's prior) in nats at each
                full search (0 elsewhere, at most 100): trainer.surprise_weight samples by it;
                absent in older records and imported games
"""
from __future__ import annotations

import hashlib
import os
import re
import struct
import time
import uuid
from dataclasses import dataclass

import msgpack

from fastgo import diskfull
from fastgo.bounds import KOMI
from fastgo.coords import is_board_size
from fastgo.files import fsync_dir, printable, read_bounded, reason
from rundata.records import (  # noqa: F401
    ENDS,
    MAX_CONTAINERS,
    MAX_MAP_KEYS,
    ContainerBudget,
    GameRecord,
    ShardError,
    _check_record,
    _field,
    check_record,
    unpack_record,
)

MAGIC = "fastgo-shard"
FORMAT_VERSION = 1
RULES = "tromp-taylor/positional-superko"
TRAILER_MAGIC = b"FGSHEND1"
TRAILER = struct.Struct("<8sQ32s")          # magic, record count, sha256 of the bytes before
SUFFIX = ".shard"
MAX_SHARD_BYTES = 256 << 20                  # the reader refuses larger files before reading them
MAX_SHARD_GAMES = 1 << 16                    # games in one shard: a game read costs ~3 KB beyond
                                             # its bytes, so this bounds what a shard of tiny
                                             # games takes (writers close a shard at this count)


class ShardWriter:
    """Appends games to `directory/.tmp-PREFIX-*.shard`; close() seals it (trailer, fsync) and
    renames it to `PREFIX-SEQ.shard`. On a full disk the games not written stay in memory (at
    most one shard) and close() writes them once there is room (fastgo.diskfull). Not
    thread-safe."""

    def __init__(self, directory, *, prefix: str, size: int, komi: float, worker: int = 0):
        if not re.fullmatch(r"[A-Za-z0-9_.-]{1,100}", prefix) or prefix.startswith("."):
            raise ValueError(f"shard prefix {prefix!r}: letters, digits, '_', '.', '-' only")
        self.directory = os.fspath(directory)
        self.prefix = prefix
        self.size = int(size)
        self.komi = float(komi)
        self.worker = int(worker)
        self.count = 0
        self.opened = time.monotonic()
        self._hash = hashlib.sha256()
        self.tmp_path = os.path.join(self.directory, f".tmp-{prefix}-{uuid.uuid4().hex[:8]}{SUFFIX}")
        self._file = open(self.tmp_path, "xb", buffering=0)    # raw: each write's count is known
        self._pending = bytearray()      # bytes not on disk yet: its disk was full
        self._write(msgpack.packb({"magic": MAGIC, "version": FORMAT_VERSION, "size": self.size,
                                   "komi": self.komi, "rules": RULES, "worker": self.worker,
                                   "created": time.time()}, use_bin_type=True))

    def _write(self, data: bytes):
        self._hash.update(data)
        self._pending += data
        self._flush(wait=False)

    def _flush(self, *, wait: bool):
        """Writes the pending bytes. A full disk keeps the rest in memory: until close() when
        not `wait`, else waited out as fastgo.diskfull says (or the OSError raised)."""
        while self._pending:
            try:
                del self._pending[:self._file.write(self._pending)]
            except OSError as err:
                if not wait and diskfull.disk_full(err):
                    return
                if not diskfull.handle(err, self.tmp_path):
                    raise

    def add(self, record: GameRecord):
        if record.size != self.size or record.komi != self.komi:
            raise ValueError(f"game is {record.size}x{record.size} komi {record.komi}, shard is "
                             f"{self.size}x{self.size} komi {self.komi}")
        if len(record.moves) == 0:
            raise ValueError("a game of no moves (readers refuse it)")
        if self.count >= MAX_SHARD_GAMES:
            raise ValueError(f"a shard holds at most {MAX_SHARD_GAMES} games")
        self._write(record.to_msgpack())
        self.count += 1

    def close(self, final_name: str) -> str:
        """Seals and renames to `final_name` (a bare file name ending in .shard); returns the
        final path."""
        if os.path.basename(final_name) != final_name or not final_name.endswith(SUFFIX) \
                or final_name.startswith("."):
            raise ValueError(f"bad shard name {final_name!r}")
        self._pending += TRAILER.pack(TRAILER_MAGIC, self.count, self._hash.digest())
        self._flush(wait=True)
        diskfull.retry(self.tmp_path, lambda: os.fsync(self._file.fileno()))
        self._file.close()
        path = os.path.join(self.directory, final_name)
        diskfull.retry(path, lambda: os.rename(self.tmp_path, path))
        fsync_dir(self.directory)
        diskfull.recovered(self.tmp_path)
        diskfull.recovered(path)
        return path

    def abort(self):
        """Drops the unfinished shard."""
        try:
            self._file.close()
        finally:
            if os.path.exists(self.tmp_path):
                os.unlink(self.tmp_path)


class RotatingShards:
    """The open shard of one writing process and its closing rule: a shard is due once it holds
    `max_games` games or has been open `max_seconds`; close() seals it as
    `MILLISECONDS-PREFIX-SEQ.shard` (names sort by time). Used by the workers and the recorder."""

    def __init__(self, directory, *, prefix: str, size: int, komi: float, worker: int = 0,
                 max_games: int, max_seconds: float):
        self.directory = os.fspath(directory)
        self.prefix, self.size, self.komi, self.worker = prefix, int(size), float(komi), int(worker)
        self.max_games, self.max_seconds = int(max_games), float(max_seconds)
        self.writer: ShardWriter | None = None
        self.seq = 0
        self.shards_closed = 0
        self.games_in_shards = 0

    @property
    def count(self) -> int:
        """Games in the open shard."""
        return 0 if self.writer is None else self.writer.count

    def add(self, record: GameRecord):
        if self.writer is None:
            self.writer = ShardWriter(self.directory, prefix=self.prefix, size=self.size,
                                      komi=self.komi, worker=self.worker)
        self.writer.add(record)

    def seconds_left(self):
        """Until the open shard is due by time; None without an open shard."""
        if self.writer is None:
            return None
        return self.writer.opened + self.max_seconds - time.monotonic()

    def due(self) -> bool:
        return self.writer is not None and (
            self.writer.count >= min(self.max_games, MAX_SHARD_GAMES) or self.seconds_left() <= 0)

    def close(self):
        """Seals the open shard if it holds games: (path, games), else None."""
        writer, self.writer = self.writer, None
        if writer is None:
            return None
        if writer.count == 0:
            writer.abort()
            return None
        self.seq += 1
        path = writer.close(f"{time.time_ns() // 1_000_000:015d}-{self.prefix}-{self.seq:05d}{SUFFIX}")
        self.shards_closed += 1
        self.games_in_shards += writer.count
        return path, writer.count


def remove_stale_temporaries(directory, prefix: str) -> int:
    """Deletes the unfinished shards (`.tmp-PREFIX-PID-*`) that killed writers with this prefix
    left behind; never a complete shard, never one of a live process."""
    start = f".tmp-{prefix}-"
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return 0
    removed = 0
    for name in names:
        if name.startswith(start):
            pid = name[len(start):].split("-", 1)[0]
            if pid.isdigit() and int(pid) != os.getpid() and _alive(int(pid)):
                continue
            try:
                os.unlink(os.path.join(directory, name))
                removed += 1
            except FileNotFoundError:
                pass
    return removed


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def list_shards(directory) -> list[str]:
    """Complete shards in `directory`, oldest name first (temporary files excluded)."""
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    return sorted(n for n in names if n.endswith(SUFFIX) and not n.startswith("."))


# ----------------------------------------------------------------------------------------------
# Reading

@dataclass
class Shard:
    path: str
    header: dict
    games: list                  # [GameRecord]

    @property
    def positions(self) -> int:
        return sum(len(g.moves) for g in self.games)


def read_shard(path, *, max_bytes: int = MAX_SHARD_BYTES, check_rules: bool = True) -> Shard:
    """Reads and verifies a shard: header, trailer count and checksum, every record's fields,
    ids unique, moves legal when replayed, result and ownership equal to the replay's.

    Bounds: a file over `max_bytes` (or not a regular file) or of more than MAX_SHARD_GAMES
    games is refused before any record is decoded; memory is O(file size) (msgpack containers
    are capped at MAX_MAP_KEYS keys and 4,096 versions, and every array's length is checked
    against the bytes holding it); time is linear in the file.
    Raises ShardError naming the file and the first problem."""
    path = os.fspath(path)
    data = _read_regular_file(path, max_bytes)
    if len(data) < TRAILER.size:
        raise ShardError(f"{path}: truncated ({len(data)} bytes, no trailer)")
    magic, count, digest = TRAILER.unpack_from(data, len(data) - TRAILER.size)
    if magic != TRAILER_MAGIC:
        raise ShardError(f"{path}: no trailer (truncated or not a shard)")
    body = memoryview(data)[:len(data) - TRAILER.size]
    if hashlib.sha256(body).digest() != digest:
        raise ShardError(f"{path}: checksum mismatch (corrupt)")
    if count > len(body) // 16:
        raise ShardError(f"{path}: record count {count} impossible in {len(body)} bytes")
    if count > MAX_SHARD_GAMES:
        raise ShardError(f"{path}: {count} games, over the {MAX_SHARD_GAMES} a shard may hold")
    budget = ContainerBudget(MAX_CONTAINERS)
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=True, max_buffer_size=max(len(body), 1),
                                **budget.limits(len(body)))
    unpacker.feed(body)
    try:
        header = _check_header(next(unpacker), path)
        games, seen = [], set()
        for index in range(count):
            budget.reset()
            game = _check_record(next(unpacker), header, f"{path}: game {index}", check_rules)
            if game.id in seen:
                raise ShardError(f"{path}: game {index}: duplicate id {game.id}")
            seen.add(game.id)
            games.append(game)
        try:
            next(unpacker)
        except StopIteration:
            pass
        else:
            raise ShardError(f"{path}: more records than the trailer's count {count}")
    except StopIteration:
        raise ShardError(f"{path}: fewer records than the trailer's count {count}") from None
    except (msgpack.UnpackException, ValueError) as err:
        if isinstance(err, ShardError):
            raise
        raise ShardError(f"{path}: undecodable: {type(err).__name__}: {err}") from None
    return Shard(path=path, header=header, games=games)


def _read_regular_file(path, max_bytes):
    try:
        return read_bounded(path, max_bytes)
    except OSError as err:
        raise ShardError(f"{path}: {reason(err)}") from None


def _check_header(header, path):
    if not isinstance(header, dict) or header.get("magic") != MAGIC:
        raise ShardError(f"{path}: not a fastgo shard (bad magic)")
    if header.get("version") != FORMAT_VERSION:
        raise ShardError(f"{path}: format version {header.get('version')!r}, this build reads "
                         f"{FORMAT_VERSION}")
    size = _field(header, "size", int, f"{path}: header")
    komi = _field(header, "komi", float, f"{path}: header")
    if not is_board_size(size) or komi not in KOMI:
        raise ShardError(f"{path}: header: board size {size} or komi {komi} out of range")
    if header.get("rules") != RULES:
        raise ShardError(f"{path}: header: rules {header.get('rules')!r}, expected {RULES!r}")
    return header


MAX_QUARANTINE_NAME = 200       # bytes: room for ".reason" and a suffix within NAME_MAX (255)


def quarantine(path, quarantine_dir, reason: str) -> str:
    """Moves a bad shard to `quarantine_dir` with a `.reason` file beside it; returns the new
    path. A name that is not valid UTF-8 or longer than MAX_QUARANTINE_NAME bytes is replaced by
    `renamed-DIGEST.shard` (the reason file keeps the original, escaped), so the reason file can
    always be written; the reason is written as UTF-8 with undecodable bytes escaped."""
    os.makedirs(quarantine_dir, exist_ok=True)
    name = os.path.basename(os.fspath(path))
    raw = os.fsencode(name)
    try:
        raw.decode("utf-8")
        usable = len(raw) <= MAX_QUARANTINE_NAME
    except UnicodeDecodeError:
        usable = False
    if not usable:
        reason = f"{reason}\noriginal name: {printable(name)}"
        name = f"renamed-{hashlib.sha256(raw).hexdigest()[:16]}{SUFFIX}"
    target = os.path.join(quarantine_dir, name)
    if os.path.exists(target):
        target = os.path.join(quarantine_dir, f"{name}.{uuid.uuid4().hex[:6]}")
    os.replace(path, target)
    with open(target + ".reason", "w", encoding="utf-8", errors="backslashreplace") as handle:
        handle.write(printable(reason) + "\n")
    return target
