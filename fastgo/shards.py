"""Experience shards: the one schema for finished self-play games on disk, used by the writer
(self-play workers, later the recorder) and the reader (the trainer, `fastgo bench train`).

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
  end           'passes', 'move_cap' or 'resign'
  ownership     int8 [N*N], Tromp-Taylor ownership of the final position (Black's view)
  versions      model versions that played, in order;  t_start, t_end: unix seconds
  resign        {'disabled': bool, 'would_resign': 0 / 1 Black / 2 White, 'would_resign_move': int}
  players       optional (policy-only play): {'learner': 1 Black / -1 White / 0 both,
                'opponent': the opponent's pool entry name}; absent in search self-play
"""
from __future__ import annotations

import hashlib
import math
import os
import re
import struct
import time
import uuid
from dataclasses import dataclass

import msgpack
import numpy as np

from fastgo.files import fsync_dir, read_bounded, reason
from fastgo.replay import check_game

MAGIC = "fastgo-shard"
FORMAT_VERSION = 1
RULES = "tromp-taylor/positional-superko"
TRAILER_MAGIC = b"FGSHEND1"
TRAILER = struct.Struct("<8sQ32s")          # magic, record count, sha256 of the bytes before
SUFFIX = ".shard"
MAX_SHARD_BYTES = 256 << 20                  # the reader refuses larger files before reading them
MAX_MAP_KEYS = 32
# How a game ended. "recorded": a game imported from a record (an SGF) whose result is taken as
# written (agreement, time, forfeit): its moves must replay legally, its final position need not
# be over, and its ownership is unknown (all 0; the trainer gives it no ownership weight).
ENDS = ("passes", "move_cap", "resign", "recorded")
_ID = re.compile(r"[0-9a-f]{32}")
_INT63 = (1 << 63) - 1


class ShardError(ValueError):
    """A shard that cannot be used; the message names the file and the first problem."""


# ----------------------------------------------------------------------------------------------
# One game

@dataclass
class GameRecord:
    """A finished game as the worker builds it and the reader returns it."""

    size: int
    komi: float
    moves: np.ndarray            # int16 [L]
    full: np.ndarray             # uint8 [L]
    root_value: np.ndarray       # float32 [L]
    policy_count: np.ndarray     # uint16 [L]
    policy_moves: np.ndarray     # int16 [E]
    policy_visits: np.ndarray    # float32 [E]
    winner: int
    score: float
    end: str
    ownership: np.ndarray        # int8 [N*N]
    versions: list
    worker: int = 0
    seed: int = 0
    id: str = ""
    t_start: float = 0.0
    t_end: float = 0.0
    resign: dict | None = None
    players: dict | None = None  # {'learner': 1 / -1 / 0, 'opponent': str} or None

    def to_msgpack(self) -> bytes:
        fields = {
            "id": self.id or uuid.uuid4().hex,
            "worker": int(self.worker), "seed": int(self.seed),
            "size": int(self.size), "komi": float(self.komi),
            "moves": _bytes(self.moves, "<i2"), "full": _bytes(self.full, "u1"),
            "root_value": _bytes(self.root_value, "<f4"),
            "policy_count": _bytes(self.policy_count, "<u2"),
            "policy_moves": _bytes(self.policy_moves, "<i2"),
            "policy_visits": _bytes(self.policy_visits, "<f4"),
            "winner": int(self.winner), "score": float(self.score), "end": self.end,
            "ownership": _bytes(self.ownership, "i1"),
            "versions": [int(v) for v in self.versions],
            "t_start": float(self.t_start), "t_end": float(self.t_end),
            "resign": dict(self.resign or {"disabled": False, "would_resign": 0,
                                           "would_resign_move": -1}),
        }
        if self.players is not None:
            fields["players"] = {"learner": int(self.players["learner"]),
                                 "opponent": str(self.players["opponent"])}
        return msgpack.packb(fields, use_bin_type=True)


def _bytes(array, dtype):
    return np.ascontiguousarray(array, dtype=dtype).tobytes()


# ----------------------------------------------------------------------------------------------
# Writing

