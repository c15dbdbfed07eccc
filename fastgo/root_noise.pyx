# The root's Dirichlet noise (see root_noise.pxd).
from libc.stdint cimport int32_t
from fastgo.constants cimport MAX_MOVES
from fastgo.rng cimport Rng, rng_gamma
from fastgo.tree cimport Tree, UNEXPANDED


cdef bint add_dirichlet_noise(Tree* t, Rng* rng, float alpha, float weight) noexcept nogil:
    cdef int32_t first = t.first_child[t.root], k = t.num_children[t.root], j
    cdef double eta[MAX_MOVES]
    cdef double total = 0.0
    cdef double a = alpha
    if first == UNEXPANDED or k == 0:
        return 0
    if a <= 0.0:
        a = 0.03 * 361.0 / k
    for j in range(k):
        eta[j] = rng_gamma(rng, a)
        total += eta[j]
    if total > 0.0:
        for j in range(k):
            t.prior[first + j] = <float>((1.0 - weight) * t.prior[first + j] + weight * eta[j] / total)
    return 1
