# Search-tree node storage (see tree.pxd): growth by doubling, freeing, compaction.
from libc.stdint cimport uint8_t, int16_t, int32_t, uint64_t
from libc.stdlib cimport realloc, free
from libc.string cimport memcpy, memset


cdef int grow_arrays(void** arrays, const size_t* item_sizes, int count, int32_t* capacity,
                     int32_t needed, int32_t max_nodes) noexcept nogil:
    cdef int32_t cap = capacity[0]
    cdef int i
    cdef void* p
    if needed <= cap:
        return 1
    if needed > max_nodes:
        return 0
    if cap < TREE_INITIAL_NODES:
        cap = TREE_INITIAL_NODES
    while cap < needed:
        cap = cap * 2
    if cap > max_nodes:
        cap = max_nodes
    # Each realloc keeps the old contents; a failure leaves that array (and capacity) as it was.
    for i in range(count):
        p = realloc((<void**>arrays[i])[0], cap * item_sizes[i])
        if p == NULL:
            return 0
        (<void**>arrays[i])[0] = p
    capacity[0] = cap
    return 1


cdef int tree_reserve(Tree* t, int32_t needed, int32_t max_nodes) noexcept nogil:
    cdef void* arrays[14]
    cdef size_t sizes[14]
    if needed <= t.capacity:
        return 1
    arrays[0] = &t.parent;        sizes[0] = sizeof(int32_t)
    arrays[1] = &t.first_child;   sizes[1] = sizeof(int32_t)
    arrays[2] = &t.num_children;  sizes[2] = sizeof(int16_t)
    arrays[3] = &t.move;          sizes[3] = sizeof(int16_t)
    arrays[4] = &t.prior;         sizes[4] = sizeof(float)
    arrays[5] = &t.visits;        sizes[5] = sizeof(int32_t)
    arrays[6] = &t.value_sum;     sizes[6] = sizeof(float)
    arrays[7] = &t.virtual_loss;  sizes[7] = sizeof(int32_t)
    arrays[8] = &t.flags;         sizes[8] = sizeof(uint8_t)
    arrays[9] = &t.bias_key;      sizes[9] = sizeof(uint64_t)
    arrays[10] = &t.raw_value;    sizes[10] = sizeof(float)
    arrays[11] = &t.own_value;    sizes[11] = sizeof(float)
    arrays[12] = &t.bias_num;     sizes[12] = sizeof(float)
    arrays[13] = &t.bias_den;     sizes[13] = sizeof(float)
    return grow_arrays(arrays, sizes, 14 if t.with_bias else 9, &t.capacity, needed, max_nodes)


cdef void tree_free(Tree* t) noexcept nogil:
    free(t.parent)
    free(t.first_child)
    free(t.num_children)
    free(t.move)
    free(t.prior)
    free(t.visits)
    free(t.value_sum)
    free(t.virtual_loss)
    free(t.flags)
    free(t.bias_key)
    free(t.raw_value)
    free(t.own_value)
    free(t.bias_num)
    free(t.bias_den)
    memset(t, 0, sizeof(Tree))


cdef inline void _copy_nodes(Tree* dst, int32_t d, const Tree* src, int32_t s, int32_t k) noexcept nogil:
    memcpy(&dst.parent[d], &src.parent[s], k * sizeof(int32_t))
    memcpy(&dst.first_child[d], &src.first_child[s], k * sizeof(int32_t))
    memcpy(&dst.num_children[d], &src.num_children[s], k * sizeof(int16_t))
    memcpy(&dst.move[d], &src.move[s], k * sizeof(int16_t))
    memcpy(&dst.prior[d], &src.prior[s], k * sizeof(float))
    memcpy(&dst.visits[d], &src.visits[s], k * sizeof(int32_t))
    memcpy(&dst.value_sum[d], &src.value_sum[s], k * sizeof(float))
    memcpy(&dst.virtual_loss[d], &src.virtual_loss[s], k * sizeof(int32_t))
    memcpy(&dst.flags[d], &src.flags[s], k * sizeof(uint8_t))
    if not src.with_bias:
        return
    memcpy(&dst.bias_key[d], &src.bias_key[s], k * sizeof(uint64_t))
    memcpy(&dst.raw_value[d], &src.raw_value[s], k * sizeof(float))
    memcpy(&dst.own_value[d], &src.own_value[s], k * sizeof(float))
    memcpy(&dst.bias_num[d], &src.bias_num[s], k * sizeof(float))
    memcpy(&dst.bias_den[d], &src.bias_den[s], k * sizeof(float))


cdef void compact_into(Tree* dst, const Tree* src) noexcept nogil:
    # Cheney's scan: the root lands at 0 and every child block stays contiguous.
    cdef int32_t scan = 0, used = 1, fc, k, j
    _copy_nodes(dst, 0, src, src.root, 1)
    dst.parent[0] = NO_PARENT
    while scan < used:
        fc = dst.first_child[scan]            # still an index into src
        if fc != UNEXPANDED:
            k = dst.num_children[scan]
            _copy_nodes(dst, used, src, fc, k)
            for j in range(k):
                dst.parent[used + j] = scan
            dst.first_child[scan] = used
            used += k
        scan += 1
    dst.root = 0
    dst.used = used
