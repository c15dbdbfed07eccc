# The Go position as one flat C struct, and the rules on it (legality, captures, suicide, simple
# ko, the Zobrist hashes, the playout eye test and random playouts). Copying a position is one
# memcpy. Scoring is fastgo.scoring's; the Python Board is fastgo.board's.
#
# Moves are the public coordinate everywhere outside this module: move = row * N + col with row 0
# the TOP row as printed (GTP row N), col 0 the left column (GTP "A"); PASS = N * N. Policy vectors
# have N * N + 1 entries, pass last. Internally points live on a padded array with a border.
from libc.stdint cimport uint8_t, int16_t, int32_t, uint64_t
from fastgo.rng cimport Rng
from fastgo.constants cimport MIN_SIZE, MAX_SIZE, MAX_MOVES, PADDED

cdef enum:
    HISTORY = 8              # positions kept for the AlphaZero planes: current + 7 previous
    RECENT_MOVES = 5         # moves kept in recent_moves (the KataGo planes' last moves)

cdef enum:
    EMPTY = 0
    BLACK = 1
    WHITE = 2
    BORDER = 3

cdef enum:
    NO_POINT = -1            # sentinel for "no ko point", "no last move"

cdef enum:                   # board_illegal_reason's answers
    LEGAL = 0
    OFF_BOARD = 1
    OCCUPIED = 2
    KO = 3
    SUICIDE = 4


cdef struct BoardState:
    # --- public: read by the search and the Python layer -------------------------------------
    int32_t size              # N, MIN_SIZE..MAX_SIZE
    float komi                # points added to White's area
    uint8_t to_move           # BLACK or WHITE
    int32_t passes            # consecutive passes just played (2 ends the game)
    int32_t num_moves         # moves played since the start (passes included)
    int32_t max_moves         # move cap: 2 * N * N
    int32_t ko_move           # move (public coordinate) forbidden to to_move by simple ko, or NO_POINT
    int32_t last_move         # last move played (public coordinate, PASS included), or NO_POINT
    int16_t recent_moves[RECENT_MOVES]  # recent_moves[k]: the move played k + 1 plies ago
                              # (public coordinate, PASS included), NO_POINT before the first move;
                              # kept by board_play whatever track_history says
    int32_t captures[3]       # stones captured BY each color, indexed by BLACK / WHITE
    uint64_t hash             # Zobrist hash of stones + side to move (not ko); equal positions, equal hash
    # --- private to rules.pyx (and the inline helpers below): layout may change ------------
    # Points are padded indices p = (row + 1) * stride + (col + 1); the frame around the board is
    # BORDER, so a neighbour (p +- 1, p +- stride) is always a valid index.
    #
    # Groups and exact liberties, kept incrementally:
    #   * every stone has head[p] = its group's representative; the stones of a group form one
    #     circular list through next_stone; libs / gsize are valid at the head only.
    #   * placing a stone: each distinct adjacent group loses exactly one liberty (the point).
    #     Extending one friendly group adds the new stone's empty neighbours that no stone of the
    #     group already touches (an O(1) test of their neighbours' heads). Joining two or more
    #     groups relinks the smaller lists into the largest (heads rewritten) and recounts the
    #     merged group's liberties once, deduplicated by a stamp array.
    #   * a captured stone gives one liberty to each distinct group adjacent to it.
    #   So libs[head] is always the exact number of distinct empty points next to the group.
    int32_t stride            # N + 2: padded row length
    int32_t ko_point          # padded index of ko_move, or 0 (a border index) when there is none
    int32_t n_empty           # valid entries in empty_list
    bint track_history        # keep the previous positions for the AlphaZero planes
    int32_t hist_len          # number of valid previous positions in hist (0..HISTORY-1)
    int32_t hist_head         # ring index of the most recent previous position
    uint8_t color[PADDED]     # EMPTY / BLACK / WHITE / BORDER per padded point
    int16_t head[PADDED]      # group representative of a stone; undefined for empty points
    int16_t next_stone[PADDED]  # circular linked list of the stones of one group
    int16_t libs[PADDED]      # exact liberty count, valid at a group head
    int16_t gsize[PADDED]     # stone count, valid at a group head
    int16_t empty_list[PADDED]  # the empty points (padded index), unordered; n_empty valid entries
    int16_t empty_pos[PADDED]   # index into empty_list of each empty point
    # hist must stay the last field: without history tracking, board_copy copies the prefix only.
    uint8_t hist[HISTORY - 1][MAX_MOVES]   # previous positions as colors per move index