class ShardWriter:
    """Appends games to `directory/.tmp-PREFIX-*.shard`; close() seals it (trailer, fsync) and
    renames it to `PREFIX-SEQ.shard`. Not thread-safe."""

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
        self._file = open(self.tmp_path, "xb")
        self._write(msgpack.packb({"magic": MAGIC, "version": FORMAT_VERSION, "size": self.size,
                                   "komi": self.komi, "rules": RULES, "worker": self.worker,
                                   "created": time.time()}, use_bin_type=True))

    def _write(self, data: bytes):
        self._file.write(data)
        self._hash.update(data)

    def add(self, record: GameRecord):
        if record.size != self.size or record.komi != self.komi:
            raise ValueError(f"game is {record.size}x{record.size} komi {record.komi}, shard is "
                             f"{self.size}x{self.size} komi {self.komi}")
        self._write(record.to_msgpack())
        self.count += 1

    def close(self, final_name: str) -> str:
        """Seals and renames to `final_name` (a bare file name ending in .shard); returns the
        final path."""
        if os.path.basename(final_name) != final_name or not final_name.endswith(SUFFIX) \
                or final_name.startswith("."):
            raise ValueError(f"bad shard name {final_name!r}")
        self._file.write(TRAILER.pack(TRAILER_MAGIC, self.count, self._hash.digest()))
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        path = os.path.join(self.directory, final_name)
        os.rename(self.tmp_path, path)
        fsync_dir(self.directory)
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
        self.writer = None
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
        return self.writer is not None and (self.writer.count >= self.max_games
                                            or self.seconds_left() <= 0)

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

    Bounds: a file over `max_bytes` (or not a regular file) is refused before any read; memory
    is O(file size) (msgpack containers are capped at MAX_MAP_KEYS keys and 4,096 versions, and
    every array's length is checked against the bytes holding it); time is linear in the file.
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
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=True, max_buffer_size=max(len(body), 1),
                                max_str_len=1 << 12, max_bin_len=len(body), max_array_len=4096,
                                max_map_len=MAX_MAP_KEYS, max_ext_len=0)
    unpacker.feed(body)
    try:
        header = _check_header(next(unpacker), path)
        games, seen = [], set()
        for index in range(count):
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


def _field(record, key, kind, where):
    if key not in record:
        raise ShardError(f"{where}: missing field {key!r}")
    value = record[key]
    if kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif kind is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    else:
        ok = isinstance(value, kind)
    if not ok:
        raise ShardError(f"{where}: field {key!r} has the wrong type ({type(value).__name__})")
    return value


def _check_header(header, path):
    if not isinstance(header, dict) or header.get("magic") != MAGIC:
        raise ShardError(f"{path}: not a fastgo shard (bad magic)")
    if header.get("version") != FORMAT_VERSION:
        raise ShardError(f"{path}: format version {header.get('version')!r}, this build reads "
                         f"{FORMAT_VERSION}")
    size = _field(header, "size", int, f"{path}: header")
    komi = _field(header, "komi", float, f"{path}: header")
    if not 2 <= size <= 25 or abs(komi) > 1000:
        raise ShardError(f"{path}: header: board size {size} or komi {komi} out of range")
    if header.get("rules") != RULES:
        raise ShardError(f"{path}: header: rules {header.get('rules')!r}, expected {RULES!r}")
    return header


def _array(record, key, dtype, length, where):
    raw = _field(record, key, bytes, where)
    itemsize = np.dtype(dtype).itemsize
    if length is not None and len(raw) != length * itemsize:
        raise ShardError(f"{where}: {key} holds {len(raw)} bytes, expected {length * itemsize}")
    if len(raw) % itemsize:
        raise ShardError(f"{where}: {key} holds {len(raw)} bytes, not a multiple of {itemsize}")
    return np.frombuffer(raw, dtype=dtype).astype(np.dtype(dtype).newbyteorder("="))


def check_record(record, *, size: int, komi: float, where: str = "record",
                 check_rules: bool = True) -> GameRecord:
    """One decoded game record (a msgpack map) with every check the shard reader applies, for a
    board size and komi: the GameRecord, or ShardError naming the first problem."""
    return _check_record(record, {"size": size, "komi": komi}, where, check_rules)


