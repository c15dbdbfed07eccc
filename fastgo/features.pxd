# Feature planes for the network, written into a caller's uint8 buffer without the GIL.
# Layout of `out`: [planes, N, N] contiguous, row-major by move index (row 0 = top).
from libc.stdint cimport uint8_t
from fastgo.rules cimport BoardState
from fastgo.constants cimport AZ_PLANES, LIB_PLANES, KATAGO_PLANES

cdef enum:
    ENC_ALPHAZERO = 0     # 17 planes: own stones t, opp stones t, own t-1, opp t-1, ... (8 steps), side to move (1 = Black)
    ENC_LIBERTY = 1       # 11 planes: own 1,2,3,4+ libs, opp 1,2,3,4+ libs, black-to-move, white-to-move, ko point
    ENC_KATAGO = 2        # 16 planes (Wu 2019, Table 2): own, opp, on-board ones, own 1,2,3+ libs,
                          # opp 1,2,3+ libs, ko point, last 5 moves, black-to-move

cdef int encoding_planes(int encoding) noexcept nogil
# Writes encoding_planes(encoding) * N * N bytes (0 or 1) to out.
cdef void encode(const BoardState* b, int encoding, uint8_t* out) noexcept nogil
