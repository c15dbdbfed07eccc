# The 8 symmetries of the square board (dihedral group D4), for planes and policy vectors.
# sym 0 is the identity; sym_inverse(s) undoes s. Policy vectors are N*N + 1 long, pass fixed.
from libc.stdint cimport uint8_t

cdef int sym_inverse(int sym) noexcept nogil
# The move index that `move` (a board point, not PASS) goes to under `sym` on an N x N board.
cdef int sym_move(int move, int n, int sym) noexcept nogil
# dst[p, T(m)] = src[p, m] for `planes` planes of N x N bytes.
cdef void sym_planes(const uint8_t* src, uint8_t* dst, int planes, int n, int sym) noexcept nogil
# dst[T(m)] = src[m] for m < N*N, dst[N*N] = src[N*N].
cdef void sym_policy(const float* src, float* dst, int n, int sym) noexcept nogil
