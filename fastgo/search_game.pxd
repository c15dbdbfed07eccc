# The per-game state of the batched search (fastgo.mcts), as a plain struct so that the move
# choice (fastgo.move_choice) and the Gumbel root (fastgo.gumbel) read it without the driver module.
from libc.stdint cimport uint8_t, int32_t, uint64_t
from fastgo.constants cimport MAX_MOVES
from fastgo.rules cimport BoardState
from fastgo.rng cimport Rng
from fastgo.tree cimport Tree
from fastgo.history cimport History
from fastgo.value_bias cimport BiasTable


cdef struct SearchGame:
    # Everything the search keeps for one game.
    BoardState root_board    # the position at the root
    Tree tree
    Rng rng                  # per-game stream: symmetries, noise, rollouts, move sampling
    int32_t target           # root-child visits the current search wants
    int32_t inflight         # leaves of this game awaiting apply
    bint active              # the current search still wants simulations (or has leaves in flight)
    bint noise_wanted        # the current search adds Dirichlet noise at the root
    bint noise_done          # noise has been added to the current root's priors
    bint full_search         # playout-cap randomization: this move got the full search
    bint root_mask_valid     # root_mask holds the root's legal moves (superko from the Game)
    uint8_t root_mask[MAX_MOVES]  # [N*N + 1] 1 = legal at the root
    BiasTable bias           # the value-bias contexts of the current search (value_bias > 0)
    History history          # earlier positions of the game (positional superko), the newest
                             # 2 * N * N + 64 kept
    bint resign_disabled     # resignation switched off in this game (to count false positives)
    int32_t low_streak[3]    # consecutive own moves with root value below the threshold, by color
    int32_t would_resign     # first color that would have resigned where disabled (0: none)
    int32_t would_resign_move  # move number at which it would have, or -1
    # Gumbel root search (fastgo.gumbel); per root child index j (children are contiguous).
    bint gumbel              # the current search selects at the root by sequential halving
    bint gumbel_ready        # the root's priors are known and its Gumbel noise is drawn
    int32_t gumbel_m         # actions considered: min(gumbel_considered, legal root moves)
    float gumbel_scale       # scale of this search's Gumbel noise (0: deterministic)
    float root_raw_value     # the network's value of the root, root's view (its first backup)
    float gumbel_noise[MAX_MOVES]   # g(j): scale * Gumbel(0, 1)
    float gumbel_base[MAX_MOVES]    # g(j) + log prior(j)
    float gumbel_sigma[MAX_MOVES]   # scratch: sigma(completed q) of the root's children
    int32_t gumbel_count[MAX_MOVES] # scratch: visits + leaves in flight of the root's children
