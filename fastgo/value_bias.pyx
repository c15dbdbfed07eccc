# The value-bias table and the contexts' key (see value_bias.pxd).
from libc.stdint cimport int32_t, uint64_t
from libc.stdlib cimport calloc, free
from libc.string cimport memset

from fastgo.board cimport Board
from fastgo.rules cimport BoardState, BLACK, WHITE, board_color_at, board_libs_at

cdef enum:
    PATTERN_RADIUS = 2           # the 5x5 square around the last move
    OFF_BOARD_CODE = 3           # a point of the pattern past the edge (EMPTY 0, BLACK 1, WHITE 2)
    ATARI_CODE = 4               # added to a stone's code when its group has one liberty


cdef inline uint64_t _mix(uint64_t h, uint64_t x) noexcept nogil:
    # One step of the key's hash: splitmix64's finaliser over the running value and x.
    h ^= x + <uint64_t>0x9E3779B97F4A7C15 + (h << 6) + (h >> 2)
    h ^= h >> 30
    h *= <uint64_t>0xBF58476D1CE4E5B9
    h ^= h >> 27
    h *= <uint64_t>0x94D049BB133111EB
    h ^= h >> 31
    return h


cdef uint64_t bias_key(const BoardState* b) noexcept nogil:
    cdef int n = b.size, nn = b.size * b.size
    cdef int last = b.recent_moves[0], before = b.recent_moves[1]
    cdef int row, col, r, c, m, code
    cdef uint64_t h = _mix(<uint64_t>n, <uint64_t>(BLACK if b.to_move == WHITE else WHITE))
    h = _mix(h, <uint64_t>(last + 2))            # NO_POINT (-1) and PASS (N*N) are keys too
    h = _mix(h, <uint64_t>(before + 2))
    h = _mix(h, <uint64_t>(b.ko_move + 2))
    if 0 <= last < nn:
        row = last // n
        col = last % n
        for r in range(row - PATTERN_RADIUS, row + PATTERN_RADIUS + 1):
            for c in range(col - PATTERN_RADIUS, col + PATTERN_RADIUS + 1):
                if r < 0 or r >= n or c < 0 or c >= n:
                    code = OFF_BOARD_CODE
                else:
                    m = r * n + c
                    code = board_color_at(b, m)
                    if code != 0 and board_libs_at(b, m) == 1:
                        code += ATARI_CODE
                h = _mix(h, <uint64_t>code)
    if h == BIAS_NO_KEY:
        h = 1
    return h


def context_key(Board board not None):
    """The value-bias context of `board`'s position (an int, never 0): equal for positions whose
    last move, the move before, its player, the 5x5 square around it (colours, stones in atari)
    and the ko ban agree (tests, tools)."""
    return int(bias_key(&board.state))


cdef bint bias_table_init(BiasTable* table) noexcept nogil:
    table.entries = <BiasEntry*>calloc(BIAS_TABLE_FIRST, sizeof(BiasEntry))
    table.used = 0
    if table.entries == NULL:
        table.mask = -1
        return 0
    table.mask = BIAS_TABLE_FIRST - 1
    return 1


cdef void bias_table_free(BiasTable* table) noexcept nogil:
    free(table.entries)
    table.entries = NULL
    table.mask = -1
    table.used = 0


cdef void bias_table_clear(BiasTable* table) noexcept nogil:
    if table.entries != NULL and table.used:
        memset(table.entries, 0, (table.mask + 1) * sizeof(BiasEntry))
    table.used = 0


cdef BiasEntry* _probe(BiasEntry* entries, int32_t mask, uint64_t key) noexcept nogil:
    # The slot holding key, or the empty slot where it would go (the table is never full).
    cdef int32_t i = <int32_t>(key & <uint64_t>mask)
    while entries[i].key != BIAS_NO_KEY and entries[i].key != key:
        i = (i + 1) & mask
    return &entries[i]


cdef bint _grow(BiasTable* table) noexcept nogil:
    cdef int32_t cap = (table.mask + 1) * 2, i
    cdef BiasEntry* fresh
    cdef BiasEntry* slot
    if cap > BIAS_TABLE_MAX:
        return 0
    fresh = <BiasEntry*>calloc(cap, sizeof(BiasEntry))
    if fresh == NULL:
        return 0
    for i in range(table.mask + 1):
        if table.entries[i].key != BIAS_NO_KEY:
            slot = _probe(fresh, cap - 1, table.entries[i].key)
            slot[0] = table.entries[i]
    free(table.entries)
    table.entries = fresh
    table.mask = cap - 1
    return 1


cdef BiasEntry* bias_entry(BiasTable* table, uint64_t key, bint insert) noexcept nogil:
    cdef BiasEntry* slot
    if table.entries == NULL:
        return NULL
    slot = _probe(table.entries, table.mask, key)
    if slot.key == key:
        return slot
    if not insert:
        return NULL
    if 2 * (table.used + 1) > table.mask + 1:
        if not _grow(table):
            return NULL
        slot = _probe(table.entries, table.mask, key)
    slot.key = key
    slot.num = 0.0
    slot.den = 0.0
    table.used += 1
    return slot
