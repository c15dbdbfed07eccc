# The positions a game has been through, for positional superko: one history the game
# (fastgo.game), the search (fastgo.mcts), policy play (fastgo.policy_play) and replay
# (fastgo.replay) share. Positions are 64-bit Zobrist hashes of the stones (whoever is to move).
#
# Storage is fixed at history_init: a ring of `cap` hashes in push order plus an open-addressing
# set (linear probing, at most half full) counting each hash's occurrences in the ring. Lookups,
# pushes and pops are O(1) expected; memory is O(cap); no Python object per position. A push onto
# a full history drops its oldest position first (the window keeps the `cap` newest).
from libc.stdint cimport uint64_t, int32_t

cdef struct History:
    uint64_t* ring           # [cap] hashes in push order: ring[(head + i) % cap], i < length
    uint64_t* keys           # [mask + 1] set of the hashes != 0 in the ring; 0 = empty slot
    int32_t* counts          # [mask + 1] occurrences of keys[i] in the ring (0 where empty)
    int32_t zero_count       # occurrences of the hash 0 (kept apart: 0 marks an empty slot)
    int32_t head             # ring index of the oldest position
    int32_t length           # positions held, 0..cap
    int32_t cap              # most positions held
    int32_t mask             # slots - 1; slots is a power of two >= 2 * cap

# Allocates room for `cap` (>= 1) positions, empty; 0 when out of memory (nothing allocated).
cdef bint history_init(History* h, int32_t cap) noexcept nogil
# Frees what history_init allocated; the struct reads as empty with cap 0 afterwards.
cdef void history_free(History* h) noexcept nogil
# Empties the history (cap kept).
cdef void history_clear(History* h) noexcept nogil
# Appends `key` as the newest position (dropping the oldest first when full).
cdef void history_push(History* h, uint64_t key) noexcept nogil
# Removes and returns the newest position; 0 when empty (check length first).
cdef uint64_t history_pop(History* h) noexcept nogil
# Whether `key` is a position of the history.
cdef bint history_contains(const History* h, uint64_t key) noexcept nogil
# The positional-superko test of a search descent: whether `key` is a position of the history or
# one of path[0 .. depth) (the positions of the current descent, root first).
cdef bint history_repeats(const History* h, const uint64_t* path, int depth,
                          uint64_t key) noexcept nogil
