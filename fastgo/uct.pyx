"""Classic UCT with random playouts: the fixed, network-free reference player 'mcts:N'.

Played through play.players (the arena, `fastgo gtp --player mcts:N`). The algorithm is
frozen on purpose, because Elo curves are measured against it for ever; change it only with a new
name. For each of N iterations, from the position to move:

1. Selection: from the root, while the node is expanded, go to the child maximising
   UCB1 = wins / visits + UCT_C * sqrt(ln(parent visits) / visits), an unvisited child first
   (children are stored in a random order drawn at expansion, so "first unvisited" is a uniformly
   random unvisited child); wins count for the player who made the child's move (draw = 1/2).
2. Expansion: the root is expanded at once, any other node once it has one visit and the game is
   not over there: its children are the legal moves (simple ko; at the root the caller's mask,
   e.g. the Game's positional-superko legal moves) that do not fill the mover's own eye
   (board_is_eye), plus the pass when there is no such move or the opponent has just passed (so
   a pass can end the game when the score favours it). One child is then selected as in 1.
3. Simulation: board_playout (near-uniform random moves that never fill an own eye, until two
   passes or the move cap) from the reached position, scored by Tromp-Taylor with the komi.
4. Backup of the result to every node on the path.

The move played is the most visited root child (ties: the higher win rate, then the earlier in the
random order). The player never resigns. Everything random comes from the caller's seeded
fastgo.board.Random, so a seed fixes every move of every game.
"""
import numpy as np

cimport numpy as cnp
from libc.math cimport sqrt, log
from libc.stdint cimport uint8_t, int16_t, int32_t
from libc.stddef cimport size_t
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy

from fastgo.board cimport Board, Random
from fastgo.constants cimport MAX_MOVES
from fastgo.rules cimport (
    BoardState, BLACK, WHITE, board_copy, board_play, board_legal_moves, board_is_eye,
    board_is_over, board_playout)
from fastgo.scoring cimport board_score
from fastgo.rng cimport Rng, rng_below
from fastgo.tree cimport grow_arrays

cnp.import_array()

UCT_C = 0.7                  # exploration constant of UCB1 (results in [0, 1])

cdef enum:
    _UNEXPANDED = -1


cdef struct UctTree:
    int32_t* first_child     # [capacity] first of num_children consecutive children, or _UNEXPANDED
    int16_t* num_children    # [capacity]
    int16_t* move            # [capacity] move from the parent (PASS = N*N)
    int32_t* visits          # [capacity] iterations through this node
    float* wins              # [capacity] results for the player who played `move` (1, 1/2, 0)
    int32_t used
    int32_t capacity


cdef int _reserve(UctTree* t, int32_t needed) noexcept nogil:
    # Grows the arrays to hold `needed` nodes (fastgo.tree's doubling); 0 if memory ran out.
    cdef void* arrays[5]
    cdef size_t sizes[5]
    if needed <= t.capacity:
        return 1
    arrays[0] = &t.first_child;   sizes[0] = sizeof(int32_t)
    arrays[1] = &t.num_children;  sizes[1] = sizeof(int16_t)
    arrays[2] = &t.move;          sizes[2] = sizeof(int16_t)
    arrays[3] = &t.visits;        sizes[3] = sizeof(int32_t)
    arrays[4] = &t.wins;          sizes[4] = sizeof(float)
    return grow_arrays(arrays, sizes, 5, &t.capacity, needed, 0x7FFFFFFF)


cdef void _free(UctTree* t) noexcept nogil:
    free(t.first_child)
    free(t.num_children)
    free(t.move)
    free(t.visits)
    free(t.wins)


cdef int _expand(UctTree* t, int32_t node, const BoardState* b, const uint8_t* root_mask,
                 Rng* rng) noexcept nogil:
    # Allocates the children of `node` (see step 2) in a random order. 0 if out of memory.
    cdef uint8_t mask[MAX_MOVES]
    cdef int16_t moves[MAX_MOVES]
    cdef int nn = b.size * b.size, m, k = 0, i, j
    cdef int16_t tmp
    cdef int32_t first
    if root_mask != NULL:
        memcpy(mask, root_mask, nn + 1)
    else:
        board_legal_moves(b, mask)
    for m in range(nn):
        if mask[m] and not board_is_eye(b, m, b.to_move):
            moves[k] = m
            k += 1
    if k == 0 or b.passes > 0:
        moves[k] = nn
        k += 1
    for i in range(k - 1, 0, -1):
        j = rng_below(rng, i + 1)
        tmp = moves[i]
        moves[i] = moves[j]
        moves[j] = tmp
    if not _reserve(t, t.used + k):
        return 0
    first = t.used
    for i in range(k):
        t.first_child[first + i] = _UNEXPANDED
        t.num_children[first + i] = 0
        t.move[first + i] = moves[i]
        t.visits[first + i] = 0
        t.wins[first + i] = 0.0
    t.used += k
    t.first_child[node] = first
    t.num_children[node] = <int16_t>k
    return 1


