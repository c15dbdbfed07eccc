# PUCT selection and backup on a fastgo.tree Tree (see fastgo.mcts for the formula and the sign
# convention: every value is from the side to move at the node it belongs to). The per-descent
# steps are inline here so the batched driver pays no call across modules for them.
from libc.math cimport sqrt, INFINITY
from libc.stdint cimport uint8_t, int32_t
from fastgo.rules cimport BoardState, BLACK
from fastgo.scoring cimport board_score
from fastgo.tree cimport (Tree, NO_NODE, UNEXPANDED, FLAG_PENDING, FLAG_ILLEGAL, FLAG_WIN,
                          FLAG_LOSS)

cdef inline void backup(Tree* t, int32_t node, float value) noexcept nogil:
    # value: from the side to move at `node`. Adds one visit to node and every ancestor up to the
    # root and removes the virtual loss this descent put on them.
    while True:
        t.visits[node] += 1
        t.value_sum[node] += value
        t.virtual_loss[node] -= 1
        if node == t.root:
            return
        node = t.parent[node]
        value = -value


cdef inline void undo_virtual_loss(Tree* t, int32_t node) noexcept nogil:
    while True:
        t.virtual_loss[node] -= 1
        if node == t.root:
            return
        node = t.parent[node]


cdef inline float terminal_value(uint8_t flags) noexcept nogil:
    if flags & FLAG_WIN:
        return 1.0
    if flags & FLAG_LOSS:
        return -1.0
    return 0.0


cdef inline float result_for(const BoardState* b, int color) noexcept nogil:
    # +1 / -1 / 0: Tromp-Taylor result of the (finished or played-out) board for `color`.
    cdef float score = board_score(b)
    if score == 0.0:
        return 0.0
    if (score > 0.0) == (color == BLACK):
        return 1.0
    return -1.0


cdef inline int32_t root_child_visits(const Tree* t) noexcept nogil:
    # Visits held by the root's children: the progress of the current search.
    cdef int32_t first = t.first_child[t.root], j, total = 0
    if first == UNEXPANDED or (t.flags[t.root] & FLAG_PENDING):
        return 0
    for j in range(t.num_children[t.root]):
        total += t.visits[first + j]
    return total


cdef inline int32_t puct_select(const Tree* t, int32_t node, float c_puct, float fpu_reduction,
                                float vl) noexcept nogil:
    # The PUCT child of an expanded node, skipping FLAG_ILLEGAL. One pass: the best visited child
    # by full score, and the unvisited child of highest prior (all unvisited children share the
    # FPU value, so the prior alone ranks them).
    cdef int32_t first = t.first_child[node], k = t.num_children[node], j, c
    cdef int32_t best_visited = NO_NODE, best_unvisited = NO_NODE
    cdef float parent_n = t.visits[node] + vl * (t.virtual_loss[node] - 1)
    cdef float sqrt_n, n_eff, score, best_score = -INFINITY, best_prior = -1.0
    cdef float visited_prior = 0.0, parent_q, fpu
    if parent_n < 1.0:
        parent_n = 1.0
    sqrt_n = sqrt(parent_n)
    for j in range(k):
        c = first + j
        if t.flags[c] & FLAG_ILLEGAL:
            continue
        n_eff = t.visits[c] + vl * t.virtual_loss[c]
        if n_eff > 0.0:
            visited_prior += t.prior[c]
            score = ((-t.value_sum[c] - vl * t.virtual_loss[c]) / n_eff
                     + c_puct * t.prior[c] * sqrt_n / (1.0 + n_eff))
            if score > best_score:
                best_score = score
                best_visited = c
        elif t.prior[c] > best_prior:
            best_prior = t.prior[c]
            best_unvisited = c
    if best_unvisited == NO_NODE:
        return best_visited
    parent_q = t.value_sum[node] / t.visits[node] if t.visits[node] > 0 else 0.0
    fpu = parent_q - fpu_reduction * sqrt(visited_prior)
    if best_visited == NO_NODE or fpu + c_puct * best_prior * sqrt_n > best_score:
        return best_unvisited
    return best_visited
