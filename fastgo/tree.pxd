# Search-tree node storage shared by both searches (fastgo.mcts PUCT, fastgo.uct UCT): arrays
# indexed by node, grown by doubling up to a cap, reset in O(1), compacted by copying the live
# subtree.
from libc.stdint cimport uint8_t, int16_t, int32_t, uint64_t
from libc.stddef cimport size_t

cdef enum:
    NO_NODE = -1             # "no such node": select found nothing, a move is not among the children
    NO_PARENT = -1           # parent of the root
    UNEXPANDED = -1          # first_child of a node whose children are not allocated
    TREE_INITIAL_NODES = 4096   # first capacity of a tree; doubles on demand up to its cap

# Node flags (bits of Tree.flags).
cdef enum:
    FLAG_PENDING = 1         # selected as a leaf; its evaluation is in flight (children allocated,
                             # priors not yet set). Another descent reaching it is a collision.
    FLAG_TERMINAL = 2        # the game is over at this node; its value comes from the rules
    FLAG_ILLEGAL = 4         # the move repeats a position of the game or of the path (superko)
    FLAG_WIN = 8             # terminal and won by the side to move at the node
    FLAG_LOSS = 16           # terminal and lost by the side to move (neither: a draw)


cdef struct Tree:
    # One game's nodes. Indices [0, used) are allocated (bump allocator); the children of a node
    # are num_children consecutive nodes starting at first_child, allocated together when the node
    # is expanded. Every array has `capacity` entries; capacity grows by doubling up to max_nodes.
    int32_t* parent          # [capacity] index of the parent node, NO_PARENT at the root
    int32_t* first_child     # [capacity] index of the first child, or UNEXPANDED
    int16_t* num_children    # [capacity] number of children (0 until expanded)
    int16_t* move            # [capacity] the move (public coordinate, PASS = N*N) from the parent
    float* prior             # [capacity] policy probability of move at the parent (root: with noise)
    int32_t* visits          # [capacity] completed simulations through this node
    float* value_sum         # [capacity] sum of backed-up values, side to move at this node
    int32_t* virtual_loss    # [capacity] descents through this node whose leaf is still in flight
    uint8_t* flags           # [capacity] FLAG_* bits
    # The subtree value-bias correction (fastgo.value_bias): allocated only where with_bias
    uint64_t* bias_key       # [capacity] the node's context, BIAS_NO_KEY (0) until it is evaluated
    float* raw_value         # [capacity] the network's value of the node, side to move there
    float* own_value         # [capacity] the node's own evaluation as value_sum holds it
    float* bias_num          # [capacity] the node's share of its context: error x weight ...
    float* bias_den          # [capacity] ... and weight
    int32_t root             # index of the current root
    int32_t used             # nodes allocated
    int32_t capacity         # entries in every array above
    bint with_bias           # the five bias arrays exist (set before the first tree_reserve)


# Grows `count` arrays (arrays[i] points at an array pointer; item_sizes[i] its element size) from
# capacity[0] to at least `needed` entries, doubling from TREE_INITIAL_NODES, at most max_nodes.
# Returns 1 on success, 0 if that would pass max_nodes or memory ran out (arrays stay valid, the
# capacity is only raised once every array has grown).
cdef int grow_arrays(void** arrays, const size_t* item_sizes, int count, int32_t* capacity,
                     int32_t needed, int32_t max_nodes) noexcept nogil
cdef int tree_reserve(Tree* t, int32_t needed, int32_t max_nodes) noexcept nogil
cdef void tree_free(Tree* t) noexcept nogil
# Copies the subtree below src.root into dst breadth-first; dst must hold src.used nodes.
cdef void compact_into(Tree* dst, const Tree* src) noexcept nogil


cdef inline void init_node(Tree* t, int32_t i, int32_t parent, int move, float prior) noexcept nogil:
    t.parent[i] = parent
    t.first_child[i] = UNEXPANDED
    t.num_children[i] = 0
    t.move[i] = <int16_t>move
    t.prior[i] = prior
    t.visits[i] = 0
    t.value_sum[i] = 0.0
    t.virtual_loss[i] = 0
    t.flags[i] = 0
    if t.with_bias:
        t.bias_key[i] = 0
        t.raw_value[i] = 0.0
        t.own_value[i] = 0.0
        t.bias_num[i] = 0.0
        t.bias_den[i] = 0.0


cdef inline void tree_reset(Tree* t, int pass_move) noexcept nogil:
    # O(1): the old nodes are simply forgotten. Requires capacity >= 1.
    init_node(t, 0, NO_PARENT, pass_move, 1.0)
    t.root = 0
    t.used = 1


cdef inline int32_t find_child(const Tree* t, int32_t node, int move) noexcept nogil:
    cdef int32_t first = t.first_child[node], j
    if first == UNEXPANDED:
        return NO_NODE
    for j in range(t.num_children[node]):
        if t.move[first + j] == move:
            return first + j
    return NO_NODE
