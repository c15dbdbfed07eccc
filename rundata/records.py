"""A finished game as it travels and is stored: GameRecord, its msgpack map, and the checks a
record from disk or from a peer must pass before anything uses it (decoding bounded in what it
allocates, every field typed and range-checked, unknown fields refused, the moves replayed and
the result compared with the final position). The field list is in rundata.shards.
"""
from __future__ import annotations

import math
import re
import uuid
from dataclasses import dataclass

import msgpack
import numpy as np

from fastgo.bounds import SEED
from fastgo.files import escaped
from fastgo.replay import check_game

MAX_MAP_KEYS = 32
# How a game ended. "recorded": a game imported from a record (an SGF) whose result is taken as
# written (agreement, time, forfeit): its moves must replay legally, its final position need not
# be over, and its ownership is unknown (all 0; the trainer gives it no ownership weight).
ENDS = ("passes", "move_cap", "resign", "recorded")
_ID = re.compile(r"[0-9a-f]{32}")
_INT63 = (1 << 63) - 1
MAX_VISITS = float(1 << 24)     # one move's visit count (or improved-policy weight) at most
MAX_CONTAINERS = 64             # arrays and maps decoded per record (a record holds 4)
MAX_ARRAY_LEN = 4096            # elements of one msgpack array (versions)
MAX_STR_LEN = 1 << 12
MAX_SCORE = 2000.0              # |score| at most: points on a 25x25 board plus any komi
MAX_TIME = 1e11                 # seconds since the epoch, about the year 5138
MAX_SURPRISE = 100.0            # a position's policy surprise (nats) at most; the worker clips
RECORD_FIELDS = frozenset({"id", "worker", "seed", "size", "komi", "moves", "full", "root_value",
                           "policy_count", "policy_moves", "policy_visits", "winner", "score",
                           "end", "ownership", "versions", "t_start", "t_end", "resign", "players",
                           "surprise"})
RESIGN_FIELDS = {"disabled": bool, "would_resign": int, "would_resign_move": int}




class ShardError(ValueError):
    """A shard or record that cannot be used; the message names where and the first problem."""


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
    surprise: np.ndarray | None = None  # float32 [L]: KL(policy target || the network's prior)
                                 # at each full search, 0 elsewhere; None: not recorded (older
                                 # records, imported games)

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
        if self.surprise is not None:
            fields["surprise"] = _bytes(self.surprise, "<f4")
        return msgpack.packb(fields, use_bin_type=True)


def _bytes(array, dtype):
    return np.ascontiguousarray(array, dtype=dtype).tobytes()


# ----------------------------------------------------------------------------------------------
# Writing

class ContainerBudget:
    """Bounds what decoding one msgpack object allocates: per-container lengths through the
    unpacker's limits, and the number of arrays and maps through its hooks, which raise once
    `limit` containers were built. Memory per object is then O(limit * MAX_ARRAY_LEN) elements
    plus its bytes, whatever the nesting; call reset() before each object."""

    def __init__(self, limit: int):
        self.limit = int(limit)
        self.left = self.limit

    def reset(self):
        self.left = self.limit

    def _count(self, value):
        self.left -= 1
        if self.left < 0:
            raise ValueError(f"more than {self.limit} arrays and maps in one record")
        return value

    def limits(self, max_bin_len: int) -> dict:
        return {"max_str_len": MAX_STR_LEN, "max_bin_len": int(max_bin_len),
                "max_array_len": MAX_ARRAY_LEN, "max_map_len": MAX_MAP_KEYS, "max_ext_len": 0,
                "list_hook": self._count, "object_hook": self._count}


def unpack_record(data: bytes):
    """One msgpack record from an untrusted peer, decoded within the record bounds (see
    ContainerBudget). Raises ValueError (msgpack's errors included) when it is not one."""
    budget = ContainerBudget(MAX_CONTAINERS)
    try:
        return msgpack.unpackb(data, raw=False, strict_map_key=True, **budget.limits(len(data)))
    except Exception as err:               # msgpack raises several unrelated types
        raise ValueError(f"undecodable record: {type(err).__name__}: "
                         f"{escaped(err, 80, one_line=True)}") from None


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


def _time(record, key, where) -> float:
    value = float(_field(record, key, float, where))
    if not 0.0 <= value <= MAX_TIME:
        raise ShardError(f"{where}: {key} must be unix seconds in 0..{MAX_TIME:.0f}")
    return value


def _array(record, key, dtype, length, where):
    raw = _field(record, key, bytes, where)
    itemsize = np.dtype(dtype).itemsize
    if length is not None and len(raw) != length * itemsize:
        raise ShardError(f"{where}: {key} holds {len(raw)} bytes, expected {length * itemsize}")
    if len(raw) % itemsize:
        raise ShardError(f"{where}: {key} holds {len(raw)} bytes, not a multiple of {itemsize}")
    return np.frombuffer(raw, dtype=dtype).astype(np.dtype(dtype).newbyteorder("="))


