# Tromp-Taylor area scoring (see scoring.pxd): empty regions found by flood fill over the padded
# array, each owned by the one colour its border touches (no colour or both: dame).
from libc.stdint cimport int8_t, int16_t, uint8_t
from libc.string cimport memset

from fastgo.constants cimport PADDED
from fastgo.rules cimport BoardState, EMPTY, BLACK, WHITE, BORDER, board_steps


cdef inline int _empty_region(const BoardState* b, const int* off, int p, uint8_t* visited,
                              int16_t* stack, int16_t* region, int* size) noexcept nogil:
    # Flood fill of the empty region holding padded point p (not yet visited): marks it visited,
    # writes its points to region (when not NULL) and their number to size[0]; returns the
    # colours its border touches as a two-bit mask (BLACK = 1, WHITE = 2). off: board_steps(b).
    cdef int top = 1, count = 0, reach = 0, q, n, d, col
    visited[p] = 1
    stack[0] = p
    while top > 0:
        top -= 1
        q = stack[top]
        if region != NULL:
            region[count] = q
        count += 1
        for d in range(4):
            n = q + off[d]
            col = b.color[n]
            if col == EMPTY:
                if not visited[n]:
                    visited[n] = 1
                    stack[top] = n
                    top += 1
            elif col != BORDER:
                reach |= col
    size[0] = count
    return reach


cdef float board_score(const BoardState* b) noexcept nogil:
    # Tromp-Taylor: stones plus empty regions whose border touches one colour only.
    cdef uint8_t visited[PADDED]
    cdef int16_t stack[PADDED]
    cdef int st = b.stride
    cdef int black = 0, white = 0, r, c, p, region, reach, col
    cdef int off[4]
    board_steps(b, off)
    memset(visited, 0, PADDED)
    for r in range(b.size):
        for c in range(b.size):
            p = (r + 1) * st + c + 1
            col = b.color[p]
            if col == BLACK:
                black += 1
            elif col == WHITE:
                white += 1
            elif not visited[p]:
                reach = _empty_region(b, off, p, visited, stack, NULL, &region)
                if reach == BLACK:
                    black += region
                elif reach == WHITE:
                    white += region
    return <float>(black - white) - b.komi


cdef void board_ownership(const BoardState* b, int8_t* out) noexcept nogil:
    cdef uint8_t visited[PADDED]
    cdef int16_t stack[PADDED]
    cdef int16_t region[PADDED]
    cdef int st = b.stride, n = b.size, r, c, p, q, i, count, reach, col
    cdef int8_t owner
    cdef int off[4]
    board_steps(b, off)
    memset(visited, 0, PADDED)
    for r in range(n):
        for c in range(n):
            p = (r + 1) * st + c + 1
            col = b.color[p]
            if col == BLACK:
                out[r * n + c] = 1
            elif col == WHITE:
                out[r * n + c] = -1
            elif not visited[p]:
                reach = _empty_region(b, off, p, visited, stack, region, &count)
                owner = 1 if reach == BLACK else (-1 if reach == WHITE else 0)
                for i in range(count):
                    q = region[i]
                    out[(q // st - 1) * n + q % st - 1] = owner


cdef bint board_settled(const BoardState* b) noexcept nogil:
    # Every empty region's border touches one colour only (no dame, no region reaching both or
    # neither): the Tromp-Taylor area is decided point by point. The empty board is not settled.
    cdef uint8_t visited[PADDED]
    cdef int16_t stack[PADDED]
    cdef int st = b.stride, n = b.size, r, c, p, count, reach
    cdef int off[4]
    board_steps(b, off)
    memset(visited, 0, PADDED)
    for r in range(n):
        for c in range(n):
            p = (r + 1) * st + c + 1
            if b.color[p] == EMPTY and not visited[p]:
                reach = _empty_region(b, off, p, visited, stack, NULL, &count)
                if reach != BLACK and reach != WHITE:
                    return 0
    return 1
