# Replaying recorded games on the C board: rule checks for shard readers and the training data
# path (positions rebuilt from moves, encoded with a symmetry, targets filled), all without the
# GIL. Callers: inference_server.experience (shard verification), trainer.window (batches).

# What check_game found (codes of the first illegal move; REPLAY_OK: none).
cdef enum:
    REPLAY_OK = 0
    REPLAY_OFF_BOARD = 1     # not a board point nor the pass
    REPLAY_ILLEGAL = 2       # occupied, suicide or simple ko
    REPLAY_SUPERKO = 3       # recreates an earlier position of the game (positional superko)
    REPLAY_AFTER_END = 4     # played after two passes or the move cap
