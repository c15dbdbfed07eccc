# Positional superko's one store of earlier positions (see history.pxd), and PositionHistory, its
# Python view for fastgo.game.Game.
import numpy as np

cimport numpy as cnp
from libc.stdint cimport uint8_t, uint64_t, int32_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcpy, memset

from fastgo.board cimport Board
from fastgo.rules cimport BoardState, board_play_copy, board_position_hash

cnp.import_array()


cdef bint history_init(History* h, int32_t cap) noexcept nogil:
    cdef int32_t slots = 2
    memset(h, 0, sizeof(History))
    if cap < 1:
        return 0
    while slots < 2 * cap:
        slots <<= 1
    h.ring = <uint64_t*>calloc(cap, sizeof(uint64_t))
    h.keys = <uint64_t*>calloc(slots, sizeof(uint64_t))
    h.counts = <int32_t*>calloc(slots, sizeof(int32_t))
    if h.ring == NULL or h.keys == NULL or h.counts == NULL:
        history_free(h)
        return 0
    h.cap = cap
    h.mask = slots - 1
    return 1


cdef void history_free(History* h) noexcept nogil:
    free(h.ring)
    free(h.keys)
    free(h.counts)
    memset(h, 0, sizeof(History))


cdef void history_clear(History* h) noexcept nogil:
    if h.cap == 0:
        return
    memset(h.keys, 0, (h.mask + 1) * sizeof(uint64_t))
    memset(h.counts, 0, (h.mask + 1) * sizeof(int32_t))
    h.zero_count = 0
    h.head = 0
    h.length = 0


cdef inline int32_t _slot(const History* h, uint64_t key) noexcept nogil:
    # The slot holding key (!= 0), or the empty slot where it would go.
    cdef int32_t i = <int32_t>(key & <uint64_t>h.mask)
    while h.keys[i] != 0 and h.keys[i] != key:
        i = (i + 1) & h.mask
    return i


cdef void _add(History* h, uint64_t key) noexcept nogil:
    cdef int32_t i
    if key == 0:
        h.zero_count += 1
        return
    i = _slot(h, key)
    h.keys[i] = key
    h.counts[i] += 1


cdef void _remove(History* h, uint64_t key) noexcept nogil:
    # One occurrence of key (present) out of the set; an emptied slot is refilled by backward
    # shifting so that every probe chain stays unbroken.
    cdef int32_t i, j, home
    if key == 0:
        h.zero_count -= 1
        return
    i = _slot(h, key)
    h.counts[i] -= 1
    if h.counts[i] > 0:
        return
    j = i
    while True:
        j = (j + 1) & h.mask
        if h.keys[j] == 0:
            break
        home = <int32_t>(h.keys[j] & <uint64_t>h.mask)
        if ((j - home) & h.mask) >= ((j - i) & h.mask):
            h.keys[i] = h.keys[j]
            h.counts[i] = h.counts[j]
            i = j
    h.keys[i] = 0
    h.counts[i] = 0


cdef void history_push(History* h, uint64_t key) noexcept nogil:
    if h.cap == 0:
        return
    if h.length == h.cap:
        _remove(h, h.ring[h.head])
        h.head = (h.head + 1) % h.cap
        h.length -= 1
    h.ring[(h.head + h.length) % h.cap] = key
    h.length += 1
    _add(h, key)


cdef uint64_t history_pop(History* h) noexcept nogil:
    cdef uint64_t key
    if h.length == 0:
        return 0
    h.length -= 1
    key = h.ring[(h.head + h.length) % h.cap]
    _remove(h, key)
    return key


cdef bint history_contains(const History* h, uint64_t key) noexcept nogil:
    if h.length == 0:
        return 0
    if key == 0:
        return h.zero_count > 0
    return h.keys[_slot(h, key)] == key


