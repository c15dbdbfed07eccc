# The timed loop of `fastgo bench board`: random playouts (fastgo.rules.board_playout) from the
# empty board, GIL released. Each playout is one call into fastgo.rules; its moves are not.
from libc.stdint cimport uint64_t
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

from fastgo.constants cimport check_board_size
from fastgo.rng cimport Rng, rng_seed
from fastgo.rules cimport BoardState, board_init, board_copy, board_playout


cdef inline double _now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


def bench_playouts(int size, double seconds, uint64_t seed=1, float komi=7.5):
    """Random playouts from the empty board for about `seconds` on this thread, GIL released.

    Returns (playouts, moves, elapsed_seconds). Moves are board_random_move choices (near-uniform,
    never filling an own eye); each playout ends on two passes or the 2 * N * N move cap.
    """
    check_board_size(size)
    cdef BoardState start
    cdef BoardState work
    cdef Rng rng
    cdef long long playouts = 0, moves = 0
    cdef double t0, elapsed = 0.0
    cdef int k
    with nogil:
        rng_seed(&rng, seed)
        board_init(&start, size, komi)
        start.track_history = 0
        t0 = _now()
        while True:
            for k in range(8):
                board_copy(&work, &start)
                moves += board_playout(&work, &rng)
                playouts += 1
            elapsed = _now() - t0
            if elapsed >= seconds:
                break
    return playouts, moves, elapsed
