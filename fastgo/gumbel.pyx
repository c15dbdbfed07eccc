"""Gumbel root search: the formulas of Danihelka et al. (ICLR 2022) on one node's children.

The C functions (see gumbel.pxd) work on the contiguous child arrays of a fastgo.tree Tree; the
batched search (fastgo.mcts, `search="gumbel"`) calls them at the root and fastgo.move_choice for the
move played. The Python functions below run the very same C code on plain arrays, for tests and
tools:

    schedule(m, n)                               sequential halving: considered visit per simulation
    mixed(prior, visits, q, raw)                 v_mix (eq. 10)
    sigma(prior, visits, q, raw, c_visit=50, c_scale=1, rescale=False)
    improved(prior, visits, q, raw, ...)         softmax(log prior + sigma(completed q))
    select(base, sigma, count, want)             the child the next simulation takes

q is the parent's view (q = -value_sum / visits in the tree); `legal` (bool per child, default
all) marks the children that are moves.
"""
import numpy as np

from libc.math cimport log, exp, ceil, log2, INFINITY
from libc.stdint cimport uint8_t, int32_t
from libc.stdlib cimport malloc, free

from fastgo.rng cimport rng_uniform
from fastgo.tree cimport Tree, NO_NODE, UNEXPANDED, FLAG_ILLEGAL, FLAG_PENDING

cdef float _TINY_PRIOR = 1e-30
cdef float _RESCALE_EPS = 1e-8


cdef inline bint _legal(const uint8_t* flags, int j) noexcept nogil:
    return flags == NULL or not (flags[j] & FLAG_ILLEGAL)


