"""The replay window: the most recent self-play positions across shards, as flat numpy arrays
(no Python object per position), and uniform sampling of training batches with a random one of
the 8 symmetries. Positions are rebuilt by replaying moves in fastgo.replay.encode_samples.

The window is a list of blocks (one per shard, oldest first); the flat arrays are rebuilt
lazily after blocks are added or dropped.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fastgo.replay import encode_samples

# How a game ends when its final board is its area and its recorded score the points a Go
# player would count (rundata.records): two passes. A resignation or an imported result has
# no final area; a game stopped at the move cap has a board mid-scramble, not the game's area.
SCORED_ENDS = ("passes",)
# How a game ends when only the sign of its margin is known: a resignation. The winner would
# have won by at least half a point (area scoring, half-point komi), so the score term bounds
# the winner's predicted margin from below there (trainer.alphazero.score_terms), and the
# score head learns who is ahead from the three games in four that resign, not only from those
# that end by passes.
SIGNED_ENDS = ("resign",)


@dataclass
class Block:
    """One shard's games, flattened."""
    name: str
    moves: np.ndarray            # int16 [M]
    game_len: np.ndarray         # int64 [G]
    winner: np.ndarray           # int8 [G]
    score: np.ndarray            # float32 [G]: final score margin, Black's view (points)
    score_known: np.ndarray      # uint8 [G]: 1 where the game ended by two passes
                                 # (SCORED_ENDS), so `score` and `ownership` are its area;
                                 # 2 where only the winner is known (SIGNED_ENDS)
    ownership: np.ndarray        # int8 [G, N*N]
    policy_count: np.ndarray     # int64 [M]
    policy_moves: np.ndarray     # int16 [E]
    policy_visits: np.ndarray    # float32 [E]
    full: np.ndarray             # uint8 [M]
    root_value: np.ndarray       # float32 [M]: the search's root value, side to move's view
    surprise: np.ndarray         # float32 [M]: the search's policy surprise (rundata.records),
                                 # 0 where a game recorded none
    searched: np.ndarray         # uint8 [G]: 1 where root_value is a search's (self-play), 0
                                 # where the game was imported (its root values are 0)
    ids: tuple                   # game ids, for duplicate detection across shards

    @property
    def positions(self) -> int:
        return int(self.moves.shape[0])

    @property
    def games(self) -> int:
        return int(self.game_len.shape[0])


def block_from_shard(shard, name=None, skip_ids=()) -> Block:
    """A Block of a read (verified) shard; games whose id is in skip_ids are left out."""
    games = [g for g in shard.games if g.id not in skip_ids]
    return block_from_games(games, shard.header["size"], name or shard.path)


def block_from_games(games, size: int, name: str) -> Block:
    """A Block of verified GameRecords of one board size, in the given order."""
    nn = size * size

    def cat(parts, dtype):
        return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype)

    return Block(
        name=name,
        moves=cat([g.moves for g in games], np.int16),
        game_len=np.array([len(g.moves) for g in games], dtype=np.int64),
        winner=np.array([g.winner for g in games], dtype=np.int8),
        score=np.array([g.score for g in games], dtype=np.float32),
        score_known=np.array([score_kind(g.end, g.winner) for g in games], dtype=np.uint8),
        ownership=(np.stack([g.ownership for g in games]).astype(np.int8) if games
                   else np.zeros((0, nn), np.int8)),
        policy_count=cat([g.policy_count for g in games], np.int64),
        policy_moves=cat([g.policy_moves for g in games], np.int16),
        policy_visits=cat([g.policy_visits for g in games], np.float32),
        full=cat([g.full for g in games], np.uint8),
        root_value=cat([g.root_value for g in games], np.float32),
        surprise=cat([g.surprise if g.surprise is not None else np.zeros(len(g.moves), np.float32)
                      for g in games], np.float32),
        searched=np.array([len(g.versions) > 0 for g in games], dtype=np.uint8),
        ids=tuple(g.id for g in games))


def score_kind(end: str, winner: int) -> int:
    """What a game's end says of its margin: 1 its value (SCORED_ENDS), 2 only its sign (a
    SIGNED_ENDS game with a winner), 0 nothing."""
    if end in SCORED_ENDS:
        return 1
    return 2 if end in SIGNED_ENDS and winner != 0 else 0