def _check_record(record, header, where, check_rules) -> GameRecord:
    if not isinstance(record, dict):
        raise ShardError(f"{where}: not a map")
    size, komi = header["size"], header["komi"]
    nn = size * size
    if _field(record, "size", int, where) != size or _field(record, "komi", float, where) != komi:
        raise ShardError(f"{where}: board or komi differ from the header's")
    game_id = _field(record, "id", str, where)
    if not _ID.fullmatch(game_id):
        raise ShardError(f"{where}: bad id {game_id[:40]!r}")
    moves = _array(record, "moves", "<i2", None, where)
    length = len(moves)
    if length > 2 * nn:
        raise ShardError(f"{where}: {length} moves, over the move cap {2 * nn}")
    full = _array(record, "full", "u1", length, where)
    root_value = _array(record, "root_value", "<f4", length, where)
    policy_count = _array(record, "policy_count", "<u2", length, where)
    entries = int(policy_count.sum(dtype=np.int64))
    policy_moves = _array(record, "policy_moves", "<i2", entries, where)
    policy_visits = _array(record, "policy_visits", "<f4", entries, where)
    ownership = _array(record, "ownership", "i1", nn, where)
    if np.any(policy_count > nn + 1):
        raise ShardError(f"{where}: a visit distribution with more entries than moves")
    if entries and (policy_moves.min() < 0 or policy_moves.max() > nn):
        raise ShardError(f"{where}: a visit distribution names a point off the board")
    if not np.all(np.isfinite(policy_visits)) or np.any(policy_visits < 0):
        raise ShardError(f"{where}: visit counts must be finite and >= 0")
    if not np.all(np.isfinite(root_value)) or np.any(np.abs(root_value) > 1.0):
        raise ShardError(f"{where}: root values must be in [-1, 1]")
    if np.any(full > 1) or np.any(np.abs(ownership) > 1):
        raise ShardError(f"{where}: full flags must be 0/1 and ownership -1/0/1")
    winner = _field(record, "winner", int, where)
    score = _field(record, "score", float, where)
    end = _field(record, "end", str, where)
    if winner not in (-1, 0, 1) or end not in ENDS:
        raise ShardError(f"{where}: winner {winner!r} or end {end[:20]!r} not allowed")
    versions = _field(record, "versions", list, where)
    if not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= _INT63 for v in versions):
        raise ShardError(f"{where}: versions must be integers in 0..2**63-1")
    worker = _field(record, "worker", int, where)
    seed = _field(record, "seed", int, where)
    if not (0 <= worker <= _INT63 and 0 <= seed <= _INT63):
        raise ShardError(f"{where}: worker or seed out of range")
    resign = _field(record, "resign", dict, where)
    players = None
    if "players" in record:
        players = _field(record, "players", dict, where)
        learner, opponent = players.get("learner"), players.get("opponent")
        if (set(players) != {"learner", "opponent"} or not isinstance(learner, int)
                or isinstance(learner, bool) or learner not in (-1, 0, 1)
                or not isinstance(opponent, str) or not 1 <= len(opponent) <= 64):
            raise ShardError(f"{where}: players must be {{'learner': -1/0/1, 'opponent': a name "
                             f"of 1..64 characters}}")
    if check_rules:
        bad, reason, over, replay_score, replay_owner = check_game(size, komi, moves)
        if bad >= 0:
            raise ShardError(f"{where}: move {bad} is {reason}")
        if end == "resign":
            if over or winner == 0:
                raise ShardError(f"{where}: resignation recorded after the end, or without a winner")
        elif end == "recorded":
            replay_owner = np.zeros(nn, dtype=np.int8)
        else:
            if not over:
                raise ShardError(f"{where}: ends by {end} but the game is not over after its moves")
            expected = 1 if replay_score > 0 else (-1 if replay_score < 0 else 0)
            if winner != expected or abs(score - replay_score) > 1e-3:
                raise ShardError(f"{where}: result {winner} / {score} disagrees with the replay "
                                 f"({expected} / {replay_score})")
        if not np.array_equal(ownership, replay_owner):
            raise ShardError(f"{where}: ownership disagrees with the final position")
    return GameRecord(size=size, komi=komi, moves=moves, full=full, root_value=root_value,
                      policy_count=policy_count, policy_moves=policy_moves,
                      policy_visits=policy_visits, winner=winner, score=float(score), end=end,
                      ownership=ownership, versions=list(versions), worker=worker, seed=seed,
                      id=game_id, t_start=float(_field(record, "t_start", float, where)),
                      t_end=float(_field(record, "t_end", float, where)), resign=resign,
                      players=players)


def quarantine(path, quarantine_dir, reason: str) -> str:
    """Moves a bad shard to `quarantine_dir` with a `.reason` file beside it; returns the new
    path. A shard that vanished meanwhile is left alone."""
    os.makedirs(quarantine_dir, exist_ok=True)
    name = os.path.basename(path)
    target = os.path.join(quarantine_dir, name)
    if os.path.exists(target):
        target = os.path.join(quarantine_dir, f"{name}.{uuid.uuid4().hex[:6]}")
    os.replace(path, target)
    with open(target + ".reason", "w") as handle:
        handle.write(reason + "\n")
    return target
