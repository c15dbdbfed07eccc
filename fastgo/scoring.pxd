# Tromp-Taylor area scoring of a fastgo.rules BoardState: the score, each point's owner, and
# whether every point's owner is decided. Pure: each reads the position only.
from libc.stdint cimport int8_t
from fastgo.rules cimport BoardState

# Tromp-Taylor area score from Black's view: black area - white area - komi (> 0: Black wins).
cdef float board_score(const BoardState* b) noexcept nogil
# Tromp-Taylor ownership of every point: +1 Black (stone or region reaching Black only),
# -1 White, 0 dame. out: [N*N] by move index.
cdef void board_ownership(const BoardState* b, int8_t* out) noexcept nogil
# Every empty region reaches one colour only (each point's owner is decided; not the empty board).
cdef bint board_settled(const BoardState* b) noexcept nogil