# Lifecycle. board_init sets an empty board, Black to move, history tracking on.
cdef void board_init(BoardState* b, int size, float komi) noexcept nogil
cdef void board_copy(BoardState* dst, const BoardState* src) noexcept nogil

# Rules. Legality is for the side to move: on the board, empty, not suicide, not the simple-ko
# point. PASS is always legal. Positional superko is fastgo.history's.
cdef bint board_is_legal(const BoardState* b, int move) noexcept nogil
# Plays `move` for the side to move if legal and returns 1; returns 0 and leaves b unchanged if not.
cdef bint board_play(BoardState* b, int move) noexcept nogil
# `move` played on a copy of b into `out` without the planes' history (enough for a hash after the
# move); 1 if legal, 0 if not (out is then scratch).
cdef bint board_play_copy(const BoardState* b, int move, BoardState* out) noexcept nogil
# mask[0 .. N*N] = 1 where legal (pass included, always 1); returns the number of legal board points.
cdef int board_legal_moves(const BoardState* b, uint8_t* mask) noexcept nogil
# The playout eye test: `move` empty, its neighbours all `color` (or edge), and the diagonals
# safe (at most one enemy diagonal in the centre, none on the edge).
cdef bint board_is_eye(const BoardState* b, int move, int color) noexcept nogil
# A random legal move for the side to move that does not fill its own eye; PASS if none.
# Fast and only near-uniform: a random start in the empty-point list, then the first acceptable
# point scanning forward cyclically (points after a run of rejected points are favoured).
cdef int board_random_move(BoardState* b, Rng* rng) noexcept nogil
# The same choice made exactly uniformly over all acceptable points (collects them all first).
cdef int board_random_move_uniform(BoardState* b, Rng* rng) noexcept nogil
# Game over by two consecutive passes or the move cap (resignation is the Game's).
cdef bint board_is_over(const BoardState* b) noexcept nogil
# Colour at a move index (EMPTY / BLACK / WHITE); liberties of the group there (0 if empty).
cdef int board_color_at(const BoardState* b, int move) noexcept nogil
cdef int board_libs_at(const BoardState* b, int move) noexcept nogil
# Plays random non-eye-filling moves (board_random_move) until board_is_over; returns the number
# of moves played. Turns history tracking off on b (the playout is not a position to encode).
cdef int board_playout(BoardState* b, Rng* rng) noexcept nogil
# Places a stone of `color` at `move` without a move (setup, handicap): no capture, no change of
# to_move / num_moves; the hash is updated. Returns 0 (b unchanged) if the point is not an empty
# board point. A placement may leave a group without liberties: check with board_min_libs.
cdef bint board_place(BoardState* b, int move, int color) noexcept nogil
# Fewest liberties of any group on the board (a large number when there is no stone).
cdef int board_min_libs(const BoardState* b) noexcept nogil
# Zobrist hash of the stones alone (b.hash without the side-to-move key): positional superko.
cdef uint64_t board_position_hash(const BoardState* b) noexcept nogil

# The side to move set out of turn (handicap, GTP play): the hash follows, the simple ko is cleared.
cdef void board_set_to_move(BoardState* b, int color) noexcept nogil
# Why `move` is illegal for the side to move (OFF_BOARD, OCCUPIED, KO, SUICIDE), or LEGAL.
cdef int board_illegal_reason(const BoardState* b, int move) noexcept nogil


# Coordinates and neighbours, inline for the kernels that walk the padded array (fastgo.scoring).
cdef inline int board_point(const BoardState* b, int move) noexcept nogil:
    # The padded point of a board move index.
    return (move // b.size + 1) * b.stride + move % b.size + 1


cdef inline int board_move(const BoardState* b, int p) noexcept nogil:
    # The move index of a padded board point.
    return (p // b.stride - 1) * b.size + p % b.stride - 1


cdef inline void board_steps(const BoardState* b, int* off) noexcept nogil:
    # The four neighbour steps on the padded array: up, left, right, down.
    off[0] = -b.stride
    off[1] = -1
    off[2] = 1
    off[3] = b.stride
