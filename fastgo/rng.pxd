# Seeded random numbers for the kernels: xoshiro256** seeded through splitmix64.
# Header-only (inline) so the board, the playouts and the search share one generator type
# without a Python call. Deterministic for a given seed on every platform.
from libc.stdint cimport uint32_t, uint64_t
from libc.math cimport log, sqrt, pow


cdef struct Rng:
    uint64_t s[4]      # xoshiro256** state; never all zero after rng_seed


cdef inline uint64_t _rotl(uint64_t x, int k) noexcept nogil:
    return (x << k) | (x >> (64 - k))


cdef inline uint64_t _splitmix64(uint64_t* x) noexcept nogil:
    x[0] += <uint64_t>0x9E3779B97F4A7C15
    cdef uint64_t z = x[0]
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EB
    return z ^ (z >> 31)


cdef inline void rng_seed(Rng* r, uint64_t seed) noexcept nogil:
    cdef uint64_t x = seed
    cdef int i
    for i in range(4):
        r.s[i] = _splitmix64(&x)


cdef inline uint64_t rng_next(Rng* r) noexcept nogil:
    cdef uint64_t result = _rotl(r.s[1] * 5, 7) * 9
    cdef uint64_t t = r.s[1] << 17
    r.s[2] ^= r.s[0]
    r.s[3] ^= r.s[1]
    r.s[1] ^= r.s[2]
    r.s[0] ^= r.s[3]
    r.s[2] ^= t
    r.s[3] = _rotl(r.s[3], 45)
    return result


cdef inline uint32_t rng_below(Rng* r, uint32_t n) noexcept nogil:
    # Uniform integer in [0, n) by multiply-shift (Lemire); bias < n / 2**32, fine for n <= 1000.
    return <uint32_t>(((rng_next(r) >> 32) * <uint64_t>n) >> 32)


cdef inline double rng_uniform(Rng* r) noexcept nogil:
    # Uniform double in [0, 1) with 53 random bits.
    return <double>(rng_next(r) >> 11) * (1.0 / 9007199254740992.0)


cdef inline double rng_normal(Rng* r) noexcept nogil:
    # Standard normal by the Marsaglia polar method (one of the pair is discarded).
    cdef double u, v, s
    while True:
        u = 2.0 * rng_uniform(r) - 1.0
        v = 2.0 * rng_uniform(r) - 1.0
        s = u * u + v * v
        if 0.0 < s < 1.0:
            return u * sqrt(-2.0 * log(s) / s)


cdef inline double rng_gamma(Rng* r, double alpha) noexcept nogil:
    # Gamma(alpha, 1) by Marsaglia-Tsang; alpha < 1 boosted with U**(1/alpha).
    cdef double d, c, x, v, u
    if alpha < 1.0:
        u = rng_uniform(r)
        while u <= 0.0:
            u = rng_uniform(r)
        return rng_gamma(r, alpha + 1.0) * pow(u, 1.0 / alpha)
    d = alpha - 1.0 / 3.0
    c = 1.0 / sqrt(9.0 * d)
    while True:
        x = rng_normal(r)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = rng_uniform(r)
        if u < 1.0 - 0.0331 * x * x * x * x:
            return d * v
        if log(u) < 0.5 * x * x + d * (1.0 - v + log(v)):
            return d * v
