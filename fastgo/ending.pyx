# When a game is over in the Go sense (see ending.pxd): the decided-position test that self-play's
# pass rule "decided" (fastgo.move_choice) asks before it lets a player pass.
from libc.stdint cimport int16_t, int32_t, uint8_t
from libc.string cimport memset
from fastgo.board cimport Board
from fastgo.rules cimport BoardState, EMPTY, BLACK, WHITE
from fastgo.constants cimport PADDED

import numpy as np

cdef enum:
    SEKI = 4                 # region flag beside the colour mask (BLACK | WHITE = 3)


cdef bint _fillable(const BoardState* b, const int* off, int p, int c) noexcept nogil:
    # A stone of colour c on the empty padded point p captures something or keeps at least two
    # liberties: a point that side can fill (dame), not a seki point.
    cdef uint8_t mark[PADDED]
    cdef uint8_t done[PADDED]
    cdef int opp = 3 - c, d, e, n, m, h, s, count = 0
    for d in range(4):
        n = p + off[d]
        if b.color[n] == opp and b.libs[b.head[n]] == 1:
            return 1
    memset(mark, 0, PADDED)
    memset(done, 0, PADDED)
    mark[p] = 1
    for d in range(4):
        n = p + off[d]
        if b.color[n] == EMPTY and not mark[n]:
            mark[n] = 1
            count += 1
        elif b.color[n] == c and not done[b.head[n]]:
            h = b.head[n]
            done[h] = 1
            s = h
            while True:
                for e in range(4):
                    m = s + off[e]
                    if b.color[m] == EMPTY and not mark[m]:
                        mark[m] = 1
                        count += 1
                s = b.next_stone[s]
                if s == h:
                    break
        if count >= 2:
            return 1
    return 0


cdef inline void _offsets(const BoardState* b, int* off) noexcept nogil:
    off[0] = -1
    off[1] = 1
    off[2] = -b.stride
    off[3] = b.stride


cdef int _flood_region(const BoardState* b, const int* off, int p, int rid, int16_t* region_of,
                       int16_t* stack, int16_t* points, int* count) noexcept nogil:
    # The empty region holding empty padded point p (region_of[p] < 0): each of its points gets
    # region_of = rid and goes to points[0 .. count[0]); returns the colours on its border as
    # a mask (BLACK | WHITE).
    cdef int top = 1, n = 0, mask = 0, q, d, col
    region_of[p] = rid
    stack[0] = p
    while top > 0:
        top -= 1
        q = stack[top]
        points[n] = q
        n += 1
        for d in range(4):
            col = b.color[q + off[d]]
            if col == EMPTY:
                if region_of[q + off[d]] < 0:
                    region_of[q + off[d]] = rid
                    stack[top] = q + off[d]
                    top += 1
            elif col == BLACK or col == WHITE:
                mask |= col
    count[0] = n
    return mask


cdef bint board_decided(const BoardState* b) noexcept nogil:
    cdef int16_t region_of[PADDED]   # region id of each empty padded point, -1 elsewhere
    cdef uint8_t reach[PADDED]       # per region id: colours on its border | SEKI
    cdef int32_t seen_by[PADDED]     # per region id: the last group (head + 1) that counted it
    cdef int16_t stack[PADDED]
    cdef int16_t points[PADDED]
    cdef uint8_t group_done[PADDED]
    cdef int st = b.stride, size = b.size, r, c, p, n, d, i, count, mask, col
    cdef int regions = 0, h, s, eyes, in_seki
    cdef int off[4]
    _offsets(b, off)
    for i in range(PADDED):
        region_of[i] = -1
    memset(group_done, 0, PADDED)
    for r in range(size):
        for c in range(size):
            p = (r + 1) * st + c + 1
            if b.color[p] != EMPTY or region_of[p] >= 0:
                continue
            mask = _flood_region(b, off, p, regions, region_of, stack, points, &count)
            if mask == 0:
                return 0                   # the empty board
            if mask == (BLACK | WHITE):
                if count > SEKI_MAX_POINTS:
                    return 0
                for i in range(count):
                    if _fillable(b, off, points[i], BLACK) or _fillable(b, off, points[i], WHITE):
                        return 0
                mask |= SEKI
            reach[regions] = mask
            seen_by[regions] = -1
            regions += 1
    for r in range(size):
        for c in range(size):
            p = (r + 1) * st + c + 1
            col = b.color[p]
            if (col != BLACK and col != WHITE) or group_done[b.head[p]]:
                continue
            h = b.head[p]
            group_done[h] = 1
            eyes = 0
            in_seki = 0
            s = h
            while True:
                for d in range(4):
                    n = s + off[d]
                    if b.color[n] == EMPTY and seen_by[region_of[n]] != h + 1:
                        seen_by[region_of[n]] = h + 1
                        if reach[region_of[n]] == col:
                            eyes += 1
                        elif reach[region_of[n]] & SEKI:
                            in_seki = 1
                s = b.next_stone[s]
                if s == h:
                    break
            if eyes < 2 and not in_seki:
                return 0
    return 1


def decided(Board board):
    """True where `board`'s position is decided (ending.pxd): every empty region borders one
    colour only or is seki dame, and every group has two eyes or lives in seki."""
    return bool(board_decided(&board.state))


def own_area(Board board):
    """uint8 [N*N]: 1 at the empty points of the regions that border the side to move's colour
    only. In a decided position a stone there changes no area (the groups around it already
    have two eyes), so self-play's "decided" pass rule plays the pass instead."""
    cdef const BoardState* b = &board.state
    cdef int n = b.size, st = b.stride, r, c, p, i, count, me = b.to_move
    cdef int16_t region_of[PADDED]
    cdef int16_t stack[PADDED]
    cdef int16_t points[PADDED]
    cdef int off[4]
    out = np.zeros(n * n, dtype=np.uint8)
    cdef uint8_t[::1] view = out
    _offsets(b, off)
    for i in range(PADDED):
        region_of[i] = -1
    for r in range(n):
        for c in range(n):
            p = (r + 1) * st + c + 1
            if b.color[p] != EMPTY or region_of[p] >= 0:
                continue
            if _flood_region(b, off, p, 0, region_of, stack, points, &count) == me:
                for i in range(count):
                    view[(points[i] // st - 1) * n + points[i] % st - 1] = 1
    return out
