# The batched search's settings as one typed struct (fastgo.mcts.BatchedSearch.params), built in
# one place from a fastgo.search_settings.SearchSettings (mcts.pyx: params_from_settings). A
# setting that can be off is None in SearchSettings and the named sentinel below here.
from libc.stdint cimport int32_t
from fastgo.gumbel cimport GumbelParams

cdef enum:
    CHEAP_VISITS_OFF = 0     # cheap_visits: no playout-cap randomization
    ALPHA_AUTO = 0           # dirichlet_alpha: 0.03 * 361 / number of root children
    RESIGN_OFF = -2          # resign_threshold: below every root value (values are in [-1, 1])

cdef struct SearchParams:
    int32_t search                  # SEARCH_PUCT or SEARCH_GUMBEL (fastgo.gumbel)
    float c_puct                    # PUCT exploration constant, >= 0
    float fpu_reduction             # first-play urgency: parent Q minus this x sqrt(visited prior)
    float virtual_loss              # loss visits charged to each node of a pending path, >= 0
    float dirichlet_alpha           # root noise's alpha, > 0, or ALPHA_AUTO
    float noise_weight              # weight of the root's Dirichlet noise in [0, 1] (0: none)
    int32_t leaves_per_game         # leaves one game adds to one batch, >= 1
    int32_t max_batches             # batches in flight at once, >= 1
    int32_t max_nodes               # node capacity per game
    bint random_symmetry            # a random one of the 8 symmetries per evaluation
    int32_t temperature_moves       # temperature 1 before this move number, 0 after
    float resign_threshold          # resign below this root value, or RESIGN_OFF
    int32_t resign_consecutive      # ... for this many consecutive own moves, >= 1
    float resign_disabled_fraction  # games (drawn per game) that never resign, in [0, 1]
    int32_t cheap_visits            # playout-cap randomization's cheap visits, or CHEAP_VISITS_OFF
    float full_search_fraction      # probability of a full search, in [0, 1]
    int32_t gumbel_considered       # Gumbel root: m, moves sampled at the root, >= 1
    float gumbel_scale              # Gumbel root: scale of the noise (0: deterministic)
    GumbelParams gumbel             # Gumbel root: completed-q transform
    float value_bias                # subtree value-bias correction's lambda (0: off; value_bias.pxd)
    float value_bias_alpha          # ... and the exponent of its weights, (child visits) ** alpha
