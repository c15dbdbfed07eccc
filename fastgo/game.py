"""A whole game on top of fastgo.board.Board: positional superko, resignation, undo, result.

Positions are kept as Board copies (one memcpy each), so undo is a pop; their hashes live in a
fastgo.history.PositionHistory, the one superko store the search, policy play and replay share.
"""
from fastgo.board import BLACK, WHITE, Board, IllegalMoveError, describe_move
from fastgo.history import PositionHistory

RESIGN = -2          # a move value meaning "the side to move resigns" (Game.play accepts it)

__all__ = ["Game", "RESIGN", "IllegalMoveError", "BLACK", "WHITE"]


def _opponent(color):
    return WHITE if color == BLACK else BLACK


class Game:
    """Board + history. `superko=True`: a move may not recreate any earlier position (stones
    only, whoever is to move: positional superko); passes are always allowed."""

    def __init__(self, size=9, komi=7.5, superko=True):
        self.board = Board(size, komi)
        self.superko = bool(superko)
        self.moves = []                 # [(color, move)], pass = N * N
        # Position hash after 0, 1, ... moves: at most the move cap + 1 positions.
        self.history = PositionHistory(self.board.max_moves + 1)
        self.history.push(self.board.position_hash)
        self._previous = []             # Board before each move in self.moves
        self.resigned = None            # the colour that resigned, or None

    # --- state ---------------------------------------------------------------------------

    @property
    def hash_history(self):
        """Position hashes after 0, 1, ... moves (a list; the current position last)."""
        return self.history.hashes()

    @property
    def size(self):
        return self.board.size

    @property
    def komi(self):
        return self.board.komi

    @komi.setter
    def komi(self, value):
        self.board.komi = value

    @property
    def pass_move(self):
        return self.board.pass_move

    @property
    def to_move(self):
        return self.board.to_move

    @to_move.setter
    def to_move(self, color):
        self.board.to_move = color

    def is_over(self):
        return self.resigned is not None or self.board.is_over()

    @property
    def winner(self):
        """BLACK, WHITE, or None (game not over, or a draw)."""
        if self.resigned is not None:
            return _opponent(self.resigned)
        if not self.board.is_over():
            return None
        score = self.board.score()
        if score > 0:
            return BLACK
        if score < 0:
            return WHITE
        return None

    def score(self):
        """Tromp-Taylor area score of the current position: black - white - komi."""
        return self.board.score()

    def unfilled_points(self):
        """int64 array of the legal board points (superko included) that do not fill the side
        to move's own eye (the playout eye test): where a player may go instead of passing."""
        return self.board.points_except_eyes(self.legal_moves(), self.board.to_move)

    def pass_wins(self):
        """True when the opponent has just passed and the side to move wins the position as it
        stands (Tromp-Taylor): its pass ends the game, won."""
        if self.is_over() or self.board.passes != 1:
            return False
        score = self.board.score()
        return score > 0 if self.board.to_move == BLACK else score < 0

    def result_string(self):
        """The SGF RE value: 'B+3.5', 'W+R', '0' for a draw, 'Void' while unfinished."""
        if self.resigned is not None:
            return ("W" if self.resigned == BLACK else "B") + "+R"
        if not self.board.is_over():
            return "Void"
        score = self.board.score()
        if score == 0:
            return "0"
        return ("B" if score > 0 else "W") + f"+{abs(score):g}"

    # --- moves ---------------------------------------------------------------------------

    def _check(self, move):
        # The reason `move` is illegal now, or None.
        if self.is_over():
            return "game over"
        reason = self.board.illegal_reason(move)
        if reason is not None:
            return reason
        if self.superko and move != self.board.pass_move:
            if self.board.hash_after(move) in self.history:
                return "superko"
        return None

    def is_legal(self, move):
        try:
            return self._check(move) is None
        except TypeError:
            return False

    def legal_moves(self):
        """uint8 mask of N * N + 1 entries: legal for the side to move, superko included (all
        zero once the game is over)."""
        mask = self.board.legal_moves()
        if self.is_over():
            mask[:] = 0
            return mask
        if self.superko and len(self.history) > 1:
            self.history.strike_repeats(self.board, mask)
        return mask

    def play(self, move):
        """Plays `move` (or RESIGN) for the side to move; IllegalMoveError (nothing changed)
        with reason 'off board', 'occupied', 'suicide', 'ko', 'superko' or 'game over'."""
        if move == RESIGN:
            if self.is_over():
                raise IllegalMoveError("illegal move RESIGN: game over", move, "game over")
            self.resign(self.board.to_move)
            return
        reason = self._check(move)
        if reason is not None:
            raise IllegalMoveError(f"illegal {describe_move(move, self.size)}: {reason}", move,
                                   reason)
        color = self.board.to_move
        after = self.board.copy()
        after.play(move)
        self._previous.append(self.board)
        self.board = after
        self.moves.append((color, int(move)))
        self.history.push(after.position_hash)

    def resign(self, color):
        """`color` resigns; the game is over and the other colour wins."""
        if color not in (BLACK, WHITE):
            raise ValueError(f"resign: color must be BLACK or WHITE, got {color!r}")
        self.resigned = color

    def undo(self):
        """Takes back a resignation, else the last move; False if there is nothing to undo."""
        if self.resigned is not None:
            self.resigned = None
            return True
        if not self.moves:
            return False
        self.board = self._previous.pop()
        self.moves.pop()
        self.history.pop()
        return True

    def setup(self, black=(), white=()):
        """Places stones before the first move (SGF AB/AW, handicap); ValueError otherwise."""
        if self.moves:
            raise ValueError("setup is only allowed before the first move")
        self.board.setup(black, white)
        self.history.clear()
        self.history.push(self.board.position_hash)

    def copy(self):
        other = Game.__new__(Game)
        other.board = self.board.copy()
        other.superko = self.superko
        other.moves = list(self.moves)
        other.history = self.history.copy()
        other._previous = list(self._previous)      # boards are never mutated once stored
        other.resigned = self.resigned
        return other

    @classmethod
    def replay(cls, moves, size=9, komi=7.5, superko=True, black=(), white=()):
        """A game built by setting up stones then playing `moves` (ints, or (color, move) pairs
        whose colour is honoured, as in SGF files that play the same colour twice)."""
        game = cls(size, komi, superko)
        if black or white:
            game.setup(black, white)
        for item in moves:
            if isinstance(item, tuple):
                color, move = item
                if color != game.to_move:
                    game.to_move = color
            else:
                move = item
            game.play(move)
        return game

    def __repr__(self):
        return (f"<Game {self.size}x{self.size} komi {self.komi:g}, {len(self.moves)} moves, "
                f"{self.result_string()}>")