cdef bint history_repeats(const History* h, const uint64_t* path, int depth,
                          uint64_t key) noexcept nogil:
    cdef int i
    for i in range(depth):
        if path[i] == key:
            return 1
    return history_contains(h, key)


cdef class PositionHistory:
    """The earlier positions of one game (64-bit positional hashes, oldest first), at most
    `capacity` of them; `hash in history` is the positional-superko test.

    PositionHistory(capacity): push(hash) appends (OverflowError when full: a game's positions
    are bounded by its move cap, so a full history is a caller's error; window=True drops the
    oldest instead), pop() removes and returns
    the newest (IndexError when empty), clear(), len(), count(hash), hashes() (a list, oldest
    first), copy(), strike_repeats(board, mask)."""

    cdef History h

    def __cinit__(self, int capacity):
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity}")
        if not history_init(&self.h, capacity):
            raise MemoryError()

    def __dealloc__(self):
        history_free(&self.h)

    @property
    def capacity(self):
        return self.h.cap

    def __len__(self):
        return self.h.length

    def push(self, key, *, bint window=False):
        """Appends `key` as the newest position; when full, OverflowError, or with window=True
        the oldest position is dropped first (the search keeps such a window)."""
        if self.h.length == self.h.cap and not window:
            raise OverflowError(f"position history is full ({self.h.cap} positions)")
        history_push(&self.h, <uint64_t>(int(key) & 0xFFFFFFFFFFFFFFFF))

    def pop(self):
        if self.h.length == 0:
            raise IndexError("pop from an empty position history")
        return history_pop(&self.h)

    def clear(self):
        history_clear(&self.h)

    def __contains__(self, key):
        try:
            k = int(key)
        except (TypeError, ValueError):
            return False
        if not 0 <= k <= 0xFFFFFFFFFFFFFFFF:
            return False
        return history_contains(&self.h, <uint64_t>k)

    def count(self, key):
        """Occurrences of `key` among the positions held."""
        cdef uint64_t k = <uint64_t>(int(key) & 0xFFFFFFFFFFFFFFFF)
        if k == 0:
            return self.h.zero_count
        cdef int32_t i = _slot(&self.h, k)
        return self.h.counts[i] if self.h.keys[i] == k else 0

    def hashes(self):
        """The positions held, oldest first (Python ints)."""
        cdef int32_t i
        return [self.h.ring[(self.h.head + i) % self.h.cap] for i in range(self.h.length)]

    def copy(self):
        cdef PositionHistory other = PositionHistory(self.h.cap)
        memcpy(other.h.ring, self.h.ring, self.h.cap * sizeof(uint64_t))
        memcpy(other.h.keys, self.h.keys, (self.h.mask + 1) * sizeof(uint64_t))
        memcpy(other.h.counts, self.h.counts, (self.h.mask + 1) * sizeof(int32_t))
        other.h.zero_count = self.h.zero_count
        other.h.head = self.h.head
        other.h.length = self.h.length
        return other

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    def __reduce__(self):
        return (_from_hashes, (self.h.cap, self.hashes()))

    def strike_repeats(self, Board board not None, cnp.uint8_t[::1] mask not None):
        """Clears mask[m] for each board point m whose move on `board` is illegal or recreates a
        position held here (positional superko), in one pass; the pass entry is left alone."""
        cdef BoardState tmp
        cdef int m, nn = board.state.size * board.state.size
        if mask.shape[0] != nn + 1:
            raise ValueError(f"mask has {mask.shape[0]} entries, expected {nn + 1}")
        with nogil:
            for m in range(nn):
                if not mask[m]:
                    continue
                if (not board_play_copy(&board.state, m, &tmp)
                        or history_contains(&self.h, board_position_hash(&tmp))):
                    mask[m] = 0


def _from_hashes(capacity, hashes):
    # A PositionHistory of `capacity` holding `hashes`, oldest first (copy and pickle support).
    history = PositionHistory(capacity)
    for key in hashes:
        history.push(key)
    return history
