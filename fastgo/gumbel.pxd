# Gumbel root search (Danihelka et al., ICLR 2022, "Policy improvement by planning with Gumbel"):
# the formulas on one node's children, which a fastgo.tree Tree stores contiguously from
# first_child, so the same functions serve the tree (fastgo.mcts, fastgo.move_choice) and the tests
# (through the Python wrappers of fastgo.gumbel).
#
# Values follow fastgo.mcts: value_sum[j] is from the side to move AT child j, so the parent's
# q(j) = -value_sum[j] / visits[j]; raw_value is the network's value of the parent, parent's
# view. `flags` may be NULL; a child with FLAG_ILLEGAL is not a move (no score, no probability).
from libc.stdint cimport uint8_t, int32_t
from fastgo.tree cimport Tree
from fastgo.search_game cimport SearchGame

cdef enum:
    SEARCH_PUCT = 0          # PUCT everywhere, Dirichlet noise at the root (AlphaZero)
    SEARCH_GUMBEL = 1        # Gumbel-top-k and sequential halving at the root, PUCT below


cdef struct GumbelParams:
    float c_visit            # sigma(q) = (c_visit + max_b N(b)) * c_scale * q
    float c_scale
    bint rescale             # completed q min-max rescaled to [0, 1] over the legal children
                             # (else (q + 1) / 2: min-max stretches any gap to the full range)


# Sequential halving of n simulations over m considered actions: the visit count an action must
# have to receive simulation i (0-based). Phase p considers max(2, m >> p) actions, each gets
# max(1, n // (ceil(log2 m) * considered)) more visits, until the n simulations are spent;
# m <= 1: i (one action takes them all).
cdef int32_t halving_visit(int32_t m, int32_t n, int32_t i) noexcept nogil

# The mixed value v_mix (the paper's eq. 10): (raw + sum N * sum_{N>0} p q / sum_{N>0} p) / (1 + sum N).
cdef float mixed_value(const float* prior, const int32_t* visits, const float* value_sum,
                       const uint8_t* flags, int k, float raw_value) noexcept nogil

# sigma(completed q) per child into out[k]: q(j) where visited, v_mix otherwise, put in [0, 1]
# (min-max over the legal children if p.rescale, else as a win probability (q + 1) / 2, the
# paper's scale for Go), times (c_visit + max N) * c_scale. Illegal children get 0.
cdef void sigma_completed(const float* prior, const int32_t* visits, const float* value_sum,
                          const uint8_t* flags, int k, float raw_value, const GumbelParams* p,
                          float* out) noexcept nogil

# The improved policy softmax(log prior + sigma(completed q)) over the legal children into out[k].
cdef void improved_policy(const float* prior, const int32_t* visits, const float* value_sum,
                          const uint8_t* flags, int k, float raw_value, const GumbelParams* p,
                          float* out) noexcept nogil

# Index j (0..k-1) of the legal child maximising base[j] + sigma[j] among those whose count[j]
# equals want; where none does, among all legal children. -1 if no child is legal.
# base[j] = g(j) + log prior(j) (Gumbel noise plus the logit).
cdef int argmax_at_count(const float* base, const float* sigma, const int32_t* count,
                         const uint8_t* flags, int k, int32_t want) noexcept nogil

# The root child the next simulation of game s descends into (node index in s.tree): sequential
# halving on visits + virtual losses (leaves in flight count as visits). NO_NODE if none.
cdef int32_t gumbel_select_root(SearchGame* s, const GumbelParams* p) noexcept nogil

# The move to play after the search: among the most visited root children, the one maximising
# g + log prior + sigma(completed q). NO_NODE if the root has no visited child.
cdef int32_t gumbel_final_child(SearchGame* s, const GumbelParams* p) noexcept nogil

# Draws the root's Gumbel noise (scale * Gumbel(0, 1) per child), fixes m = min(considered,
# legal root children) and the budget n; called once the root's priors are known.
cdef void gumbel_prepare_root(SearchGame* s, int32_t considered, float scale) noexcept nogil
