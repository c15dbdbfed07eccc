# The Go rules on one flat BoardState (see rules.pxd for the layout and the liberty method):
# legality, captures, simple ko, the Zobrist hashes, the playout eye test and random playouts, all
# nogil C. The hot steps (a move, its liberties and captures, a playout's choice) stay in this
# module, so a playout makes no call across modules.
from libc.stdint cimport int16_t, int32_t, uint8_t, uint64_t
from libc.string cimport memcpy, memset

from fastgo.rng cimport Rng, rng_seed, rng_next, rng_below

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
    board_steps(b, off)
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
    board_steps(b, off)
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
    board_steps(b, off)
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
        b.ko_move = board_move(b, last_captured)
    else:
        b.ko_point = 0
        b.ko_move = NO_POINT
    b.captures[c] += captured
    b.passes = 0
    b.num_moves += 1
    b.last_move = board_move(b, p)
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
# Public C API (rules.pxd).

cdef bint board_is_legal(const BoardState* b, int move) noexcept nogil:
    if move == b.size * b.size:
        return 1
    if move < 0 or move > b.size * b.size:
        return 0
    return _is_legal_point(b, board_point(b, move), b.to_move)


cdef bint board_play(BoardState* b, int move) noexcept nogil:
    cdef int p
    if move == b.size * b.size:
        _play_pass(b)
        return 1
    if move < 0 or move > b.size * b.size:
        return 0
    p = board_point(b, move)
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
    return _is_eye_point(b, board_point(b, move), color)


cdef int board_random_move(BoardState* b, Rng* rng) noexcept nogil:
    cdef int p = _random_point(b, rng)
    if p == 0:
        return b.size * b.size
    return board_move(b, p)


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
    return board_move(b, cands[rng_below(rng, k)])


cdef bint board_is_over(const BoardState* b) noexcept nogil:
    return b.passes >= 2 or b.num_moves >= b.max_moves


cdef int board_color_at(const BoardState* b, int move) noexcept nogil:
    if move < 0 or move >= b.size * b.size:
        return EMPTY
    return b.color[board_point(b, move)]


cdef int board_libs_at(const BoardState* b, int move) noexcept nogil:
    cdef int p
    if move < 0 or move >= b.size * b.size:
        return 0
    p = board_point(b, move)
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
    p = board_point(b, move)
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


cdef void board_set_to_move(BoardState* b, int color) noexcept nogil:
    if color != b.to_move:
        b.to_move = color
        b.hash ^= ZOBRIST_WHITE_TO_MOVE
        b.ko_point = 0
        b.ko_move = NO_POINT


cdef int board_illegal_reason(const BoardState* b, int move) noexcept nogil:
    cdef int p
    if move == b.size * b.size:
        return LEGAL
    if move < 0 or move > b.size * b.size:
        return OFF_BOARD
    p = board_point(b, move)
    if b.color[p] != EMPTY:
        return OCCUPIED
    if p == b.ko_point:
        return KO
    if not _is_legal_point(b, p, b.to_move):
        return SUICIDE
    return LEGAL
