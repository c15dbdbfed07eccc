# cython: boundscheck=False, wraparound=False, cdivision=True
"""A cache of network evaluations keyed by position up to the board's 8 symmetries.

Self-play evaluates some positions again: the subtree of the move just played is searched a
second time at the next move, games share their openings, cheap searches revisit their leaves.
`NetworkCache` remembers (policy logits, value) per position for one network version.

Keys: a position's planes (uint8 [P, N, N], the encoder's output under whatever symmetry the
search drew) are hashed under each of the 8 symmetries (Zobrist: one random 64-bit word per
plane and point, mixed with the byte's value) and the smallest hash is the key, so every
symmetric copy of a position shares it. `sym` is the symmetry that gives the smallest hash: the
stored logits are in the frame of the planes under `sym` (the canonical frame), and a hit under
another symmetry is read back through its own. The table is direct-mapped (slot = key's low
bits, the newer entry replaces the older); a stored key is compared whole (64 bits), so a wrong
hit needs two different positions with the same 64-bit key.

Per batch: `keys(planes) -> (keys, syms)`, `lookup(keys, syms, logits, values) -> hits` (the
hits' rows written), `store(keys, syms, logits, values, rows)`; `clear()` when the network
changes. All loops run without the GIL; no Python object per position.
"""
import numpy as np

cimport numpy as cnp
from libc.stdint cimport uint8_t, uint64_t, int64_t
from libc.string cimport memset
from fastgo.constants cimport MAX_POINTS
from fastgo.symmetry cimport sym_move

cnp.import_array()

DEF SYMMETRIES = 8
MAX_CAPACITY = 1 << 24


cdef inline uint64_t _mix(uint64_t z) noexcept nogil:
    # splitmix64's finaliser
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EB
    return z ^ (z >> 31)


