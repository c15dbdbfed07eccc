# The Go rules engine: one flat BoardState per position (see board.pxd for the layout and the
# liberty method), the nogil C rules on it, and the Python Board / Random classes that wrap it.
import operator
import os

import numpy as np

from fastgo.ascii_board import parse_ascii

cimport numpy as cnp
from libc.stdint cimport int8_t, int16_t, int32_t, uint8_t, uint64_t
from libc.string cimport memcpy, memset
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

from fastgo.rng cimport Rng, rng_seed, rng_next, rng_below, rng_uniform

cnp.import_array()

# Zobrist keys: ZOBRIST[color][padded point], plus the side key XORed in while White is to move.
# Fixed seed, so hashes agree between processes (and between runs: useful in shards and logs).
cdef uint64_t ZOBRIST[3][PADDED]
cdef uint64_t ZOBRIST_WHITE_TO_MOVE


cdef void _init_zobrist() noexcept nogil:
    global ZOBRIST_WHITE_TO_MOVE
    cdef Rng r
    cdef int c, p
    rng_seed(&r, <uint64_t>0x5EED60F457600D)
    for c in range(3):
        for p in range(PADDED):
            ZOBRIST[c][p] = rng_next(&r) if c != EMPTY else 0
    ZOBRIST_WHITE_TO_MOVE = rng_next(&r)


_init_zobrist()


# ---------------------------------------------------------------------------------------------
# Coordinates: public move index <-> padded point.

