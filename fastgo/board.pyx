# The Python Board and Random: thin wrappers around a fastgo.rules BoardState and a fastgo.rng
# generator, with the rules' refusals as IllegalMoveError. Every rule is fastgo.rules' and every
# score fastgo.scoring's; nothing here runs inside a search or a playout.
import operator
import os

import numpy as np

from fastgo.ascii_board import parse_ascii

cimport numpy as cnp
from libc.stdint cimport uint8_t, uint64_t
from libc.string cimport memcpy

from fastgo.constants cimport check_board_size
from fastgo.rng cimport rng_seed, rng_next, rng_below, rng_uniform
from fastgo.rules cimport (
    BoardState, EMPTY, BLACK, WHITE, NO_POINT, RECENT_MOVES, LEGAL, OFF_BOARD, OCCUPIED, KO, SUICIDE,
    board_init, board_copy, board_is_legal, board_play, board_play_copy, board_legal_moves,
    board_is_eye, board_random_move, board_random_move_uniform, board_is_over, board_color_at,
    board_libs_at, board_playout, board_place, board_min_libs, board_position_hash,
    board_set_to_move, board_illegal_reason)
from fastgo.scoring cimport board_score, board_settled

cnp.import_array()

# The C enum names are not Python names; export their values under the same names.
globals().update(EMPTY=<int>EMPTY, BLACK=<int>BLACK, WHITE=<int>WHITE, NO_POINT=<int>NO_POINT)

_COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"   # GTP columns: no I
# board_illegal_reason's answers as Board.illegal_reason words them.
_REASONS = {LEGAL: None, OFF_BOARD: "off board", OCCUPIED: "occupied", KO: "ko", SUICIDE: "suicide"}


def _board_from_bytes(data):
    cdef const unsigned char[::1] view = data
    cdef Board board = Board.__new__(Board)
    if view.shape[0] != sizeof(BoardState):
        raise ValueError("pickled Board from a different build (struct size differs)")
    memcpy(&board.state, &view[0], sizeof(BoardState))
    return board


class IllegalMoveError(ValueError):
    """A move refused by the rules; the message names the move and the reason. The board (or
    game) that refused it is unchanged. `.move` and `.reason` carry the same for code."""

    def __init__(self, message, move=None, reason=None):
        super().__init__(message)
        self.move = move
        self.reason = reason


def describe_move(move, int size):
    """"move 40 (E5)": the index plus its GTP name where it is on the board, for messages."""
    try:
        m = operator.index(move)
    except TypeError:
        return f"move {move!r}"
    if 0 <= m < size * size:
        return f"move {m} ({_COLUMNS[m % size]}{size - m // size})"
    if m == size * size:
        return f"move {m} (pass)"
    return f"move {m}"


cdef class Random:
    """A seeded xoshiro256** generator for the kernels (Random(seed); seed None: from the OS)."""

    def __init__(self, seed=None):
        self.seed(seed)

    def seed(self, seed=None):
        if seed is None:
            seed = int.from_bytes(os.urandom(8), "little")
        rng_seed(&self.rng, <uint64_t>(operator.index(seed) & 0xFFFFFFFFFFFFFFFF))

    def integers(self, low, high=None):
        """Uniform int in [0, low) or, with two arguments, in [low, high)."""
        if high is None:
            low, high = 0, low
        cdef long long span = operator.index(high) - operator.index(low)
        if span <= 0:
            raise ValueError(f"empty range [{low}, {high})")
        if span > 0xFFFFFFFF:
            return low + int(rng_next(&self.rng) % <uint64_t>span)
        return low + int(rng_below(&self.rng, <unsigned int>span))

    def random(self):
        """Uniform float in [0, 1)."""
        return rng_uniform(&self.rng)

    def next_u64(self):
        return rng_next(&self.rng)


