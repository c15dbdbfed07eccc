# The choice of the played move on top of a finished search (fastgo.mcts): which root move to play
# (temperature, the most visited, resignation with its bookkeeping) and the analysis rows for
# lz-analyze. Reads a SearchGame; knows nothing of batches.
from libc.stdint cimport int32_t
from fastgo.search_game cimport SearchGame
from fastgo.tree cimport Tree
from fastgo.gumbel cimport GumbelParams

cdef enum:
    RESIGN_MOVE = -2         # the same value as fastgo.game.RESIGN

# The move to play at the root of s: sampled in proportion to visits ** (1 / temp) for temp > 0,
# the most visited (ties: higher prior) for temp = 0; RESIGN_MOVE where `resign` and the root
# value stayed below resign_threshold for resign_consecutive own moves (counted per call, and only
# recorded in s.would_resign where resignation is disabled in this game); the pass where the
# root has no visited child. Where s.gumbel and `gumbel` is given, the temperature is not used:
# the move is the Gumbel search's (fastgo.gumbel.gumbel_final_child; its noise is the exploration).
cdef int choose_root_move(SearchGame* s, double temp, bint resign, float resign_threshold,
                          int resign_consecutive, const GumbelParams* gumbel) noexcept nogil
# Root children with visits, most visited first, as dicts (move, visits, winrate, prior, pv).
cdef list root_analysis(const Tree* t, int max_pv)