cdef inline int _point(const BoardState* b, int move) noexcept nogil:
    return (move // b.size + 1) * b.stride + move % b.size + 1


cdef inline int _move(const BoardState* b, int p) noexcept nogil:
    return (p // b.stride - 1) * b.size + p % b.stride - 1


# ---------------------------------------------------------------------------------------------
# Lifecycle.

cdef void board_init(BoardState* b, int size, float komi) noexcept nogil:
    cdef int r, c, p
    memset(b, 0, sizeof(BoardState))
    b.size = size
    b.komi = komi
    b.to_move = BLACK
    b.passes = 0
    b.num_moves = 0
    b.max_moves = 2 * size * size
    b.ko_move = NO_POINT
    b.last_move = NO_POINT
    for r in range(RECENT_MOVES):
        b.recent_moves[r] = NO_POINT
    b.hash = 0
    b.stride = size + 2
    b.ko_point = 0
    b.track_history = 1
    b.hist_len = 0
    b.hist_head = 0
    memset(b.color, BORDER, PADDED)
    b.n_empty = 0
    for r in range(size):
        for c in range(size):
            p = (r + 1) * b.stride + c + 1
            b.color[p] = EMPTY
            b.empty_pos[p] = b.n_empty
            b.empty_list[b.n_empty] = p
            b.n_empty += 1


cdef inline size_t _prefix_bytes(const BoardState* b) noexcept nogil:
    # Bytes of a BoardState before the history ring (its last field).
    return <size_t>(<const char*>&b.hist[0][0] - <const char*>b)


cdef inline bint _play_copy(const BoardState* b, int move, BoardState* out) noexcept nogil:
    # `move` played on a copy of b without its history (for hashes after a move); 0 if illegal.
    memcpy(out, b, _prefix_bytes(b))
    out.track_history = 0
    out.hist_len = 0
    return board_play(out, move)


cdef bint board_play_copy(const BoardState* b, int move, BoardState* out) noexcept nogil:
    return _play_copy(b, move, out)


cdef void board_copy(BoardState* dst, const BoardState* src) noexcept nogil:
    if src.track_history:
        memcpy(dst, src, sizeof(BoardState))
    else:
        memcpy(dst, src, _prefix_bytes(src))


# ---------------------------------------------------------------------------------------------
# Private helpers. Points are padded indices; c is the colour to play, 3 - c the opponent.

cdef inline void _offsets(const BoardState* b, int* off) noexcept nogil:
    # The four neighbour steps on the padded array: up, left, right, down.
    off[0] = -b.stride
    off[1] = -1
    off[2] = 1
    off[3] = b.stride


cdef inline void _remove_empty(BoardState* b, int p) noexcept nogil:
    cdef int i = b.empty_pos[p]
    cdef int last = b.empty_list[b.n_empty - 1]
    b.empty_list[i] = last
    b.empty_pos[last] = i
    b.n_empty -= 1


cdef inline void _add_empty(BoardState* b, int p) noexcept nogil:
    b.empty_pos[p] = b.n_empty
    b.empty_list[b.n_empty] = p
    b.n_empty += 1


cdef inline bint _is_legal_point(const BoardState* b, int p, int c) noexcept nogil:
    # p must be a board point. Legal iff empty, not the ko point, and after the move the stone's
    # group has a liberty: an empty neighbour, a friendly group with another liberty, or a capture.
    cdef int i, n, col
    cdef int nbrs[4]
    if b.color[p] != EMPTY or p == b.ko_point:
        return 0
    nbrs[0] = p - b.stride
    nbrs[1] = p - 1
    nbrs[2] = p + 1
    nbrs[3] = p + b.stride
    for i in range(4):
        n = nbrs[i]
        col = b.color[n]
        if col == EMPTY:
            return 1
        if col == c:
            if b.libs[b.head[n]] > 1:
                return 1
        elif col != BORDER:
            if b.libs[b.head[n]] == 1:
                return 1
    return 0


cdef inline bint _is_eye_point(const BoardState* b, int p, int c) noexcept nogil:
    cdef int s = b.stride
    cdef int col, bad = 0, edge = 0, i
    cdef int diag[4]
    if b.color[p] != EMPTY:
        return 0
    col = b.color[p - s]
    if col != c and col != BORDER:
        return 0
    col = b.color[p - 1]
    if col != c and col != BORDER:
        return 0
    col = b.color[p + 1]
    if col != c and col != BORDER:
        return 0
    col = b.color[p + s]
    if col != c and col != BORDER:
        return 0
    diag[0] = p - s - 1
    diag[1] = p - s + 1
    diag[2] = p + s - 1
    diag[3] = p + s + 1
    for i in range(4):
        col = b.color[diag[i]]
        if col == BORDER:
            edge = 1
        elif col != c and col != EMPTY:
            bad += 1
    if edge:
        return bad == 0
    return bad < 2


cdef inline bint _acceptable(const BoardState* b, int p, int c) noexcept nogil:
    # Playout filter: legal for c and not c's own eye. A point with an empty neighbour is both
    # (and is never the ko point: a ko point is surrounded), so most points cost four loads.
    cdef int s = b.stride
    if (b.color[p - s] == EMPTY or b.color[p - 1] == EMPTY or b.color[p + 1] == EMPTY
            or b.color[p + s] == EMPTY):
        return 1
    if _is_eye_point(b, p, c):
        return 0
    return _is_legal_point(b, p, c)


cdef void _push_history(BoardState* b) noexcept nogil:
    # Stores the current position (before the move) as the most recent previous position.
    cdef int r, c, m = 0, p
    cdef uint8_t* dst
    b.hist_head = (b.hist_head + 1) % (HISTORY - 1)
    dst = b.hist[b.hist_head]
    for r in range(b.size):
        p = (r + 1) * b.stride + 1
        for c in range(b.size):
            dst[m] = b.color[p + c]
            m += 1
    if b.hist_len < HISTORY - 1:
        b.hist_len += 1


cdef inline void _push_recent(BoardState* b, int move) noexcept nogil:
    # Shifts recent_moves by one ply and records `move` as the latest.
    cdef int k
    for k in range(RECENT_MOVES - 1, 0, -1):
        b.recent_moves[k] = b.recent_moves[k - 1]
    b.recent_moves[0] = <int16_t>move


cdef inline void _splice(BoardState* b, int h, int g) noexcept nogil:
    # Joins group g into group h: g's stones get head h, the two circular lists become one.
    cdef int s = g, t
    while True:
        b.head[s] = h
        s = b.next_stone[s]
        if s == g:
            break
    t = b.next_stone[h]
    b.next_stone[h] = b.next_stone[g]
    b.next_stone[g] = t
    b.gsize[h] += b.gsize[g]


cdef int _count_libs(const BoardState* b, int h) noexcept nogil:
    # Exact liberties of the group headed by h. An empty point e next to the group is counted
    # at the first of e's neighbours (in the order up, left, right, down) that is in the group,
    # so every liberty counts once with no marks to clear.
    cdef int st = b.stride
    cdef int s = h, i, j, e, n, count = 0
    cdef int off[4]
    off[0] = -st
    off[1] = -1
    off[2] = 1
    off[3] = st
    while True:
        for i in range(4):
            e = s + off[i]
            if b.color[e] == EMPTY:
                for j in range(4):
                    n = e + off[j]
                    if b.color[n] == b.color[h] and b.head[n] == h:
                        if n == s:
                            count += 1
                        break
        s = b.next_stone[s]
        if s == h:
            break
    return count


cdef void _add_stone(BoardState* b, int p, int c) noexcept nogil:
    # Puts a c stone on the empty board point p and forms its group with exact liberties; the
    # opponent's groups are not touched here.
    cdef int st = b.stride
    cdef int nbrs[4]
    cdef int friends[4]
    cdef int nf = 0, i, j, n, h, e, add, adjacent, big, d
    cdef int off[4]
    _offsets(b, off)
    nbrs[0] = p - st
    nbrs[1] = p - 1
    nbrs[2] = p + 1
    nbrs[3] = p + st
    _remove_empty(b, p)
    b.color[p] = c
    b.hash ^= ZOBRIST[c][p]
    for i in range(4):
        n = nbrs[i]
        if b.color[n] == c:
            h = b.head[n]
            for j in range(nf):
                if friends[j] == h:
                    break
            else:
                friends[nf] = h
                nf += 1
    if nf == 0:
        b.head[p] = p
        b.next_stone[p] = p
        b.gsize[p] = 1
        add = 0
        for i in range(4):
            if b.color[nbrs[i]] == EMPTY:
                add += 1
        b.libs[p] = add
    elif nf == 1:
        h = friends[0]
        add = 0
        for i in range(4):
            e = nbrs[i]
            if b.color[e] == EMPTY:
                adjacent = 0
                for d in range(4):
                    n = e + off[d]
                    if n != p and b.color[n] == c and b.head[n] == h:
                        adjacent = 1
                        break
                if not adjacent:
                    add += 1
        b.libs[h] += add - 1
        b.head[p] = h
        b.next_stone[p] = b.next_stone[h]
        b.next_stone[h] = p
        b.gsize[h] += 1
    else:
        big = 0
        for i in range(1, nf):
            if b.gsize[friends[i]] > b.gsize[friends[big]]:
                big = i
        h = friends[big]
        b.head[p] = h
        b.next_stone[p] = b.next_stone[h]
        b.next_stone[h] = p
        b.gsize[h] += 1
        for i in range(nf):
            if i != big:
                _splice(b, h, friends[i])
        b.libs[h] = _count_libs(b, h)


cdef int _enemy_heads(const BoardState* b, int p, int opp, int* heads) noexcept nogil:
    # The distinct groups of colour opp next to p; returns how many (0..4).
    cdef int k = 0, i, j, n, h, d
    cdef int off[4]
    _offsets(b, off)
    for d in range(4):
        n = p + off[d]
        if b.color[n] == opp:
            h = b.head[n]
            for j in range(k):
                if heads[j] == h:
                    break
            else:
                heads[k] = h
                k += 1
    return k


cdef void _remove_group(BoardState* b, int g, int c) noexcept nogil:
    # Captures the group headed by g (the opponent of c): its points become empty and each gives
    # one liberty to every distinct c group next to it.
    cdef int st = b.stride
    cdef int opp = 3 - c
    cdef int s = g, n, h, k, j, d
    cdef int seen[4]
    cdef int off[4]
    _offsets(b, off)
    while True:
        b.color[s] = EMPTY
        b.hash ^= ZOBRIST[opp][s]
        _add_empty(b, s)
        k = 0
        for d in range(4):
            n = s + off[d]
            if b.color[n] == c:
                h = b.head[n]
                for j in range(k):
                    if seen[j] == h:
                        break
                else:
                    seen[k] = h
                    k += 1
                    b.libs[h] += 1
        s = b.next_stone[s]
        if s == g:
            break


cdef void _play_point(BoardState* b, int p) noexcept nogil:
    # Plays the legal board point p for the side to move.
    cdef int c = b.to_move
    cdef int opp = 3 - c
    cdef int heads[4]
    cdef int k, i, g, captured = 0, last_captured = 0, h
    if b.track_history:
        _push_history(b)
    _add_stone(b, p, c)
    k = _enemy_heads(b, p, opp, heads)
    for i in range(k):
        g = heads[i]
        b.libs[g] -= 1
        if b.libs[g] == 0:
            captured += b.gsize[g]
            last_captured = g
            _remove_group(b, g, c)
    h = b.head[p]
    if captured == 1 and b.gsize[h] == 1 and b.libs[h] == 1:
        b.ko_point = last_captured
        b.ko_move = _move(b, last_captured)
    else:
        b.ko_point = 0
        b.ko_move = NO_POINT
    b.captures[c] += captured
    b.passes = 0
    b.num_moves += 1
    b.last_move = _move(b, p)
    _push_recent(b, b.last_move)
    b.to_move = opp
    b.hash ^= ZOBRIST_WHITE_TO_MOVE


cdef void _play_pass(BoardState* b) noexcept nogil:
    if b.track_history:
        _push_history(b)
    b.passes += 1
    b.num_moves += 1
    b.last_move = b.size * b.size
    _push_recent(b, b.last_move)
    b.ko_point = 0
    b.ko_move = NO_POINT
    b.to_move = 3 - b.to_move
    b.hash ^= ZOBRIST_WHITE_TO_MOVE


cdef inline int _random_point(const BoardState* b, Rng* rng) noexcept nogil:
    # Padded point of board_random_move, or 0 for a pass.
    cdef int c = b.to_move
    cdef int n = b.n_empty, i, p, start
    if n == 0:
        return 0
    start = rng_below(rng, n)
    for i in range(start, n):
        p = b.empty_list[i]
        if _acceptable(b, p, c):
            return p
    for i in range(start):
        p = b.empty_list[i]
        if _acceptable(b, p, c):
            return p
    return 0


# ---------------------------------------------------------------------------------------------
# Public C API (board.pxd).

cdef bint board_is_legal(const BoardState* b, int move) noexcept nogil:
    if move == b.size * b.size:
        return 1
    if move < 0 or move > b.size * b.size:
        return 0
    return _is_legal_point(b, _point(b, move), b.to_move)


cdef bint board_play(BoardState* b, int move) noexcept nogil:
    cdef int p
    if move == b.size * b.size:
        _play_pass(b)
        return 1
    if move < 0 or move > b.size * b.size:
        return 0
    p = _point(b, move)
    if not _is_legal_point(b, p, b.to_move):
        return 0
    _play_point(b, p)
    return 1


cdef int board_legal_moves(const BoardState* b, uint8_t* mask) noexcept nogil:
    cdef int r, c, p, m = 0, count = 0
    cdef int col = b.to_move
    for r in range(b.size):
        p = (r + 1) * b.stride + 1
        for c in range(b.size):
            mask[m] = _is_legal_point(b, p + c, col)
            count += mask[m]
            m += 1
    mask[m] = 1
    return count


cdef bint board_is_eye(const BoardState* b, int move, int color) noexcept nogil:
    if move < 0 or move >= b.size * b.size or (color != BLACK and color != WHITE):
        return 0
    return _is_eye_point(b, _point(b, move), color)


cdef int board_random_move(BoardState* b, Rng* rng) noexcept nogil:
    cdef int p = _random_point(b, rng)
    if p == 0:
        return b.size * b.size
    return _move(b, p)


cdef int board_random_move_uniform(BoardState* b, Rng* rng) noexcept nogil:
    cdef int16_t cands[MAX_MOVES]
    cdef int k = 0, i, p
    cdef int c = b.to_move
    for i in range(b.n_empty):
        p = b.empty_list[i]
        if _acceptable(b, p, c):
            cands[k] = p
            k += 1
    if k == 0:
        return b.size * b.size
    return _move(b, cands[rng_below(rng, k)])


cdef bint board_is_over(const BoardState* b) noexcept nogil:
    return b.passes >= 2 or b.num_moves >= b.max_moves


cdef inline int _empty_region(const BoardState* b, const int* off, int p, uint8_t* visited,
                              int16_t* stack, int16_t* region, int* size) noexcept nogil:
    # Flood fill of the empty region holding padded point p (not yet visited): marks it visited,
    # writes its points to region (when not NULL) and their number to size[0]; returns the
    # colours its border touches as a two-bit mask (BLACK = 1, WHITE = 2). off: _offsets(b).
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
    _offsets(b, off)
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
    _offsets(b, off)
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
    _offsets(b, off)
    memset(visited, 0, PADDED)
    for r in range(n):
        for c in range(n):
            p = (r + 1) * st + c + 1
            if b.color[p] == EMPTY and not visited[p]:
                reach = _empty_region(b, off, p, visited, stack, NULL, &count)
                if reach != BLACK and reach != WHITE:
                    return 0
    return 1


cdef int board_color_at(const BoardState* b, int move) noexcept nogil:
    if move < 0 or move >= b.size * b.size:
        return EMPTY
    return b.color[_point(b, move)]


cdef int board_libs_at(const BoardState* b, int move) noexcept nogil:
    cdef int p
    if move < 0 or move >= b.size * b.size:
        return 0
    p = _point(b, move)
    if b.color[p] != BLACK and b.color[p] != WHITE:
        return 0
    return b.libs[b.head[p]]


cdef int board_playout(BoardState* b, Rng* rng) noexcept nogil:
    cdef int moves = 0, p
    b.track_history = 0
    b.hist_len = 0
    while not (b.passes >= 2 or b.num_moves >= b.max_moves):
        p = _random_point(b, rng)
        if p:
            _play_point(b, p)
        else:
            _play_pass(b)
        moves += 1
    return moves


cdef bint board_place(BoardState* b, int move, int color) noexcept nogil:
    cdef int p, k, i
    cdef int heads[4]
    if move < 0 or move >= b.size * b.size or (color != BLACK and color != WHITE):
        return 0
    p = _point(b, move)
    if b.color[p] != EMPTY:
        return 0
    _add_stone(b, p, color)
    k = _enemy_heads(b, p, 3 - color, heads)
    for i in range(k):
        b.libs[heads[i]] -= 1
    b.ko_point = 0
    b.ko_move = NO_POINT
    return 1


cdef int board_min_libs(const BoardState* b) noexcept nogil:
    cdef int r, c, p, best = 1 << 30
    for r in range(b.size):
        for c in range(b.size):
            p = (r + 1) * b.stride + c + 1
            if b.color[p] == BLACK or b.color[p] == WHITE:
                if b.libs[b.head[p]] < best:
                    best = b.libs[b.head[p]]
    return best


cdef uint64_t board_position_hash(const BoardState* b) noexcept nogil:
    if b.to_move == WHITE:
        return b.hash ^ ZOBRIST_WHITE_TO_MOVE
    return b.hash


# ---------------------------------------------------------------------------------------------
# Benchmark loop (fastgo bench board): random playouts from the empty board, no GIL.

cdef inline double _now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


def bench_playouts(int size, double seconds, uint64_t seed=1, float komi=7.5):
    """Random playouts from the empty board for about `seconds` on this thread, GIL released.

    Returns (playouts, moves, elapsed_seconds). Moves are board_random_move choices (near-uniform,
    never filling an own eye); each playout ends on two passes or the 2 * N * N move cap.
    """
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise ValueError(f"board size must be {MIN_SIZE}..{MAX_SIZE}, got {size}")
    cdef BoardState start
    cdef BoardState work
    cdef Rng rng
    cdef long long playouts = 0, moves = 0
    cdef double t0, elapsed = 0.0
    cdef int k
    with nogil:
        rng_seed(&rng, seed)
        board_init(&start, size, komi)
        start.track_history = 0
        t0 = _now()
        while True:
            for k in range(8):
                board_copy(&work, &start)
                moves += board_playout(&work, &rng)
                playouts += 1
            elapsed = _now() - t0
            if elapsed >= seconds:
                break
    return playouts, moves, elapsed


# ---------------------------------------------------------------------------------------------
# Python layer.

# The C enum names are not Python names; export their values under the same names.
globals().update(EMPTY=<int>EMPTY, BLACK=<int>BLACK, WHITE=<int>WHITE, NO_POINT=<int>NO_POINT)
MAX_BOARD_SIZE = MAX_SIZE
MIN_BOARD_SIZE = MIN_SIZE

_COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"   # GTP columns: no I


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
        if not MIN_SIZE <= size <= MAX_SIZE:
            raise ValueError(f"board size must be {MIN_SIZE}..{MAX_SIZE}, got {size}")
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
        if value != self.state.to_move:
            self.state.to_move = value
            self.state.hash ^= ZOBRIST_WHITE_TO_MOVE
            self.state.ko_point = 0
            self.state.ko_move = NO_POINT

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
        cdef int n2 = self.state.size * self.state.size
        if m == n2:
            return None
        if m < 0 or m > n2:
            return "off board"
        cdef int p = _point(&self.state, m)
        if self.state.color[p] != EMPTY:
            return "occupied"
        if p == self.state.ko_point:
            return "ko"
        if not _is_legal_point(&self.state, p, self.state.to_move):
            return "suicide"
        return None

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
        if not _play_copy(&self.state, m, &tmp):
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
                out[r, c] = self.state.color[(r + 1) * self.state.stride + c + 1]
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
            "".join(chars[self.state.color[(r + 1) * self.state.stride + c + 1]] for c in range(n))
            for r in range(n))

    def __str__(self):
        return self.to_ascii()

    def __repr__(self):
        side = "black" if self.state.to_move == BLACK else "white"
        return (f"<Board {self.state.size}x{self.state.size} komi {self.state.komi:g}, "
                f"{side} to move, move {self.state.num_moves}>")