cdef inline int32_t _select(const UctTree* t, int32_t node, double c) noexcept nogil:
    cdef int32_t first = t.first_child[node], j, best = first
    cdef double log_n = log(t.visits[node] if t.visits[node] > 0 else 1), score, best_score = -1.0
    for j in range(t.num_children[node]):
        if t.visits[first + j] == 0:
            return first + j
        score = (t.wins[first + j] / t.visits[first + j]
                 + c * sqrt(log_n / t.visits[first + j]))
        if score > best_score:
            best_score = score
            best = first + j
    return best


cdef int _search(UctTree* t, const BoardState* root, const uint8_t* root_mask, int playouts,
                 Rng* rng, double c) noexcept nogil:
    # Runs the iterations on t (reset here). Returns 0 if memory ran out before the root could be
    # expanded, else 1 (iterations that cannot expand further just play out).
    cdef BoardState work
    cdef int32_t path[2 * MAX_MOVES + 2]
    cdef int depth, i, winner
    cdef int32_t node
    cdef float score, result
    cdef int root_color = root.to_move
    cdef int mover
    t.used = 1
    t.first_child[0] = _UNEXPANDED
    t.num_children[0] = 0
    t.move[0] = root.size * root.size
    t.visits[0] = 0
    t.wins[0] = 0.0
    if not _expand(t, 0, root, root_mask, rng):
        return 0
    for i in range(playouts):
        board_copy(&work, root)
        node = 0
        depth = 0
        path[0] = 0
        while t.first_child[node] != _UNEXPANDED:
            node = _select(t, node, c)
            board_play(&work, t.move[node])
            depth += 1
            path[depth] = node
        if t.visits[node] > 0 and not board_is_over(&work):
            if _expand(t, node, &work, NULL, rng):
                node = _select(t, node, c)
                board_play(&work, t.move[node])
                depth += 1
                path[depth] = node
        board_playout(&work, rng)
        score = board_score(&work)
        winner = BLACK if score > 0 else (WHITE if score < 0 else 0)
        while depth >= 0:
            node = path[depth]
            # The move into the node at odd depth was the root player's.
            mover = root_color if depth % 2 == 1 else 3 - root_color
            t.visits[node] += 1
            if winner == 0:
                t.wins[node] += 0.5
            elif winner == mover:
                t.wins[node] += 1.0
            depth -= 1
    return 1


def uct_search(Board board not None, int playouts, Random rng not None, root_mask=None,
               double c=UCT_C):
    """Runs `playouts` UCT iterations from `board` (see the module docstring).

    root_mask: optional uint8 [N*N + 1] of the moves allowed at the root (the Game's legal moves,
    positional superko included); default the board's own legality. Returns (move, visits, wins):
    the chosen move and int32 / float32 [N*N + 1] arrays of root-child visits and wins."""
    cdef int nn = board.state.size * board.state.size, j
    cdef uint8_t mask_buf[MAX_MOVES]
    cdef uint8_t* mask_ptr = NULL
    cdef UctTree t
    cdef int ok
    cdef int32_t first, best
    cdef Board root
    if playouts < 1:
        raise ValueError(f"playouts must be >= 1, got {playouts}")
    if root_mask is not None:
        mask = np.asarray(root_mask, dtype=np.uint8).reshape(-1)
        if mask.shape[0] != nn + 1:
            raise ValueError(f"root_mask has {mask.shape[0]} entries, expected {nn + 1}")
        for j in range(nn + 1):
            mask_buf[j] = 1 if mask[j] else 0
        mask_buf[nn] = 1
        mask_ptr = mask_buf
    root = board.copy()
    root.track_history = False          # playouts need no history: cheaper copies
    t.first_child = NULL
    t.num_children = NULL
    t.move = NULL
    t.visits = NULL
    t.wins = NULL
    t.capacity = 0
    if not _reserve(&t, (nn + 2) * 4):
        raise MemoryError()
    try:
        with nogil:
            ok = _search(&t, &root.state, mask_ptr, playouts, &rng.rng, c)
        if not ok:
            raise MemoryError()
        visits = np.zeros(nn + 1, dtype=np.int32)
        wins = np.zeros(nn + 1, dtype=np.float32)
        first = t.first_child[0]
        best = first
        for j in range(t.num_children[0]):
            visits[t.move[first + j]] = t.visits[first + j]
            wins[t.move[first + j]] = t.wins[first + j]
            if t.visits[first + j] > t.visits[best] or (
                    t.visits[first + j] == t.visits[best] and t.visits[best] > 0
                    and t.wins[first + j] / t.visits[first + j] > t.wins[best] / t.visits[best]):
                best = first + j
        return int(t.move[best]), visits, wins
    finally:
        _free(&t)