def sampling_weights(game_start, full, surprise, share: float) -> np.ndarray:
    """float64 [M]: each position's weight in the window's draw by policy surprise (KataGo's
    policy surprise weighting). A position without a full search weighs 1; in each game the F
    full-search positions keep F in all, of which `share` is given out in proportion to their
    surprise and the rest evenly: 1 - share + share * F * s_i / S (S: the game's surprise; all
    1 where S is 0). So every game keeps its weight and a game's surprising positions are drawn
    more often than its ordinary ones. game_start: int64 [G + 1]; full: uint8 [M]; surprise:
    float32 [M] (0 where not full)."""
    positions = len(full)
    weights = np.ones(positions, np.float64)
    if positions == 0 or share <= 0:
        return weights
    games = len(game_start) - 1
    starts = game_start[:-1]
    lengths = np.diff(game_start)
    nonempty = lengths > 0
    is_full = full.astype(bool)
    s = np.where(is_full, surprise.astype(np.float64), 0.0)
    game_of = np.repeat(np.arange(games), lengths)
    per_game_s = np.zeros(games, np.float64)
    per_game_f = np.zeros(games, np.float64)
    per_game_s[nonempty] = np.add.reduceat(s, starts[nonempty])
    per_game_f[nonempty] = np.add.reduceat(is_full.astype(np.float64), starts[nonempty])
    total_s = per_game_s[game_of]
    count_f = per_game_f[game_of]
    spread = np.where(total_s > 0, share * count_f * s / np.where(total_s > 0, total_s, 1.0), share)
    weights[is_full] = (1.0 - share + spread)[is_full]
    return weights


def power_window(total: int, c: int, alpha: float, beta: float) -> int:
    """KataGo's growing window: all positions up to c, then c * (1 + beta * ((total / c) **
    alpha - 1) / alpha)."""
    if total <= c:
        return total
    if alpha == 0:
        return int(c * (1 + beta * np.log(total / c)))
    return int(c * (1 + beta * ((total / c) ** alpha - 1) / alpha))


def batch_buffers(size: int, batch: int, planes: int) -> dict:
    """The arrays fastgo.replay.encode_samples fills for `batch` positions on a size x size
    board: planes uint8 [B, planes, N, N], policy float32 [B, N*N+1], policy_weight float32 [B],
    value float32 [B], ownership float32 [B, N*N]; and the auxiliary targets ReplayWindow.encode
    fills: score float32 [B] (final margin in points, side to move's view), score_weight float32
    [B] (1 where the game ended by two passes: the score and ownership targets' weight, else 0),
    score_sign float32 [B] (+1 / -1: the winner from the side to move's view where only the
    margin's sign is known, a resignation; else 0), reply int64 [B] (the opponent's next move,
    pass = N*N), reply_weight float32 [B] (0 at a game's last position)."""
    nn = size * size
    return dict(planes=np.empty((batch, planes, size, size), np.uint8),
                policy=np.empty((batch, nn + 1), np.float32),
                policy_weight=np.empty(batch, np.float32),
                value=np.empty(batch, np.float32),
                ownership=np.empty((batch, nn), np.float32),
                score=np.empty(batch, np.float32),
                score_weight=np.empty(batch, np.float32),
                score_sign=np.empty(batch, np.float32),
                reply=np.empty(batch, np.int64),
                reply_weight=np.empty(batch, np.float32))


