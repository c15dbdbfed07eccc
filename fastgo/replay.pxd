# Replaying recorded games on the C board: rule checks for shard readers and the training data
# path (positions rebuilt from moves, encoded with a symmetry, targets filled), all without the
# GIL; sampled positions of a window of games are put on a board by seek_position, the one
# replay of encode_samples and of fastgo.policy_play.acceptable_masks.
from libc.stdint cimport int16_t, int32_t, int64_t
from fastgo.rules cimport BoardState

# What check_game found (codes of the first illegal move; REPLAY_OK: none).
cdef enum:
    REPLAY_OK = 0
    REPLAY_OFF_BOARD = 1     # not a board point nor the pass
    REPLAY_ILLEGAL = 2       # occupied, suicide or simple ko
    REPLAY_SUPERKO = 3       # recreates an earlier position of the game (positional superko)
    REPLAY_AFTER_END = 4     # played after two passes or the move cap


# A window of G games: game g's moves are moves[game_start[g] .. game_start[g + 1]); a sample is
# position sample_move[i] (moves played) of game sample_game[i]. ValueError naming the first
# sample whose game or move is out of range or indexes past `moves`.
cdef int check_samples(const int16_t[::1] moves, const int64_t[::1] game_start,
                       const int32_t[::1] sample_game, const int32_t[::1] sample_move) except -1

# Puts position m of game g (moves from `moves` at game_start[g]) on b. cursor[0] is the game
# b holds (-1: none yet) and cursor[1] its moves played: a later position of the same game goes
# on from there, anything else is replayed from an empty board (board_init with size and komi,
# history tracked where track_history). Moves are played unchecked (the reader verified them).
cdef void seek_position(BoardState* b, int size, float komi, bint track_history,
                        const int16_t* moves, const int64_t* game_start, int g, int m,
                        int* cursor) noexcept nogil
