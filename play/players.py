"""The player contract, and the baselines.

Two kinds of side meet in a match or behind the GTP engine, each a base class that states its
contract (its defaults are what a side without the capability does):
- Player: one game at a time. `genmove(game) -> move` (move index, pass = N * N,
  fastgo.game.RESIGN to resign), `reset()` when a new game starts. `accepts_limits`: genmove
  also takes `seconds=` (a clock) and `no_pass=` (GTP's cleanup). AnalysingPlayer adds the
  analysis capability the GTP engine's lz-analyze / kata-analyze use.
- MatchSide: many games at once (play.match.play_match): `prepare(games, size, komi)` before
  them, `moves(indices, games) -> [move | RESIGN | match.Forfeit]` for the games to move.
Both have `name`, `board_size` (the one size a network plays, None: any), `visits` (root visits
a move, None: no visit budget) and `close()` (ends what the side started: a GTP engine).

The baselines: RandomPlayer ('random': uniform over legal moves that do not fill the player's
own eye, passing when none is left) and UctPlayer ('mcts:N': pure MCTS with N random playouts
per move); play.specs builds them from their specs.
"""
import operator
import random as _py_random
import secrets

from fastgo.board import Random
from fastgo.player_spec import MAX_PLAYOUTS
from fastgo.uct import uct_search


class Player:
    """One game at a time (see the module). Subclasses set `name` and implement `genmove`."""
    name = "player"
    board_size = None
    visits = None
    accepts_limits = False

    def genmove(self, game):
        raise NotImplementedError

    def reset(self):
        """A new game starts; players without per-game state ignore it."""

    def close(self):
        """Nothing to end by default."""


class AnalysingPlayer(Player):
    """A Player that can report its search: `search` (the fastgo.mcts.BatchedSearch of its
    last genmove, None before), `analysis(max_pv)` (its root moves), `ponder(game, visits,
    max_visits)` (grows the search of a position), `analysis_heads` (() -> a HeadsCache of the
    network's every head, or None) and `model_komi` (the komi its score head learnt at, or
    None)."""
    search = None
    analysis_heads = None
    model_komi = None

    def analysis(self, max_pv=10):
        raise NotImplementedError

    def ponder(self, game, visits, max_visits):
        raise NotImplementedError


class MatchSide:
    """Many games at once (see the module). Subclasses set `name` and implement `moves`.

    play_match calls use_clock() before prepare(): with its game clock (a
    play.equal_time.GameClock, kept as `game_clock`) or None. A side that plays by it reads its
    time left there and, after each moves() call, sets `last_seconds` (per game of the call: the
    seconds to charge to that game's clock; None: the call's wall time, shared evenly) and
    `last_visits` (per game: the root visits of that move; None: `visits` each)."""
    name = "side"
    board_size = None
    visits = None
    game_clock = None
    last_seconds = None
    last_visits = None

    def use_clock(self, game_clock):
        """The match's game clock, or None (no clock): kept as `game_clock`."""
        self.game_clock = game_clock
        self.last_seconds = self.last_visits = None

    def prepare(self, games, size, komi):
        """Called by play_match before its games; nothing to do by default."""

    def moves(self, indices, games):
        raise NotImplementedError

    def close(self):
        """Nothing to end by default."""


class RandomPlayer(Player):
    """Board.random_move with a seeded fastgo.board.Random: reproducible for a given seed and
    sequence of positions. Under positional superko a move the game refuses is drawn again from
    the game's own legal moves."""
    name = "random"

    def __init__(self, seed=None):
        self.seed = secrets.randbits(63) if seed is None else check_seed(seed)
        self._rng = Random(self.seed)
        self._fallback = _py_random.Random(self.seed)

    def genmove(self, game):
        board = game.board
        move = int(board.random_move(self._rng))
        if game.is_legal(move):
            return move
        # Refused by superko only (the board already applied simple ko): choose among the
        # game's legal points that are not our own eyes; pass when none is left.
        pass_move = board.pass_move
        mask = game.legal_moves()
        color = board.to_move
        candidates = [m for m in range(pass_move) if mask[m] and not board.is_eye(m, color)]
        return self._fallback.choice(candidates) if candidates else pass_move


def check_seed(seed):
    """A seed as an int in 0..2**64-1 (what the kernels' generator takes); ValueError else."""
    try:
        value = None if isinstance(seed, bool) else operator.index(seed)
    except TypeError:
        value = None
    if value is None or not 0 <= value < 1 << 64:
        raise ValueError(f"seed must be an integer in 0..2**64-1, got {str(seed)[:40]!r}")
    return value


class UctPlayer(Player):
    """The pure-MCTS baseline 'mcts:N': classic UCT with N random playouts per move, in C
    (fastgo.uct). Deterministic under a seed: one seeded fastgo.board.Random drives every move.
    UctPlayer(playouts, seed=None): genmove(game) -> move index (pass = N * N)."""

    def __init__(self, playouts, seed=None):
        playouts = operator.index(playouts)
        if not 1 <= playouts <= MAX_PLAYOUTS:
            raise ValueError(f"playouts must be in 1..{MAX_PLAYOUTS}, got {playouts}")
        self.playouts = playouts
        self.seed = secrets.randbits(63) if seed is None else check_seed(seed)
        self.name = f"mcts:{playouts}"
        self._rng = Random(self.seed)
        self.last_visits = None     # root-child visits of the last genmove, int32 [N*N + 1]

    def genmove(self, game):
        """The most visited move after `playouts` UCT iterations from the game's position (the
        Game's own legal moves at the root, positional superko included). Never resigns."""
        board = game.board
        if game.is_over():
            return board.pass_move
        move, visits, _ = uct_search(board, self.playouts, self._rng, root_mask=game.legal_moves())
        self.last_visits = visits
        return move

    def reset(self):
        """A new game starts; the random stream simply continues."""
