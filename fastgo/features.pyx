# Network input planes from a BoardState, written into a caller's uint8 buffer with no GIL.
# Layout: [planes, N, N], row-major by move index (row 0 = top).
import numpy as np

cimport numpy as cnp
from libc.stdint cimport uint8_t
from libc.string cimport memset

from fastgo.board cimport Board
from fastgo.rules cimport BoardState, EMPTY, BLACK, WHITE, HISTORY, RECENT_MOVES

cnp.import_array()

ALPHAZERO = "alphazero"
LIBERTY = "liberty"
KATAGO = "katago"
# Encoding name -> id: the one map every kernel (mcts, replay, policy_play) reads.
ENCODING_IDS = {ALPHAZERO: ENC_ALPHAZERO, LIBERTY: ENC_LIBERTY, KATAGO: ENC_KATAGO}


cdef int encoding_planes(int encoding) noexcept nogil:
    if encoding == ENC_ALPHAZERO:
        return AZ_PLANES
    if encoding == ENC_LIBERTY:
        return LIB_PLANES
    if encoding == ENC_KATAGO:
        return KATAGO_PLANES
    return 0


cdef void _encode_alphazero(const BoardState* b, uint8_t* out) noexcept nogil:
    # Planes 2k, 2k + 1: stones of the side to move / of the opponent k positions ago (k = 0..7),
    # all from the current mover's view; missing history is zeros. Plane 16: 1 if Black to move.
    cdef int n = b.size, nn = b.size * b.size
    cdef int me = b.to_move, r, c, m, k, ring, col
    cdef const uint8_t* past
    m = 0
    for r in range(n):
        for c in range(n):
            col = b.color[(r + 1) * b.stride + c + 1]
            if col == me:
                out[m] = 1
            elif col != EMPTY:
                out[nn + m] = 1
            m += 1
    for k in range(1, HISTORY):
        if k > b.hist_len:
            break
        ring = (b.hist_head - (k - 1) + (HISTORY - 1)) % (HISTORY - 1)
        past = b.hist[ring]
        for m in range(nn):
            col = past[m]
            if col == me:
                out[2 * k * nn + m] = 1
            elif col != EMPTY:
                out[(2 * k + 1) * nn + m] = 1
    if me == BLACK:
        memset(out + 16 * nn, 1, nn)


cdef void _encode_liberty(const BoardState* b, uint8_t* out) noexcept nogil:
    # Planes 0-3: own stones in groups with 1, 2, 3, 4+ liberties; 4-7: the same for the opponent;
    # 8: 1 if Black to move; 9: 1 if White to move; 10: the simple-ko point.
    cdef int n = b.size, nn = b.size * b.size
    cdef int me = b.to_move, r, c, m, p, col, libs, plane
    m = 0
    for r in range(n):
        for c in range(n):
            p = (r + 1) * b.stride + c + 1
            col = b.color[p]
            if col == BLACK or col == WHITE:
                libs = b.libs[b.head[p]]
                plane = (libs if libs < 4 else 4) - 1
                if col != me:
                    plane += 4
                out[plane * nn + m] = 1
            m += 1
    if me == BLACK:
        memset(out + 8 * nn, 1, nn)
    else:
        memset(out + 9 * nn, 1, nn)
    if b.ko_move >= 0:
        out[10 * nn + b.ko_move] = 1


cdef void _encode_katago(const BoardState* b, uint8_t* out) noexcept nogil:
    # KataGo's spatial inputs (Wu 2019, Table 2), from the side to move's view:
    #   0: own stones                 1: opponent stones          2: 1 on every board point
    #   3-5: own stones in groups with 1, 2, 3+ liberties
    #   6-8: opponent stones in groups with 1, 2, 3+ liberties
    #   9: the simple-ko point (forbidden to the side to move now)
    #   10-14: plane 10 + k is 1 at the move played k + 1 plies ago (a pass or no move: all 0)
    #   15: 1 if Black to move
    cdef int n = b.size, nn = b.size * b.size
    cdef int me = b.to_move, r, c, m, p, col, libs, plane, k, move
    memset(out + 2 * nn, 1, nn)
    m = 0
    for r in range(n):
        p = (r + 1) * b.stride + 1
        for c in range(n):
            col = b.color[p]
            if col == BLACK or col == WHITE:
                libs = b.libs[b.head[p]]
                plane = 3 + (libs if libs < 3 else 3) - 1
                if col == me:
                    out[m] = 1
                else:
                    out[nn + m] = 1
                    plane += 3
                out[plane * nn + m] = 1
            p += 1
            m += 1
    if b.ko_move >= 0:
        out[9 * nn + b.ko_move] = 1
    for k in range(RECENT_MOVES):
        move = b.recent_moves[k]
        if 0 <= move < nn:
            out[(10 + k) * nn + move] = 1
    if me == BLACK:
        memset(out + 15 * nn, 1, nn)


cdef void encode(const BoardState* b, int encoding, uint8_t* out) noexcept nogil:
    cdef int planes = encoding_planes(encoding)
    memset(out, 0, planes * b.size * b.size)
    if encoding == ENC_ALPHAZERO:
        _encode_alphazero(b, out)
    elif encoding == ENC_LIBERTY:
        _encode_liberty(b, out)
    elif encoding == ENC_KATAGO:
        _encode_katago(b, out)


def _encoding_id(encoding):
    if isinstance(encoding, str):
        try:
            return ENCODING_IDS[encoding]
        except KeyError:
            raise ValueError(f"unknown encoding {encoding!r}; expected one of "
                             f"{sorted(ENCODING_IDS)}") from None
    if encoding in (ENC_ALPHAZERO, ENC_LIBERTY, ENC_KATAGO):
        return int(encoding)
    raise ValueError(f"unknown encoding {encoding!r}")


def num_planes(encoding):
    """Planes of an encoding (fastgo.constants.ENCODING_PLANES[encoding])."""
    return encoding_planes(_encoding_id(encoding))


def encode_into(Board board not None, encoding, uint8_t[:, :, ::1] out not None):
    """Writes the planes of `board` into `out`, a C-contiguous uint8 (planes, N, N) array."""
    cdef int enc = _encoding_id(encoding)
    cdef int n = board.state.size
    if out.shape[0] != encoding_planes(enc) or out.shape[1] != n or out.shape[2] != n:
        raise ValueError(f"out has shape {tuple(out.shape)[:3]}, expected "
                         f"({encoding_planes(enc)}, {n}, {n})")
    with nogil:
        encode(&board.state, enc, &out[0, 0, 0])


def encode_board(Board board not None, encoding=ALPHAZERO):
    """uint8 (planes, N, N) planes of `board` (a new array)."""
    cdef int enc = _encoding_id(encoding)
    cdef int n = board.state.size
    out = np.empty((encoding_planes(enc), n, n), dtype=np.uint8)
    encode_into(board, enc, out)
    return out


# The Python name `encode` (board, encoding) -> ndarray; the C function above keeps the cdef name.
globals()["encode"] = encode_board
