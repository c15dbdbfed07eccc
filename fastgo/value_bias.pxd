# Subtree value-bias correction (KataGo's, docs/KataGoMethods.md "Subtree Value Bias
# Correction"): nodes are grouped by the local shape of the last move (who played it, where, the
# move before it, the 5x5 pattern around it with the stones in atari, the ko ban). Each context
# keeps the weighted mean of its nodes' observed error, the network's value at a node minus the
# mean value of its subtree's children, weighted by (child visits) ** alpha. A node's own value
# in the tree is then the network's minus lambda times the mean error of the OTHER nodes of its
# context, refreshed every time a playout passes through it, and the change carried up to its
# ancestors. KataGo's mean includes the node's own error; with it a node alone in its context
# leans towards its own few children, and on 9x9 at 64 visits that lost 80/200 against no
# correction, where leaving the node out was level (docs/learning.md).
#
# One table per game of the batched search (fastgo.mcts), emptied when a search starts; a node
# kept from an earlier search adds its error again the next time it is passed.
from libc.math cimport powf
from libc.stdint cimport int32_t, uint64_t
from fastgo.rules cimport BoardState
from fastgo.tree cimport Tree, FLAG_TERMINAL

cdef enum:
    BIAS_NO_KEY = 0              # Tree.bias_key of a node without a context (terminal, unevaluated)
    BIAS_TABLE_FIRST = 1024      # first capacity of a table (entries, a power of two)
    BIAS_TABLE_MAX = 1 << 22     # most entries; past half of it a new context gets no entry


cdef struct BiasEntry:
    uint64_t key                 # the context (BIAS_NO_KEY: an empty slot)
    float num                    # sum over its nodes of error x weight
    float den                    # sum of their weights


cdef struct BiasTable:
    # Open addressing, linear probing, at most half full; grows by doubling.
    BiasEntry* entries           # [mask + 1]
    int32_t mask                 # capacity - 1
    int32_t used                 # contexts held


# 1 on success, 0 out of memory (the table is then empty with no entries: lookups find nothing).
cdef bint bias_table_init(BiasTable* table) noexcept nogil
cdef void bias_table_free(BiasTable* table) noexcept nogil
# Forgets every context (capacity kept).
cdef void bias_table_clear(BiasTable* table) noexcept nogil
# The entry of `key`, added empty if absent and `insert`; NULL if absent and not inserted (or no room).
cdef BiasEntry* bias_entry(BiasTable* table, uint64_t key, bint insert) noexcept nogil
# The context of the position `b` (the node's position after its move); never BIAS_NO_KEY.
cdef uint64_t bias_key(const BoardState* b) noexcept nogil


cdef inline float bias_of(BiasTable* table, uint64_t key) noexcept nogil:
    # The context's mean observed error, 0 where it has none yet.
    cdef BiasEntry* e = bias_entry(table, key, 0)
    if e == NULL or e.den <= 0.0:
        return 0.0
    return e.num / e.den


cdef inline float clamp_value(float v) noexcept nogil:
    if v > 1.0:
        return 1.0
    if v < -1.0:
        return -1.0
    return v


cdef inline float bias_refresh(Tree* t, BiasTable* table, int32_t node, float lam,
                               float alpha) noexcept nogil:
    # After a playout has passed through `node` (visits and value_sum updated): the node's error
    # against its children, weighted, replaces its earlier share of its context, and the node's
    # own value becomes raw - lam x the mean of the context's other nodes. Returns the change of
    # its own value, which value_sum[node] has taken and every ancestor must take too (with the
    # sign of its side).
    cdef int32_t child_visits = t.visits[node] - 1
    cdef float err, w, fresh, delta
    cdef BiasEntry* e
    if t.bias_key[node] == BIAS_NO_KEY or child_visits < 1 or (t.flags[node] & FLAG_TERMINAL):
        return 0.0
    e = bias_entry(table, t.bias_key[node], 1)
    if e == NULL:
        return 0.0
    # the children's mean, the node's side: value_sum holds the node's own value once
    err = t.raw_value[node] - (t.value_sum[node] - t.own_value[node]) / child_visits
    w = powf(<float>child_visits, alpha)
    e.num += err * w - t.bias_num[node]
    e.den += w - t.bias_den[node]
    t.bias_num[node] = err * w
    t.bias_den[node] = w
    fresh = t.raw_value[node]
    if e.den - w > 1e-6:
        fresh = clamp_value(fresh - lam * (e.num - err * w) / (e.den - w))
    delta = fresh - t.own_value[node]
    t.own_value[node] = fresh
    t.value_sum[node] += delta
    return delta


cdef inline void backup_biased(Tree* t, BiasTable* table, int32_t node, float value, float lam,
                               float alpha) noexcept nogil:
    # fastgo.puct.backup with the correction: value (the leaf's own value, its side) is added
    # to the leaf and each ancestor as there; each node passed refreshes its context and own
    # value (bias_refresh) and the sum of those changes below a node reaches its value_sum too.
    cdef float carry = 0.0
    while True:
        t.visits[node] += 1
        t.value_sum[node] += value + carry
        t.virtual_loss[node] -= 1
        carry += bias_refresh(t, table, node, lam, alpha)
        if node == t.root:
            return
        node = t.parent[node]
        value = -value
        carry = -carry
