"""The pure-MCTS baseline player 'mcts:N': classic UCT with N random playouts per move, in C
(fastgo.uct, where the algorithm is documented). No network. Used by the arena, the GTP engine
(`fastgo gtp --player mcts:N`) and as the fixed reference of learning curves.

Deterministic under a seed: one seeded fastgo.board.Random drives every move, so the same seed
and the same sequence of positions give the same moves.
"""
import operator
import secrets

from fastgo.board import Random
from fastgo.uct import uct_search


class UctPlayer:
    """UctPlayer(playouts, seed=None): genmove(game) -> move index (pass = N * N)."""

    def __init__(self, playouts, seed=None):
        from selfplay_workers.players import MAX_PLAYOUTS, check_seed

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
