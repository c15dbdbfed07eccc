# The batched PUCT driver for G concurrent games (tree storage: fastgo.tree; selection and
# backup: fastgo.puct; root noise: fastgo.root_noise; the move choice and analysis:
# fastgo.move_choice; settings: fastgo.search_settings), and the BatchedSearch class that drives
# all G searches at once (leaf collection into one uint8 batch, results applied back from one
# logits array and one values array).
#
# Sign convention: every value is in [-1, 1] and is seen from the side to move AT the node it
# belongs to (+1: the player to move there wins). The network's value is for the side to move in
# the encoded position. A parent compares its children by -value_sum[c] / visits[c].
from libc.stdint cimport uint8_t, int16_t, int32_t, uint64_t
from fastgo.constants cimport MAX_MOVES
from fastgo.rules cimport BoardState
from fastgo.rng cimport Rng
from fastgo.tree cimport Tree
from fastgo.search_game cimport SearchGame
from fastgo.search_params cimport SearchParams

# What one descent ended in.
cdef enum:
    DESCENT_LEAF = 0         # a leaf was selected and recorded for evaluation
    DESCENT_TERMINAL = 1     # a terminal node was reached and backed up at once (no evaluation)
    DESCENT_COLLISION = 2    # the path ran into a leaf already in flight; nothing changed

# Built-in evaluators (no Python call per batch).
cdef enum:
    EVAL_EXTERNAL = 0        # logits / values come from the caller (apply)
    EVAL_UNIFORM = 1         # all logits 0 (uniform over legal moves), value 0
    EVAL_ROLLOUT = 2         # uniform priors, value = the result of one random playout


cdef struct Leaf:
    # One leaf in flight: which node of which game, and how its planes were transformed.
    int32_t game
    int32_t node
    int32_t sym              # symmetry applied to the planes (undone on the policy)
    float value              # EVAL_ROLLOUT: the playout's value, side to move at the leaf


cdef class BatchedSearch:
    cdef SearchGame* search_games  # [games]
    cdef Tree spare          # scratch arena for compacting one game's tree at a time
    cdef Leaf* leaves        # [leaf_cap] ring of leaves in flight, oldest batch first
    cdef int32_t* batch_sizes  # [max_batches] ring of leaf counts of the batches in flight
    cdef int32_t leaf_head, leaf_count, leaf_cap
    cdef int32_t batch_head, batch_count
    cdef BoardState work     # scratch board of the descent
    cdef uint64_t* path_hash  # [max path length + 1] positional hashes along the current descent
    cdef uint8_t* scratch_planes  # [planes * N * N] encoding before the symmetry
    cdef float* zero_logits  # [games * leaves_per_game * (N*N + 1)] for the built-in evaluators
    cdef float* eval_values  # [games * leaves_per_game] for the built-in evaluators
    cdef uint8_t* own_planes  # [games * leaves_per_game * planes * N * N] for the built-in evaluators
    cdef readonly int games, size, planes, encoding_id
    cdef readonly float komi
    cdef SearchParams params             # the settings, typed (fastgo/search_params.pxd)
    cdef readonly object encoding
    cdef readonly object settings         # the fastgo.search_settings.SearchSettings it was built with
    cdef readonly long long simulations   # descents completed (leaves applied + terminal) since creation
    cdef uint8_t legal_mask[MAX_MOVES]   # scratch of the expansion
    cdef uint64_t seed

    cdef void _reset_game(self, SearchGame* s) noexcept nogil
    cdef SearchGame* _search_game(self, int g) except NULL
    cdef int _compact(self, SearchGame* s) except -1
    cdef void _bias_restart(self, SearchGame* s) noexcept nogil
    cdef void _backup(self, SearchGame* s, int32_t node, float value) noexcept nogil
    cdef int _collect(self, uint8_t* out, int mode) noexcept nogil
    cdef int _descend(self, SearchGame* s, int g, uint8_t* out, Leaf* leaf, int mode) noexcept nogil
    cdef void _expand(self, SearchGame* s, int32_t node, const BoardState* b) noexcept nogil
    cdef void _apply(self, const float* logits, const float* values, int mode) noexcept nogil
