# The choice of the played move on a finished search (see move_choice.pxd).
from libc.math cimport exp, log
from libc.stdint cimport int32_t
from fastgo.rng cimport rng_uniform
from fastgo.tree cimport Tree, NO_NODE, UNEXPANDED, FLAG_PENDING
from fastgo.gumbel cimport gumbel_final_child


cdef int choose_root_move(SearchGame* s, double temp, bint resign, float resign_threshold,
                          int resign_consecutive, const GumbelParams* gumbel) noexcept nogil:
    cdef Tree* t = &s.tree
    cdef int32_t first = t.first_child[t.root], k, j, best = NO_NODE
    cdef double total = 0.0, r, w, vmax = 0.0
    cdef int color = s.root_board.to_move, nn = s.root_board.size * s.root_board.size
    if resign and resign_threshold > -1.0 and t.visits[t.root] > 0:
        if t.value_sum[t.root] / t.visits[t.root] < resign_threshold:
            s.low_streak[color] += 1
        else:
            s.low_streak[color] = 0
        if s.low_streak[color] >= resign_consecutive:
            if not s.resign_disabled:
                return RESIGN_MOVE
            if s.would_resign == 0:
                s.would_resign = color
                s.would_resign_move = s.root_board.num_moves
    if first == UNEXPANDED or (t.flags[t.root] & FLAG_PENDING):
        return nn
    k = t.num_children[t.root]
    for j in range(k):
        if t.visits[first + j] > vmax:
            vmax = t.visits[first + j]
    if vmax == 0:
        return nn
    if s.gumbel and gumbel != NULL:
        best = gumbel_final_child(s, gumbel)
        return nn if best == NO_NODE else t.move[best]
    if temp <= 1e-6:
        for j in range(k):
            if best == NO_NODE or t.visits[first + j] > t.visits[best] or (
                    t.visits[first + j] == t.visits[best] and t.prior[first + j] > t.prior[best]):
                best = first + j
        return t.move[best]
    for j in range(k):
        if t.visits[first + j] > 0:
            total += exp((log(t.visits[first + j]) - log(vmax)) / temp)
    r = rng_uniform(&s.rng) * total
    for j in range(k):
        if t.visits[first + j] > 0:
            w = exp((log(t.visits[first + j]) - log(vmax)) / temp)
            best = first + j
            if r < w:
                break
            r -= w
    return t.move[best]


cdef list root_analysis(const Tree* t, int max_pv):
    cdef int32_t first = t.first_child[t.root], j, i, node, c, best
    rows = []
    if first == UNEXPANDED or (t.flags[t.root] & FLAG_PENDING):
        return rows
    for j in range(t.num_children[t.root]):
        c = first + j
        if t.visits[c] == 0:
            continue
        pv = [int(t.move[c])]
        node = c
        while len(pv) < max_pv and t.first_child[node] != UNEXPANDED \
                and not (t.flags[node] & FLAG_PENDING):
            best = NO_NODE
            for i in range(t.num_children[node]):
                if t.visits[t.first_child[node] + i] > 0 and (
                        best == NO_NODE or t.visits[t.first_child[node] + i] > t.visits[best]):
                    best = t.first_child[node] + i
            if best == NO_NODE:
                break
            pv.append(int(t.move[best]))
            node = best
        rows.append({"move": int(t.move[c]), "visits": int(t.visits[c]),
                     "winrate": 0.5 * (1.0 - t.value_sum[c] / t.visits[c]),
                     "prior": float(t.prior[c]), "pv": pv})
    rows.sort(key=lambda row: (-row["visits"], -row["prior"]))
    return rows
