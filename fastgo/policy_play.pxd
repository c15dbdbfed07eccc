# Policy-only play (AlphaGo's REINFORCE self-play and its value stage): G games at once, each move
# sampled from the network's policy with a probability floor, no search.
from libc.stdint cimport int16_t, int32_t, uint64_t
from fastgo.rules cimport BoardState
from fastgo.rng cimport Rng
from fastgo.history cimport History

cdef enum:
    PHASE_ALL = 0            # collect every live game
    PHASE_LEARNER = 1        # collect the games whose side to move is the learner (or self-play)
    PHASE_OPPONENT = 2       # collect the games whose side to move is the opponent


cdef struct PolicyGame:
    BoardState board         # the position now (history tracked for the AlphaZero planes)
    Rng rng                  # per-game stream: symmetries and move sampling
    int32_t learner          # BLACK or WHITE: the learner's colour; 0 = the learner plays both
    int32_t length           # moves played so far (index of the next entry in moves / values)
    int32_t sym              # symmetry of the position in the batch in flight (0 = identity)
    int32_t group            # 0 or 1: the opponent a PHASE_OPPONENT collect sorts this game under
    bint over                # two passes or the move cap
    History history          # the game's positions, the initial one first (positional superko)


# The acceptable moves for the side to move of `b` into cand[0 .. k), rising, k returned: legal,
# not the mover's own eye (board_is_eye), the pass (N*N, last) only when allow_pass or no board
# point is acceptable. The one rule of sample_move, move_distribution and acceptable_masks.
cdef int acceptable_moves(const BoardState* b, bint allow_pass, int16_t* cand) noexcept nogil
# The move to play for the side to move of `b`: sampled from softmax(logits) over the acceptable
# moves (legal, not the mover's own eye, the pass only when allow_pass or nothing else is
# acceptable), each probability raised to at least `floor` and renormalised; a board move that
# repeats a position of `history` (positional superko) is struck out and the draw repeated.
# logits: [N*N + 1] in the frame of symmetry `sym` (logits[sym_move(m)] belongs to move m).
# scratch: a caller's board used for the superko test. Returns a move index (N*N = pass).
cdef int sample_move(const BoardState* b, const float* logits, int sym, float floor,
                     bint allow_pass, const History* history, Rng* rng,
                     BoardState* scratch) noexcept nogil
# The distribution sample_move draws from before any superko strike: probs[N*N + 1].
cdef void move_distribution(const BoardState* b, const float* logits, int sym, float floor,
                            bint allow_pass, double* probs) noexcept nogil