def check_record(record, *, size: int, komi: float, where: str = "record",
                 check_rules: bool = True, allow_recorded: bool = True) -> GameRecord:
    """One decoded game record (a msgpack map) with every check the shard reader applies, for a
    board size and komi: the GameRecord, or ShardError naming the first problem.
    allow_recorded=False refuses end "recorded" (a result taken as written, which only an SGF
    import makes): a self-play game's result is always the board's."""
    if not allow_recorded and isinstance(record, dict) and record.get("end") == "recorded":
        raise ShardError(f"{where}: end 'recorded' is for imported games; a played game's "
                         f"result comes from its final position")
    return _check_record(record, {"size": size, "komi": komi}, where, check_rules)


def _check_record(record, header, where, check_rules) -> GameRecord:
    if not isinstance(record, dict):
        raise ShardError(f"{where}: not a map")
    unknown = set(record) - RECORD_FIELDS
    if unknown:
        raise ShardError(f"{where}: unknown field(s) {', '.join(sorted(map(str, unknown)))[:80]}")
    size, komi = header["size"], header["komi"]
    nn = size * size
    if _field(record, "size", int, where) != size or _field(record, "komi", float, where) != komi:
        raise ShardError(f"{where}: board or komi differ from the header's")
    game_id = _field(record, "id", str, where)
    if not _ID.fullmatch(game_id):
        raise ShardError(f"{where}: bad id {game_id[:40]!r}")
    moves = _array(record, "moves", "<i2", None, where)
    length = len(moves)
    if length == 0:                    # no position to learn from; writers never write one
        raise ShardError(f"{where}: a game of no moves")
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
    if not np.all(np.isfinite(policy_visits)) or np.any(policy_visits < 0) \
            or np.any(policy_visits > MAX_VISITS):
        raise ShardError(f"{where}: visit counts must be finite and in 0..{MAX_VISITS:.0f}")
    if not np.all(np.isfinite(root_value)) or np.any(np.abs(root_value) > 1.0):
        raise ShardError(f"{where}: root values must be in [-1, 1]")
    if np.any(full > 1) or np.any(np.abs(ownership) > 1):
        raise ShardError(f"{where}: full flags must be 0/1 and ownership -1/0/1")
    winner = _field(record, "winner", int, where)
    score = _field(record, "score", float, where)
    if not math.isfinite(score) or abs(score) > MAX_SCORE:
        raise ShardError(f"{where}: score must be finite and within +-{MAX_SCORE:.0f}")
    end = _field(record, "end", str, where)
    if winner not in (-1, 0, 1) or end not in ENDS:
        raise ShardError(f"{where}: winner {winner!r} or end {end[:20]!r} not allowed")
    # A game that ended on the board is won by the score's sign (resignations and SGF results
    # need not agree with the position's score)
    if end in ("passes", "move_cap") and ((score > 0) - (score < 0)) != winner:
        raise ShardError(f"{where}: score {score:g} and winner {winner} disagree")
    # A margin counts points of this board plus the komi: anything beyond is no game's score
    if end != "recorded" and abs(score) > nn + abs(komi) + 1e-3:
        raise ShardError(f"{where}: score {score:g} is outside the board's range "
                         f"(+-{nn + abs(komi):g} on {size}x{size}, komi {komi:g})")
    # How the game ended is read from its moves: the score and ownership targets are taken
    # from games that ended by two passes only (trainer.window.SCORED_ENDS)
    two_passes = length >= 2 and moves[-1] == nn and moves[-2] == nn
    if end == "passes" and not two_passes:
        raise ShardError(f"{where}: ends by passes but its last two moves are not passes")
    if end == "move_cap" and length != 2 * nn:
        raise ShardError(f"{where}: ends at the move cap after {length} moves "
                         f"(the cap is {2 * nn})")
    versions = _field(record, "versions", list, where)
    if len(versions) > length + 2:       # one per move at most (self-play), or [learner, opponent]
        raise ShardError(f"{where}: {len(versions)} versions for {length} moves")
    if not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= _INT63 for v in versions):
        raise ShardError(f"{where}: versions must be integers in 0..2**63-1")
    worker = _field(record, "worker", int, where)
    seed = _field(record, "seed", int, where)
    if not (0 <= worker <= _INT63 and seed in SEED):
        raise ShardError(f"{where}: worker or seed out of range")
    resign = _field(record, "resign", dict, where)
    if set(resign) - set(RESIGN_FIELDS) or not all(
            type(resign[k]) is RESIGN_FIELDS[k] for k in resign) \
            or not all(-1 <= resign[k] <= 2 * nn for k in resign if RESIGN_FIELDS[k] is int):
        raise ShardError(f"{where}: resign must map disabled (bool), would_resign and "
                         f"would_resign_move (integers in -1..{2 * nn})")
    surprise = None
    if "surprise" in record:
        surprise = _array(record, "surprise", "<f4", length, where)
        if not np.all(np.isfinite(surprise)) or np.any(surprise < 0) \
                or np.any(surprise > MAX_SURPRISE) or np.any(surprise[full == 0] != 0):
            raise ShardError(f"{where}: surprise must be finite, in 0..{MAX_SURPRISE:g} and 0 "
                             f"where the search was not full")
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
                      id=game_id, t_start=_time(record, "t_start", where),
                      t_end=_time(record, "t_end", where), resign=resign,
                      players=players, surprise=surprise)