cdef class NetworkCache:
    """capacity: entries, a power of two (1 .. 2**24); board_size N; planes P (the encoding's).
    Holds capacity * (N*N + 1 + 1) float32 and capacity uint64 keys. Counters: lookups, hits."""

    cdef readonly int capacity, board_size, planes
    cdef readonly int64_t lookups, hits
    cdef uint64_t[::1] _keys
    cdef float[:, ::1] _logits
    cdef float[::1] _values
    cdef uint64_t[:, ::1] _zobrist
    cdef int[:, ::1] _targets

    def __init__(self, int capacity, int board_size, int planes):
        if capacity < 1 or capacity > MAX_CAPACITY or capacity & (capacity - 1):
            raise ValueError(f"capacity must be a power of two in 1..{MAX_CAPACITY}, got {capacity}")
        if board_size < 1 or board_size * board_size > MAX_POINTS:
            raise ValueError(f"board_size must be in 1..{int(MAX_POINTS ** 0.5)}, got {board_size}")
        if planes < 1 or planes > 64:
            raise ValueError(f"planes must be in 1..64, got {planes}")
        self.capacity, self.board_size, self.planes = capacity, board_size, planes
        nn = board_size * board_size
        self._keys = np.zeros(capacity, np.uint64)         # 0: empty (a key is never 0)
        self._logits = np.zeros((capacity, nn + 1), np.float32)
        self._values = np.zeros(capacity, np.float32)
        rng = np.random.default_rng(0x5EED_CAC4E)
        self._zobrist = rng.integers(1, 2 ** 63, size=(planes, nn), dtype=np.uint64) * 2 + 1
        self._targets = np.array([[_target(m, board_size, s) for m in range(nn)]
                                  for s in range(SYMMETRIES)], np.intc)
        self.lookups = 0
        self.hits = 0

    def clear(self):
        """Forgets every entry (the network changed); the counters stay."""
        with nogil:
            memset(&self._keys[0], 0, self.capacity * sizeof(uint64_t))

    def _check_planes(self, planes):
        n = self.board_size
        if planes.ndim != 4 or planes.shape[1] != self.planes or planes.shape[2] != n \
                or planes.shape[3] != n:
            raise ValueError(f"planes have shape {tuple(planes.shape)}, expected "
                             f"(rows, {self.planes}, {n}, {n})")

    def keys(self, const uint8_t[:, :, :, ::1] planes not None):
        """(keys uint64 [rows], syms uint8 [rows]): each row's key and the symmetry that takes
        its planes to the canonical frame."""
        self._check_planes(planes)
        cdef int rows = planes.shape[0], n = self.board_size, nn = n * n, p = self.planes
        cdef cnp.ndarray[uint64_t, ndim=1] keys = np.empty(rows, np.uint64)
        cdef cnp.ndarray[uint8_t, ndim=1] syms = np.empty(rows, np.uint8)
        cdef uint64_t[::1] kv = keys
        cdef uint8_t[::1] sv = syms
        cdef int r, k, m, s, best
        cdef uint64_t h[SYMMETRIES]
        cdef uint64_t z
        cdef uint8_t v
        cdef const uint8_t* row
        with nogil:
            for r in range(rows):
                row = &planes[r, 0, 0, 0]
                for s in range(SYMMETRIES):
                    h[s] = 0
                for k in range(p):
                    for m in range(nn):
                        v = row[k * nn + m]
                        if v == 0:
                            continue
                        for s in range(SYMMETRIES):
                            z = self._zobrist[k, self._targets[s, m]]
                            if v != 1:
                                z = _mix(z + v)
                            h[s] ^= z
                best = 0
                for s in range(1, SYMMETRIES):
                    if h[s] < h[best]:
                        best = s
                kv[r] = _mix(h[best]) | 1
                sv[r] = best
        return keys, syms

    def lookup(self, const uint64_t[::1] keys not None, const uint8_t[::1] syms not None,
               float[:, ::1] logits not None, float[::1] values not None):
        """Rows whose key is stored get their logits (in their own frame) and value written;
        returns hits uint8 [rows] (1: written)."""
        cdef int rows = keys.shape[0], n = self.board_size, nn = n * n, r, m, s
        self._check_rows(rows, syms, logits, values)
        cdef cnp.ndarray[uint8_t, ndim=1] hits = np.zeros(rows, np.uint8)
        cdef uint8_t[::1] hv = hits
        cdef uint64_t mask = self.capacity - 1, slot
        cdef int64_t found = 0
        with nogil:
            for r in range(rows):
                slot = keys[r] & mask
                if self._keys[slot] != keys[r]:
                    continue
                s = syms[r]
                for m in range(nn):
                    logits[r, m] = self._logits[slot, self._targets[s, m]]
                logits[r, nn] = self._logits[slot, nn]
                values[r] = self._values[slot]
                hv[r] = 1
                found += 1
        self.lookups += rows
        self.hits += found
        return hits

    def store(self, const uint64_t[::1] keys not None, const uint8_t[::1] syms not None,
              const float[:, ::1] logits not None, const float[::1] values not None):
        """Stores every row (logits in the row's own frame), replacing what held its slot."""
        cdef int rows = keys.shape[0], n = self.board_size, nn = n * n, r, m, s
        self._check_rows(rows, syms, logits, values)
        cdef uint64_t mask = self.capacity - 1, slot
        with nogil:
            for r in range(rows):
                slot = keys[r] & mask
                s = syms[r]
                for m in range(nn):
                    self._logits[slot, self._targets[s, m]] = logits[r, m]
                self._logits[slot, nn] = logits[r, nn]
                self._values[slot] = values[r]
                self._keys[slot] = keys[r]

    def _check_rows(self, int rows, syms, logits, values):
        nn = self.board_size * self.board_size
        if syms.shape[0] != rows or values.shape[0] != rows or logits.shape[0] != rows \
                or logits.shape[1] != nn + 1:
            raise ValueError(f"{rows} keys need syms [{rows}], logits [{rows}, {nn + 1}] and "
                             f"values [{rows}]; got {syms.shape[0]}, "
                             f"{tuple(logits.shape)[:2]}, {values.shape[0]}")
        if rows and int(np.max(syms)) >= SYMMETRIES:
            raise ValueError(f"symmetry must be 0..7, got {int(np.max(syms))}")


def _target(int m, int n, int sym):
    return sym_move(m, n, sym)