class ReplayWindow:
    def __init__(self, size: int, komi: float, encoding: str, *, window="power",
                 window_size=100_000, alpha=0.75, beta=0.4, q_weight=0.0, window_max=0,
                 surprise_weight=0.0):
        """`q_weight`: the value target's share of the search's root value (trainer.value_q_weight):
        (1 - q_weight) x the outcome + q_weight x the root value, in self-play games.
        `window_max`: the target size at most, however far the power window has grown
        (trainer.window_max: the trainer's memory bounded in a run of any length); 0: none.
        `surprise_weight`: the share of each game's full-search positions' sampling weight
        given out by policy surprise (trainer.surprise_weight, see sampling_weights); 0:
        positions drawn uniformly."""
        if not 0.0 <= q_weight <= 1.0:
            raise ValueError(f"q_weight must be in 0..1, got {q_weight}")
        if not 0.0 <= surprise_weight <= 1.0:
            raise ValueError(f"surprise_weight must be in 0..1, got {surprise_weight}")
        self.q_weight = float(q_weight)
        self.surprise_weight = float(surprise_weight)
        self.size = size
        self.komi = komi
        self.encoding = encoding
        self.nn = size * size
        self.kind = window
        self.window_size = window_size
        self.alpha = alpha
        self.beta = beta
        self.window_max = int(window_max)
        self.blocks: list[Block] = []
        self.ids: set = set()
        self.total_positions = 0      # every position ever added (drives the power window)
        self.total_games = 0
        self._flat = None

    @property
    def positions(self) -> int:
        return sum(b.positions for b in self.blocks)

    @property
    def games(self) -> int:
        return sum(b.games for b in self.blocks)

    def target_size(self) -> int:
        if self.kind == "fixed":
            target = self.window_size
        else:
            target = power_window(self.total_positions, self.window_size, self.alpha, self.beta)
        return min(target, self.window_max) if self.window_max > 0 else target

    def add(self, block: Block, *, count=True):
        """Adds a block (newest); drops the oldest blocks while the rest still fill the window.
        count=False re-adds data already counted (a resumed trainer)."""
        self.blocks.append(block)
        self.ids.update(block.ids)
        if count:
            self.total_positions += block.positions
            self.total_games += block.games
        target = self.target_size()
        while len(self.blocks) > 1 and self.positions - self.blocks[0].positions >= target:
            dropped = self.blocks.pop(0)
            self.ids.difference_update(dropped.ids)
        self._flat = None

    def _flatten(self):
        blocks = self.blocks

        def joined(field, dtype, row=()):
            """The blocks' `field` end to end, contiguous, as dtype (rows of shape `row`)."""
            if not blocks:
                return np.zeros((0, *row), dtype)
            return np.ascontiguousarray(np.concatenate([getattr(b, field) for b in blocks]),
                                        dtype=dtype)

        game_len = joined("game_len", np.int64)
        game_start = np.zeros(len(game_len) + 1, dtype=np.int64)
        np.cumsum(game_len, out=game_start[1:])
        policy_count = joined("policy_count", np.int64)
        policy_start = np.zeros(len(policy_count) + 1, dtype=np.int64)
        np.cumsum(policy_count, out=policy_start[1:])
        self._flat = dict(
            moves=joined("moves", np.int16),
            game_start=game_start,
            winner=joined("winner", np.int8),
            score=joined("score", np.float32),
            score_known=joined("score_known", np.uint8),
            ownership=joined("ownership", np.int8, (self.nn,)),
            policy_start=policy_start,
            policy_moves=joined("policy_moves", np.int16),
            policy_visits=joined("policy_visits", np.float32),
            full=joined("full", np.uint8),
            root_value=joined("root_value", np.float32),
            searched=joined("searched", np.uint8))
        if self.surprise_weight > 0:
            weights = sampling_weights(game_start, self._flat["full"],
                                       joined("surprise", np.float32), self.surprise_weight)
            self._flat["cumulative_weight"] = np.cumsum(weights, dtype=np.float64)
        return self._flat

    def batch_buffers(self, batch: int, planes: int) -> dict:
        return batch_buffers(self.size, batch, planes)

    def sample(self, rng: np.random.Generator, out: dict) -> dict:
        """Fills `out` (from batch_buffers) with positions drawn uniformly from the window, each
        under a uniformly drawn symmetry; returns out."""
        flat = self._flat or self._flatten()
        total = flat["moves"].shape[0]
        if total == 0:
            raise ValueError("the replay window is empty")
        batch = out["planes"].shape[0]
        if "cumulative_weight" in flat:     # by policy surprise (surprise_weight)
            cumulative = flat["cumulative_weight"]
            position = np.searchsorted(cumulative, rng.random(batch) * cumulative[-1],
                                       side="right")
            position = np.minimum(position, total - 1)
        else:
            position = rng.integers(0, total, size=batch)
        game = np.searchsorted(flat["game_start"], position, side="right") - 1
        move = position - flat["game_start"][game]
        symmetry = rng.integers(0, 8, size=batch).astype(np.uint8)
        return self.encode(game, move, symmetry, out)

    def flat(self) -> dict:
        """The window's games as flat arrays (see encode_samples): moves, game_start, winner,
        score, score_known, ownership, policy_start, policy_moves, policy_visits, full,
        root_value, searched."""
        return self._flat or self._flatten()

    def encode(self, game, move, symmetry, out: dict) -> dict:
        """Fills the first len(game) rows of `out` with position move[i] of window game game[i]
        under symmetry[i] (0 = identity); returns out. The auxiliary targets (score,
        score_weight, score_sign, reply, reply_weight) are filled where `out` has them."""
        flat = self._flat or self._flatten()
        game = np.ascontiguousarray(game, dtype=np.int32)
        with_score = "score" in out and "score_weight" in out
        with_reply = "reply" in out and "reply_weight" in out
        encode_samples(self.size, self.komi, self.encoding, flat["moves"], flat["game_start"],
                       flat["winner"], flat["ownership"], flat["policy_start"],
                       flat["policy_moves"], flat["policy_visits"], flat["full"],
                       game, np.ascontiguousarray(move, dtype=np.int32),
                       np.ascontiguousarray(symmetry, dtype=np.uint8),
                       out["planes"], out["policy"], out["policy_weight"], out["value"],
                       out["ownership"],
                       score=flat["score"] if with_score else None,
                       out_score=out["score"] if with_score else None,
                       out_reply=out["reply"] if with_reply else None,
                       out_reply_weight=out["reply_weight"] if with_reply else None)
        rows = len(game)
        if with_score:
            kind = flat["score_known"][game]
            out["score_weight"][:rows] = kind == 1
            if "score_sign" in out:
                # out["value"] is still the outcome z (+1 / -1 / 0, the mover's view) here
                out["score_sign"][:rows] = np.where(kind == 2, np.sign(out["value"][:rows]), 0.0)
        if self.q_weight > 0.0:
            position = flat["game_start"][game] + np.asarray(move, dtype=np.int64)
            mixed = ((1.0 - self.q_weight) * out["value"][:rows]
                     + self.q_weight * flat["root_value"][position])
            out["value"][:rows] = np.where(flat["searched"][game] != 0, mixed, out["value"][:rows])
        return out
