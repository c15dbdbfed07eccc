# The 8 symmetries of the square board (D4) for feature planes and policy vectors.
# sym = 4 * transpose + 2 * mirror_columns + flip_rows, applied in that order: transpose first,
# then flip rows (r -> N-1-r) if bit 0, then mirror columns (c -> N-1-c) if bit 1.
import numpy as np

cimport numpy as cnp
from libc.stdint cimport uint8_t, int16_t
from fastgo.constants cimport MAX_SIZE, MAX_POINTS

cnp.import_array()

NUM_SYMMETRIES = 8


cdef int sym_inverse(int sym) noexcept nogil:
    # Without transpose the flips are involutions that commute. With it, T(r, c) = (f0(c), f1(r))
    # is undone by transposing and then applying the flips swapped: bits 0 and 1 trade places.
    if (sym & 4) and ((sym & 3) == 1 or (sym & 3) == 2):
        return sym ^ 3
    return sym


cdef int sym_move(int move, int n, int sym) noexcept nogil:
    cdef int r = move // n, c = move % n, t
    if sym & 4:
        t = r
        r = c
        c = t
    if sym & 1:
        r = n - 1 - r
    if sym & 2:
        c = n - 1 - c
    return r * n + c


cdef void sym_planes(const uint8_t* src, uint8_t* dst, int planes, int n, int sym) noexcept nogil:
    cdef int16_t target[MAX_POINTS]
    cdef int nn = n * n, m, p
    cdef const uint8_t* s
    cdef uint8_t* d
    for m in range(nn):
        target[m] = sym_move(m, n, sym)
    for p in range(planes):
        s = src + p * nn
        d = dst + p * nn
        for m in range(nn):
            d[target[m]] = s[m]


cdef void sym_policy(const float* src, float* dst, int n, int sym) noexcept nogil:
    cdef int nn = n * n, m
    for m in range(nn):
        dst[sym_move(m, n, sym)] = src[m]
    dst[nn] = src[nn]


def _check_sym(sym):
    if not 0 <= sym < NUM_SYMMETRIES:
        raise ValueError(f"symmetry must be 0..7, got {sym!r}")


def inverse(int sym):
    """The symmetry that undoes `sym`."""
    _check_sym(sym)
    return sym_inverse(sym)


def transform_move(int move, int n, int sym):
    """Where board point `move` goes under `sym` (the pass, n * n, stays)."""
    _check_sym(sym)
    if move == n * n:
        return move
    if not 0 <= move < n * n:
        raise ValueError(f"move {move} is off a {n}x{n} board")
    return sym_move(move, n, sym)


def permutation(int n, int sym):
    """int64 array perm with perm[m] = the point m goes to, over the N * N board points."""
    _check_sym(sym)
    return np.array([sym_move(m, n, sym) for m in range(n * n)], dtype=np.int64)


def transform_planes(arr, int sym):
    """Applies `sym` to (P, N, N) or (N, N) planes: out[..., T(m)] = arr[..., m]. Any dtype;
    uint8 runs the C kernel."""
    _check_sym(sym)
    a = np.asarray(arr)
    if a.ndim not in (2, 3) or a.shape[a.ndim - 1] != a.shape[a.ndim - 2]:
        raise ValueError(f"expected (P, N, N) or (N, N) planes, got shape {a.shape}")
    cdef int n = a.shape[a.ndim - 1]
    if n > MAX_SIZE:
        raise ValueError(f"board side {n} is above {MAX_SIZE}")
    cdef int planes = 1 if a.ndim == 2 else a.shape[0]
    cdef const uint8_t[:, :, ::1] src
    cdef uint8_t[:, :, ::1] dst
    if a.dtype == np.uint8:
        src = np.ascontiguousarray(a).reshape(planes, n, n)
        out = np.empty((planes, n, n), dtype=np.uint8)
        dst = out
        if planes > 0:
            with nogil:
                sym_planes(&src[0, 0, 0], &dst[0, 0, 0], planes, n, sym)
        return out.reshape(a.shape)
    flat = a.reshape(planes, n * n)
    out = np.empty_like(flat)
    out[:, permutation(n, sym)] = flat
    return out.reshape(a.shape)


def transform_policy(vec, int n, int sym):
    """Applies `sym` to a policy vector of N * N + 1 entries (pass last, unchanged). float32
    runs the C kernel; other dtypes keep their dtype."""
    _check_sym(sym)
    v = np.asarray(vec)
    if v.ndim != 1 or v.shape[0] != n * n + 1:
        raise ValueError(f"expected a policy vector of {n * n + 1} entries, got shape {v.shape}")
    if n > MAX_SIZE or n < 1:
        raise ValueError(f"board side must be 1..{MAX_SIZE}, got {n}")
    cdef const float[::1] src
    cdef float[::1] dst
    if v.dtype == np.float32:
        src = np.ascontiguousarray(v)
        out = np.empty(n * n + 1, dtype=np.float32)
        dst = out
        with nogil:
            sym_policy(&src[0], &dst[0], n, sym)
        return out
    out = np.empty_like(v)
    out[permutation(n, sym)] = v[: n * n]
    out[n * n] = v[n * n]
    return out