cdef int32_t halving_visit(int32_t m, int32_t n, int32_t i) noexcept nogil:
    cdef int32_t phases, considered, extra, pos = 0, base = 0
    cdef long long block
    if m <= 1:
        return i
    phases = <int32_t>ceil(log2(<double>m))
    considered = m
    while True:
        extra = n // (phases * considered)
        if extra < 1:
            extra = 1
        block = <long long>extra * considered
        if i < pos + block:
            return base + <int32_t>((i - pos) // considered)
        pos += <int32_t>block
        base += extra
        considered = considered // 2
        if considered < 2:
            considered = 2


cdef float mixed_value(const float* prior, const int32_t* visits, const float* value_sum,
                       const uint8_t* flags, int k, float raw_value) noexcept nogil:
    cdef int j
    cdef double sum_n = 0.0, sum_p = 0.0, weighted = 0.0, p
    for j in range(k):
        if visits[j] > 0 and _legal(flags, j):
            p = prior[j] if prior[j] > _TINY_PRIOR else _TINY_PRIOR
            sum_n += visits[j]
            sum_p += p
            weighted += p * (-value_sum[j] / visits[j])
    if sum_n == 0.0:
        return raw_value
    return <float>((raw_value + sum_n * weighted / sum_p) / (sum_n + 1.0))


cdef void sigma_completed(const float* prior, const int32_t* visits, const float* value_sum,
                          const uint8_t* flags, int k, float raw_value, const GumbelParams* p,
                          float* out) noexcept nogil:
    cdef int j
    cdef int32_t max_n = 0
    cdef float vmix = mixed_value(prior, visits, value_sum, flags, k, raw_value)
    cdef float lo = INFINITY, hi = -INFINITY, span, scale
    for j in range(k):
        if not _legal(flags, j):
            out[j] = 0.0
            continue
        out[j] = -value_sum[j] / visits[j] if visits[j] > 0 else vmix
        if visits[j] > max_n:
            max_n = visits[j]
        if out[j] < lo:
            lo = out[j]
        if out[j] > hi:
            hi = out[j]
    scale = (p.c_visit + max_n) * p.c_scale
    span = hi - lo
    if span < _RESCALE_EPS:
        span = _RESCALE_EPS
    for j in range(k):
        if not _legal(flags, j):
            continue
        if p.rescale:
            out[j] = (out[j] - lo) / span
        else:
            out[j] = 0.5 * (out[j] + 1.0)      # a value in [-1, 1] as a win probability
        out[j] = scale * out[j]


cdef void improved_policy(const float* prior, const int32_t* visits, const float* value_sum,
                          const uint8_t* flags, int k, float raw_value, const GumbelParams* p,
                          float* out) noexcept nogil:
    cdef int j
    cdef double mx = -INFINITY, total = 0.0
    sigma_completed(prior, visits, value_sum, flags, k, raw_value, p, out)
    for j in range(k):
        if _legal(flags, j):
            out[j] = log(prior[j] if prior[j] > _TINY_PRIOR else _TINY_PRIOR) + out[j]
            if out[j] > mx:
                mx = out[j]
    for j in range(k):
        if _legal(flags, j):
            out[j] = <float>exp(out[j] - mx)
            total += out[j]
        else:
            out[j] = 0.0
    if total > 0.0:
        for j in range(k):
            out[j] = <float>(out[j] / total)


cdef int argmax_at_count(const float* base, const float* sigma, const int32_t* count,
                         const uint8_t* flags, int k, int32_t want) noexcept nogil:
    cdef int j, best = -1, best_any = -1
    cdef float score, best_score = -INFINITY, best_any_score = -INFINITY
    for j in range(k):
        if not _legal(flags, j):
            continue
        score = base[j] + sigma[j]
        if best_any < 0 or score > best_any_score:
            best_any, best_any_score = j, score
        if count[j] == want and (best < 0 or score > best_score):
            best, best_score = j, score
    return best if best >= 0 else best_any


cdef int32_t gumbel_select_root(SearchGame* s, const GumbelParams* p) noexcept nogil:
    cdef Tree* t = &s.tree
    cdef int32_t root = t.root, first = t.first_child[root], i = 0, want
    cdef int k = t.num_children[root], j
    if first == UNEXPANDED or k == 0:
        return NO_NODE
    for j in range(k):
        s.gumbel_count[j] = t.visits[first + j] + t.virtual_loss[first + j]
        i += s.gumbel_count[j]
    if i >= s.target:
        i = s.target - 1 if s.target > 0 else 0
    want = halving_visit(s.gumbel_m, s.target, i)
    sigma_completed(t.prior + first, t.visits + first, t.value_sum + first, t.flags + first, k,
                    s.root_raw_value, p, s.gumbel_sigma)
    j = argmax_at_count(s.gumbel_base, s.gumbel_sigma, s.gumbel_count, t.flags + first, k, want)
    return NO_NODE if j < 0 else first + j


cdef int32_t gumbel_final_child(SearchGame* s, const GumbelParams* p) noexcept nogil:
    cdef Tree* t = &s.tree
    cdef int32_t root = t.root, first = t.first_child[root], max_n = 0
    cdef int k = t.num_children[root], j
    if first == UNEXPANDED or k == 0 or (t.flags[root] & FLAG_PENDING):
        return NO_NODE
    for j in range(k):
        if t.visits[first + j] > max_n and not (t.flags[first + j] & FLAG_ILLEGAL):
            max_n = t.visits[first + j]
    if max_n == 0:
        return NO_NODE
    sigma_completed(t.prior + first, t.visits + first, t.value_sum + first, t.flags + first, k,
                    s.root_raw_value, p, s.gumbel_sigma)
    j = argmax_at_count(s.gumbel_base, s.gumbel_sigma, t.visits + first, t.flags + first, k, max_n)
    return NO_NODE if j < 0 else first + j


cdef void gumbel_prepare_root(SearchGame* s, int32_t considered, float scale) noexcept nogil:
    cdef Tree* t = &s.tree
    cdef int32_t first = t.first_child[t.root]
    cdef int k = t.num_children[t.root], j, legal = 0
    cdef double u
    cdef float pr
    for j in range(k):
        u = rng_uniform(&s.rng)
        if u < 1e-12:
            u = 1e-12
        elif u > 1.0 - 1e-12:
            u = 1.0 - 1e-12
        s.gumbel_noise[j] = <float>(scale * -log(-log(u)))
        pr = t.prior[first + j]
        s.gumbel_base[j] = s.gumbel_noise[j] + <float>log(pr if pr > _TINY_PRIOR else _TINY_PRIOR)
        if not (t.flags[first + j] & FLAG_ILLEGAL):
            legal += 1
    s.gumbel_m = considered if considered < legal else legal
    s.gumbel_ready = 1


# ---------------------------------------------------------------------------------------------
# The same code on plain arrays (tests, tools).

def _children(prior, visits, q, legal):
    prior = np.ascontiguousarray(prior, dtype=np.float32)
    k = prior.shape[0]
    visits = np.ascontiguousarray(visits, dtype=np.int32)
    q = np.ascontiguousarray(q, dtype=np.float32)
    if visits.shape != (k,) or q.shape != (k,):
        raise ValueError(f"prior, visits and q must have the same length, got {k}, "
                         f"{visits.shape}, {q.shape}")
    value_sum = np.ascontiguousarray(-q * visits, dtype=np.float32)
    flags = np.zeros(k, dtype=np.uint8)
    if legal is not None:
        flags[~np.asarray(legal, dtype=bool)] = FLAG_ILLEGAL
    return prior, visits, value_sum, flags, k


cdef GumbelParams _params(float c_visit, float c_scale, bint rescale):
    cdef GumbelParams p
    p.c_visit, p.c_scale, p.rescale = c_visit, c_scale, rescale
    return p


def schedule(int m, int n):
    """int32 [n]: for each simulation i, the visit count an action must have to receive it."""
    out = np.empty(max(n, 0), dtype=np.int32)
    cdef int32_t[::1] o = out
    cdef int i
    for i in range(n):
        o[i] = halving_visit(m, n, i)
    return out


def mixed(prior, visits, q, float raw_value, legal=None):
    """v_mix of the children (q: parent's view)."""
    prior, visits, value_sum, flags, k = _children(prior, visits, q, legal)
    cdef float[::1] p = prior, v = value_sum
    cdef int32_t[::1] n = visits
    cdef uint8_t[::1] f = flags
    if k == 0:
        return float(raw_value)
    return float(mixed_value(&p[0], &n[0], &v[0], &f[0], k, raw_value))


def _per_child(bint policy, prior, visits, q, float raw_value, float c_visit, float c_scale,
               bint rescale, legal):
    prior, visits, value_sum, flags, k = _children(prior, visits, q, legal)
    out = np.zeros(k, dtype=np.float32)
    cdef float[::1] p = prior, v = value_sum, o = out
    cdef int32_t[::1] n = visits
    cdef uint8_t[::1] f = flags
    cdef GumbelParams par = _params(c_visit, c_scale, rescale)
    if k and policy:
        improved_policy(&p[0], &n[0], &v[0], &f[0], k, raw_value, &par, &o[0])
    elif k:
        sigma_completed(&p[0], &n[0], &v[0], &f[0], k, raw_value, &par, &o[0])
    return out


def sigma(prior, visits, q, float raw_value, float c_visit=50.0, float c_scale=1.0,
          bint rescale=False, legal=None):
    """float32 [k]: sigma(completed q) per child (0 where not legal)."""
    return _per_child(False, prior, visits, q, raw_value, c_visit, c_scale, rescale, legal)


def improved(prior, visits, q, float raw_value, float c_visit=50.0, float c_scale=1.0,
             bint rescale=False, legal=None):
    """float32 [k]: softmax(log prior + sigma(completed q)) over the legal children."""
    return _per_child(True, prior, visits, q, raw_value, c_visit, c_scale, rescale, legal)


def select(base, sigma_values, count, int want, legal=None):
    """Index of the legal child maximising base + sigma among those with count == want (among
    all legal children where none has it); -1 if none is legal."""
    b = np.ascontiguousarray(base, dtype=np.float32)
    s = np.ascontiguousarray(sigma_values, dtype=np.float32)
    c = np.ascontiguousarray(count, dtype=np.int32)
    k = b.shape[0]
    if s.shape != (k,) or c.shape != (k,):
        raise ValueError("base, sigma and count must have the same length")
    flags = np.zeros(k, dtype=np.uint8)
    if legal is not None:
        flags[~np.asarray(legal, dtype=bool)] = FLAG_ILLEGAL
    cdef float[::1] bv = b, sv = s
    cdef int32_t[::1] cv = c
    cdef uint8_t[::1] fv = flags
    if k == 0:
        return -1
    return int(argmax_at_count(&bv[0], &sv[0], &cv[0], &fv[0], k, want))