cdef class Board:
    """A Go position. Moves are ints: row * N + col, row 0 at the top; pass is N * N.

    Board(size=9, komi=7.5): empty, Black to move. Rules: captures, no suicide, simple ko
    (positional superko is fastgo.game.Game's), Tromp-Taylor area scoring, end on two passes
    or 2 * N * N moves.
    """

    def __init__(self, int size=9, float komi=7.5):
        check_board_size(size)
        board_init(&self.state, size, komi)

    # --- properties ----------------------------------------------------------------------

    @property
    def size(self):
        return self.state.size

    @property
    def komi(self):
        return self.state.komi

    @komi.setter
    def komi(self, float value):
        self.state.komi = value

    @property
    def to_move(self):
        """BLACK (1) or WHITE (2). Setting it (handicap, GTP play out of turn) clears the ko."""
        return self.state.to_move

    @to_move.setter
    def to_move(self, value):
        if value not in (BLACK, WHITE):
            raise ValueError(f"to_move must be BLACK (1) or WHITE (2), got {value!r}")
        board_set_to_move(&self.state, value)

    @property
    def num_moves(self):
        return self.state.num_moves

    @property
    def max_moves(self):
        return self.state.max_moves

    @property
    def passes(self):
        return self.state.passes

    @property
    def hash(self):
        """Zobrist hash of the stones and the side to move (unsigned 64-bit)."""
        return self.state.hash

    @property
    def position_hash(self):
        """Zobrist hash of the stones alone (positional superko)."""
        return board_position_hash(&self.state)

    @property
    def ko_move(self):
        """The point the side to move may not play by simple ko, or NO_POINT (-1)."""
        return self.state.ko_move

    @property
    def last_move(self):
        """The last move played (pass = N * N), or NO_POINT (-1) before any move."""
        return self.state.last_move

    @property
    def recent_moves(self):
        """The last RECENT_MOVES (5) moves, latest first (pass = N * N); NO_POINT (-1) where
        fewer moves were played."""
        return tuple(int(self.state.recent_moves[k]) for k in range(RECENT_MOVES))

    @property
    def captures(self):
        """(stones captured by Black, stones captured by White)."""
        return (self.state.captures[BLACK], self.state.captures[WHITE])

    @property
    def pass_move(self):
        return self.state.size * self.state.size

    @property
    def track_history(self):
        """Whether previous positions are kept for the AlphaZero planes (on by default)."""
        return bool(self.state.track_history)

    @track_history.setter
    def track_history(self, value):
        self.state.track_history = 1 if value else 0
        if not value:
            self.state.hist_len = 0

    # --- rules ---------------------------------------------------------------------------

    def illegal_reason(self, move):
        """None if `move` is legal for the side to move, else 'off board', 'occupied', 'ko' or
        'suicide'."""
        try:
            m = operator.index(move)
        except TypeError:
            return "off board"
        if m < 0 or m > self.state.size * self.state.size:
            return "off board"
        return _REASONS[board_illegal_reason(&self.state, m)]

    def play(self, move):
        """Plays `move` for the side to move; IllegalMoveError (board unchanged) if illegal."""
        reason = self.illegal_reason(move)
        if reason is not None:
            raise IllegalMoveError(f"illegal {describe_move(move, self.state.size)}: {reason}",
                                   move, reason)
        board_play(&self.state, operator.index(move))

    def is_legal(self, move):
        try:
            m = operator.index(move)
        except TypeError:
            return False
        if m < 0 or m > self.state.size * self.state.size:
            return False
        return bool(board_is_legal(&self.state, m))

    def legal_moves(self):
        """uint8 mask of length N * N + 1, 1 where legal for the side to move (pass always)."""
        cdef cnp.ndarray[cnp.uint8_t, ndim=1] mask = np.zeros(
            self.state.size * self.state.size + 1, dtype=np.uint8)
        board_legal_moves(&self.state, <uint8_t*>mask.data)
        return mask

    def is_eye(self, move, color):
        """The playout eye test for `color` at `move`."""
        try:
            m = operator.index(move)
        except TypeError:
            return False
        if m < 0 or m >= self.state.size * self.state.size or color not in (BLACK, WHITE):
            return False
        return bool(board_is_eye(&self.state, m, color))

    def random_move(self, Random rng not None):
        """A uniformly random legal move that does not fill an own eye; the pass if none."""
        return board_random_move_uniform(&self.state, &rng.rng)

    def random_move_fast(self, Random rng not None):
        """The playout's choice: near-uniform (random start, first acceptable point after it)."""
        return board_random_move(&self.state, &rng.rng)

    def playout(self, Random rng not None):
        """Plays random non-eye-filling moves to the end of the game (history tracking is turned
        off); returns the number of moves played."""
        cdef int n
        with nogil:
            n = board_playout(&self.state, &rng.rng)
        return n

    def copy(self):
        cdef Board other = Board.__new__(Board)
        board_copy(&other.state, &self.state)
        return other

    def __reduce__(self):
        # Pickling: the whole struct as bytes (same build, same layout; for process pools).
        return (_board_from_bytes, (bytes((<char*>&self.state)[:sizeof(BoardState)]),))

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    def hash_after(self, move):
        """Positional hash after playing `move`, or None if it is illegal (board unchanged)."""
        cdef BoardState tmp
        try:
            m = operator.index(move)
        except TypeError:
            return None
        if m < 0 or m > self.state.size * self.state.size:
            return None
        if not board_play_copy(&self.state, m, &tmp):
            return None
        return board_position_hash(&tmp)

    def points_except_eyes(self, const cnp.uint8_t[::1] mask not None, int color):
        """int64 array of the board points m with mask[m] set that are not `color`'s own eye
        (the playout eye test), in increasing order."""
        cdef int m, k = 0, nn = self.state.size * self.state.size
        if mask.shape[0] < nn:
            raise ValueError(f"mask has {mask.shape[0]} entries, expected at least {nn}")
        if color != BLACK and color != WHITE:
            raise ValueError(f"color must be BLACK or WHITE, got {color}")
        out = np.empty(nn, dtype=np.int64)
        cdef cnp.int64_t[::1] o = out
        for m in range(nn):
            if mask[m] and not board_is_eye(&self.state, m, color):
                o[k] = m
                k += 1
        return out[:k]

    def score(self):
        """Tromp-Taylor area score from Black's view: black area - white area - komi."""
        return board_score(&self.state)

    def is_over(self):
        return bool(board_is_over(&self.state))

    def settled(self):
        """True when every empty region borders one colour only (no dame, no region reaching
        both colours or none): each point's Tromp-Taylor owner is decided. The empty board is
        not settled."""
        return bool(board_settled(&self.state))

    # --- views ---------------------------------------------------------------------------

    def stones(self):
        """int8 (N, N): EMPTY / BLACK / WHITE, row 0 at the top."""
        cdef int n = self.state.size, r, c
        cdef cnp.ndarray[cnp.int8_t, ndim=2] out = np.zeros((n, n), dtype=np.int8)
        for r in range(n):
            for c in range(n):
                out[r, c] = board_color_at(&self.state, r * n + c)
        return out

    def liberties(self):
        """int16 (N, N): liberties of the group at each stone, 0 on empty points."""
        cdef int n = self.state.size, r, c
        cdef cnp.ndarray[cnp.int16_t, ndim=2] out = np.zeros((n, n), dtype=np.int16)
        for r in range(n):
            for c in range(n):
                out[r, c] = board_libs_at(&self.state, r * n + c)
        return out

    def features(self, encoding="alphazero"):
        """uint8 (planes, N, N) network input; see fastgo.features."""
        from fastgo import features
        return features.encode(self, encoding)

    # --- setup and text ------------------------------------------------------------------

    def setup(self, black=(), white=()):
        """Places stones without playing moves (SGF AB/AW, handicap). ValueError, board
        unchanged, if a point is off board or occupied or a group is left without liberty."""
        cdef BoardState backup
        board_copy(&backup, &self.state)
        try:
            for color, moves in ((BLACK, () if black is None else black),
                                 (WHITE, () if white is None else white)):
                for move in moves:
                    try:
                        m = operator.index(move)
                    except TypeError:
                        raise ValueError(f"setup: {move!r} is not a move index") from None
                    if m < 0 or m >= self.state.size * self.state.size:
                        raise ValueError(f"setup: {describe_move(m, self.state.size)} is off board")
                    if not board_place(&self.state, m, color):
                        raise ValueError(f"setup: {describe_move(m, self.state.size)} is occupied")
            if board_min_libs(&self.state) <= 0:
                raise ValueError("setup: a group would have no liberty")
        except BaseException:
            board_copy(&self.state, &backup)
            raise

    @staticmethod
    def from_ascii(text, komi=7.5, to_move=BLACK):
        """A board from an ASCII diagram (fastgo.ascii_board.parse_ascii: rows of '.', 'X'
        black, 'O' white, top row first, spaces ignored)."""
        size, black, white = parse_ascii(text)
        board = Board(size, komi)
        board.setup(black, white)
        board.to_move = to_move
        return board

    def to_ascii(self):
        """Rows top to bottom, '.' empty, 'X' black, 'O' white."""
        chars = ".XO"
        n = self.state.size
        return "\n".join(
            "".join(chars[board_color_at(&self.state, r * n + c)] for c in range(n))
            for r in range(n))

    def __str__(self):
        return self.to_ascii()

    def __repr__(self):
        side = "black" if self.state.to_move == BLACK else "white"
        return (f"<Board {self.state.size}x{self.state.size} komi {self.state.komi:g}, "
                f"{side} to move, move {self.state.num_moves}>")
