"""Batched PUCT search for G concurrent games (AlphaZero / Leela Zero style), in nogil C.

One `BatchedSearch` holds G games. `collect(out)` descends every game that still wants
simulations to a leaf (several per game with virtual loss), writes the leaves' feature planes,
each under a random one of the 8 symmetries, into the caller's uint8 buffer and returns how many
rows it wrote; `apply(logits, values)` takes the evaluations of the oldest batch in flight
(symmetry undone, illegal moves masked, softmax), expands the leaves and backs the values up.
Up to `max_batches` batches may be in flight at once (collect the next while one is evaluated).
`run(evaluator, visits)` does the whole loop with `evaluator(planes) -> (logits, values)`, the
interface of the inference server's in-process evaluator and of its socket client; 'uniform' and
'rollout' name built-in C evaluators that make no Python call per batch.

    search = BatchedSearch(games=G, size=9, komi=7.5, settings=SearchSettings(...))
    search.set_position(g, game_or_board)        # per game; resets that game's tree
    search.run(evaluator, visits=800)            # or start(800) + collect/apply by hand
    visits = search.root_visits(g)               # int32 [N*N + 1], pass last
    move = search.choose_move(g, temperature)    # or fastgo.game.RESIGN (-2)
    search.advance(g, move)                      # tree reuse: the chosen subtree becomes the root

Conventions (see mcts.pxd): values are from the side to move at each node and at each encoded
position; logits are [count, N*N + 1] float32 in the frame of the planes the network saw; a
search of `visits` stops when the root's children hold that many visits in total (the root's own
evaluation is not counted; visits already below a reused root count). Selection maximises
    Q(c) + c_puct * P(c) * sqrt(N_parent) / (1 + N(c))
with Q(c) = -value_sum[c] / visits[c] (the parent's view) and, for an unvisited child, first-play
urgency Q = Q(parent) - fpu_reduction * sqrt(sum of the priors of the visited children). A
pending descent counts `virtual_loss` visits of a loss for the parent. Terminal nodes (two
passes, the move cap) are scored by the rules (Tromp-Taylor) without an evaluation. Legality in
the tree is simple ko plus positional superko against the game's history and the path; at a root
set from a Game the Game's own legal moves are used.

Asynchronous use (two batches in flight): `start(visits)`, then repeatedly `collect(buf_a)`,
send it, `collect(buf_b)` while it is out (virtual loss steers those descents elsewhere),
`apply()` the replies in the order the batches were collected, until `done`. collect() returns
0 when every game still searching is blocked behind its leaves in flight: apply one, go on.
`in_flight`, `simulations` (completed descents), `root_value`, `root_priors`, `analysis` (for
lz-analyze), `is_full_search` (playout-cap randomization), `resign_info` and `tree_arrays`
(copies of the node arrays) read the state. One BatchedSearch belongs to one thread: the loops
release the GIL but the object is not locked.
"""
import numpy as np

cimport numpy as cnp
from libc.math cimport exp, isfinite, INFINITY
from libc.stdint cimport uint8_t, int16_t, int32_t, uint64_t
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memcpy, memmove, memset

from fastgo.board cimport Board
from fastgo.constants cimport MAX_MOVES, check_board_size
from fastgo.rules cimport (
    BoardState, BLACK, WHITE, board_init, board_copy, board_is_legal, board_play,
    board_legal_moves, board_is_over, board_playout, board_position_hash)
from fastgo.scoring cimport board_score
from fastgo.features cimport encoding_planes, encode
from fastgo.rng cimport Rng, rng_seed, rng_next, rng_below, rng_uniform
from fastgo.symmetry cimport sym_move, sym_planes
from fastgo.tree cimport (
    Tree, NO_NODE, NO_PARENT, UNEXPANDED, TREE_INITIAL_NODES, FLAG_PENDING, FLAG_TERMINAL,
    FLAG_ILLEGAL, FLAG_WIN, FLAG_LOSS, tree_reserve, tree_free, compact_into, init_node,
    tree_reset, find_child)
from fastgo.puct cimport (
    backup, undo_virtual_loss, terminal_value, result_for, root_child_visits, puct_select)
from fastgo.root_noise cimport add_dirichlet_noise
from fastgo.move_choice cimport choose_root_move, root_analysis
from fastgo.gumbel cimport (
    SEARCH_PUCT, SEARCH_GUMBEL, gumbel_select_root, gumbel_prepare_root, improved_policy)
from fastgo.search_params cimport SearchParams, CHEAP_VISITS_OFF, ALPHA_AUTO, RESIGN_OFF
from fastgo.history cimport (
    History, history_init, history_free, history_clear, history_push, history_repeats)
from fastgo.value_bias cimport (
    bias_table_init, bias_table_free, bias_table_clear, bias_key, bias_of, backup_biased,
    clamp_value)

cnp.import_array()

RESIGN = -2                  # same value as fastgo.game.RESIGN
# The C enum names of mcts.pxd, for Python callers and tests (tree_arrays()).
globals().update(NO_NODE=<int>NO_NODE, NO_PARENT=<int>NO_PARENT, UNEXPANDED=<int>UNEXPANDED,
                 FLAG_PENDING=<int>FLAG_PENDING, FLAG_TERMINAL=<int>FLAG_TERMINAL,
                 FLAG_ILLEGAL=<int>FLAG_ILLEGAL, FLAG_WIN=<int>FLAG_WIN, FLAG_LOSS=<int>FLAG_LOSS)
from fastgo.features import ENCODING_IDS as _ENCODINGS
from fastgo.search_settings import SearchSettings
from fastgo.variants import Search
_BUILTIN = {"uniform": EVAL_UNIFORM, "rollout": EVAL_ROLLOUT}
# each root search (fastgo.variants.Search, every member) -> the kernel's C constant (gumbel.pxd)
_SEARCHES = {Search.PUCT: SEARCH_PUCT, Search.GUMBEL: SEARCH_GUMBEL}

cdef inline void _add_noise(SearchGame* s, float alpha, float weight) noexcept nogil:
    if add_dirichlet_noise(&s.tree, &s.rng, alpha, weight):
        s.noise_done = 1


cdef int params_from_settings(object settings, SearchParams* p) except -1:
    # The one translation of a SearchSettings into the typed struct: None (off, or the automatic
    # alpha) becomes the struct's named sentinel.
    p.search = _SEARCHES[settings.search]
    p.c_puct = settings.c_puct
    p.fpu_reduction = settings.fpu_reduction
    p.virtual_loss = settings.virtual_loss
    p.dirichlet_alpha = ALPHA_AUTO if settings.dirichlet_alpha is None else settings.dirichlet_alpha
    p.noise_weight = settings.noise_weight
    p.leaves_per_game = settings.leaves_per_game
    p.max_batches = settings.max_batches
    p.max_nodes = settings.max_nodes
    p.random_symmetry = settings.random_symmetry
    p.temperature_moves = settings.temperature_moves
    p.resign_threshold = RESIGN_OFF if settings.resign_threshold is None else settings.resign_threshold
    p.resign_consecutive = settings.resign_consecutive
    p.resign_disabled_fraction = settings.resign_disabled_fraction
    p.cheap_visits = (CHEAP_VISITS_OFF if settings.cheap_visits is None
                      else int(settings.cheap_visits))
    p.full_search_fraction = settings.full_search_fraction
    p.gumbel_considered = settings.gumbel.considered
    p.gumbel_scale = settings.gumbel.scale
    p.gumbel.c_visit = settings.gumbel.c_visit
    p.gumbel.c_scale = settings.gumbel.c_scale
    p.gumbel.rescale = settings.gumbel.rescale
    p.value_bias = settings.value_bias
    p.value_bias_alpha = settings.value_bias_alpha
    return 0


def _as_board(position):
    # A Board, or a Game (anything with a .board that is a Board).
    if isinstance(position, Board):
        return position, None
    board = getattr(position, "board", None)
    if isinstance(board, Board):
        return board, position
    raise TypeError(f"expected a fastgo Board or Game, got {type(position).__name__}")


cdef class BatchedSearch:
    """PUCT search over `games` concurrent games; see the module docstring.

    BatchedSearch(games=1, size=9, komi=7.5, settings=None, seed=None):
      games, size, komi      G games on N x N boards (komi for positions built by set_position
                             from nothing; a Board / Game brings its own)
      settings               a fastgo.search_settings.SearchSettings (None: its defaults): PUCT,
                             root noise, batching, the tree's capacity, the move choice,
                             resignation, playout-cap randomization and, for search='gumbel',
                             the Gumbel root search (Gumbel MuZero: Gumbel-top-m sampling and
                             sequential halving at the root, the move played by g + log prior +
                             sigma(completed q) among the most visited, improved_policy() as the
                             target; PUCT below the root; no noise, no temperature, a fresh tree
                             per search; see fastgo.gumbel)
      seed                   seeds every game's random stream (game g: seed and g)
    The settings travel down to the C search as one typed struct (fastgo/search_params.pxd);
    Python reads them in one place, search.settings (a SearchSettings: search.settings.c_puct,
    search.settings.gumbel.scale, ...; None: off).
    """

    def __cinit__(self, *, int games=1, int size=9, float komi=7.5, settings=None, seed=None):
        cdef int g, nn, leaves_per_game, max_batches, max_nodes
        if settings is None:
            settings = SearchSettings()
        elif not isinstance(settings, SearchSettings):
            raise TypeError(f"settings must be a SearchSettings, got {type(settings).__name__}")
        check_board_size(size)
        if games < 1:
            raise ValueError(f"games must be >= 1, got {games}")
        if settings.max_nodes < 2 * (size * size + 1) + 1:
            raise ValueError(f"max_nodes must be at least {2 * (size * size + 1) + 1}, got "
                             f"{settings.max_nodes}")
        params_from_settings(settings, &self.params)
        leaves_per_game = self.params.leaves_per_game
        max_batches = self.params.max_batches
        max_nodes = self.params.max_nodes
        self.settings = settings
        self.games = games
        self.size = size
        self.komi = komi
        self.encoding = settings.encoding
        self.encoding_id = _ENCODINGS[settings.encoding]
        self.planes = encoding_planes(self.encoding_id)
        if seed is None:
            seed = int.from_bytes(np.random.default_rng().bytes(8), "little")
        self.seed = <uint64_t>(int(seed) & 0xFFFFFFFFFFFFFFFF)
        self.simulations = 0
        nn = size * size
        self.leaf_cap = max_batches * games * leaves_per_game
        self.search_games = <SearchGame*>calloc(games, sizeof(SearchGame))
        self.leaves = <Leaf*>calloc(self.leaf_cap, sizeof(Leaf))
        self.batch_sizes = <int32_t*>calloc(max_batches, sizeof(int32_t))
        self.path_hash = <uint64_t*>calloc(2 * nn + 8, sizeof(uint64_t))
        self.scratch_planes = <uint8_t*>calloc(self.planes * nn, 1)
        self.zero_logits = <float*>calloc(games * leaves_per_game * (nn + 1), sizeof(float))
        self.eval_values = <float*>calloc(games * leaves_per_game, sizeof(float))
        self.own_planes = <uint8_t*>calloc(games * leaves_per_game * self.planes * nn, 1)
        if (self.search_games == NULL or self.leaves == NULL or self.batch_sizes == NULL
                or self.path_hash == NULL or self.scratch_planes == NULL
                or self.zero_logits == NULL or self.eval_values == NULL or self.own_planes == NULL):
            raise MemoryError()
        memset(&self.spare, 0, sizeof(Tree))
        self.spare.with_bias = self.params.value_bias > 0.0
        for g in range(games):
            self.search_games[g].tree.with_bias = self.params.value_bias > 0.0
            if not tree_reserve(&self.search_games[g].tree, TREE_INITIAL_NODES if TREE_INITIAL_NODES < max_nodes else max_nodes, max_nodes):
                raise MemoryError()
            if not history_init(&self.search_games[g].history, 2 * nn + 64):
                raise MemoryError()
            if self.params.value_bias > 0.0 and not bias_table_init(&self.search_games[g].bias):
                raise MemoryError()
            rng_seed(&self.search_games[g].rng, self.seed ^ (<uint64_t>(g + 1) * <uint64_t>0x9E3779B97F4A7C15))
            board_init(&self.search_games[g].root_board, size, komi)
            self._reset_game(&self.search_games[g])

    def __dealloc__(self):
        cdef int g
        if self.search_games != NULL:
            for g in range(self.games):
                tree_free(&self.search_games[g].tree)
                history_free(&self.search_games[g].history)
                bias_table_free(&self.search_games[g].bias)
            free(self.search_games)
        tree_free(&self.spare)
        free(self.leaves)
        free(self.batch_sizes)
        free(self.path_hash)
        free(self.scratch_planes)
        free(self.zero_logits)
        free(self.eval_values)
        free(self.own_planes)

    # --- per-game state ---------------------------------------------------------------------

    cdef void _reset_game(self, SearchGame* s) noexcept nogil:
        # A new root position: empty tree, no search, no noise, no in-game history.
        tree_reset(&s.tree, self.size * self.size)
        s.target = 0
        s.inflight = 0
        s.active = 0
        s.noise_wanted = 0
        s.noise_done = 0
        s.full_search = 1
        s.root_mask_valid = 0
        history_clear(&s.history)
        s.low_streak[0] = s.low_streak[1] = s.low_streak[2] = 0
        s.would_resign = 0
        s.would_resign_move = -1
        s.gumbel = 0
        s.gumbel_ready = 0
        s.resign_disabled = rng_uniform(&s.rng) < self.params.resign_disabled_fraction

    cdef SearchGame* _search_game(self, int g) except NULL:
        if not 0 <= g < self.games:
            raise IndexError(f"game {g} is not in 0..{self.games - 1}")
        return &self.search_games[g]

    def set_position(self, int g, position, history=None):
        """Makes `position` (a fastgo Board or Game) the root of game g, with an empty tree.

        From a Game, the root's legal moves are the Game's (positional superko included) and the
        Game's earlier positions feed the superko test inside the tree. `history` (positional
        hashes, oldest first) adds to or replaces that for a bare Board. Also starts a new game for
        the resignation bookkeeping (draws whether resignation is disabled in this game)."""
        cdef SearchGame* s = self._search_game(g)
        cdef Board board
        cdef int m, nn = self.size * self.size
        board_obj, game = _as_board(position)
        board = board_obj
        if board.state.size != self.size:
            raise ValueError(f"position is {board.state.size}x{board.state.size}, search is "
                             f"{self.size}x{self.size}")
        if s.inflight:
            raise RuntimeError(f"game {g} has leaves in flight; apply them first")
        hashes = []
        mask = None
        if game is not None:
            hashes = list(_game_history(game))
            mask = np.asarray(game.legal_moves(), dtype=np.uint8)
        if history is not None:
            hashes.extend(int(h) for h in history)
        board_copy(&s.root_board, &board.state)
        self._reset_game(s)
        for h in hashes:
            history_push(&s.history, <uint64_t>(int(h) & 0xFFFFFFFFFFFFFFFF))
        if mask is not None:
            if mask.shape != (nn + 1,):
                raise ValueError(f"game.legal_moves() has shape {mask.shape}, expected ({nn + 1},)")
            for m in range(nn + 1):
                s.root_mask[m] = 1 if mask[m] else 0
            s.root_mask[nn] = 1
            s.root_mask_valid = 1

    def advance(self, int g, int move):
        """Plays `move` at game g's root; the subtree below it becomes the new root (tree reuse;
        the tree is compacted when more than half its capacity is used). ValueError, nothing
        changed, if the move is illegal at the root."""
        cdef SearchGame* s = self._search_game(g)
        cdef Tree* t = &s.tree
        cdef int nn = self.size * self.size
        cdef int32_t child
        cdef uint64_t old_hash
        if s.inflight:
            raise RuntimeError(f"game {g} has leaves in flight; apply them first")
        if not 0 <= move <= nn or not board_is_legal(&s.root_board, move):
            raise ValueError(f"move {move} is illegal at the root of game {g}")
        if s.root_mask_valid and not s.root_mask[move]:
            raise ValueError(f"move {move} is illegal at the root of game {g} (superko)")
        child = find_child(t, t.root, move)
        if child != NO_NODE and (t.flags[child] & FLAG_ILLEGAL):
            raise ValueError(f"move {move} is illegal at the root of game {g} (superko)")
        old_hash = board_position_hash(&s.root_board)
        board_play(&s.root_board, move)
        if move != nn:
            history_push(&s.history, old_hash)
        s.root_mask_valid = 0
        s.noise_done = 0
        s.active = 0
        if child == NO_NODE or (t.flags[t.root] & FLAG_PENDING) or self.params.search == SEARCH_GUMBEL:
            tree_reset(t, nn)          # a Gumbel search starts from a fresh root
            return
        t.root = child
        t.parent[child] = NO_PARENT
        t.virtual_loss[child] = 0
        if t.first_child[child] == UNEXPANDED:
            # Only ever evaluated (or scored): start it afresh as an unexpanded root.
            init_node(t, child, NO_PARENT, move, 1.0)
        if t.used > t.capacity // 2:
            self._compact(s)

    cdef int _compact(self, SearchGame* s) except -1:
        cdef Tree tmp
        if not tree_reserve(&self.spare, s.tree.used, self.params.max_nodes):
            return 0          # no memory for the copy: keep the garbage, the tree still works
        compact_into(&self.spare, &s.tree)
        tmp = s.tree
        s.tree = self.spare
        self.spare = tmp
        return 0

    cdef void _bias_restart(self, SearchGame* s) noexcept nogil:
        # A search begins with no contexts; the nodes a reused tree keeps give up their shares
        # and add their errors again when a playout next passes them.
        cdef Tree* t = &s.tree
        cdef int32_t i
        bias_table_clear(&s.bias)
        for i in range(t.used):
            t.bias_num[i] = 0.0
            t.bias_den[i] = 0.0

    # --- the search loop --------------------------------------------------------------------

    def start(self, visits, games=None, cheap_visits=None, gumbel_scale=None):
        """Begins a search for each game in `games` (default all): it wants simulations until
        the root's children hold `visits` visits in total (cheap_visits for a cheap search under
        playout-cap randomization; the argument overrides the constructor's for this start).
        Adds the root noise where the root is already expanded. gumbel_scale: the Gumbel noise
        of these searches (default the constructor's; 0 for a deterministic player's move)."""
        cdef SearchGame* s
        cdef int g
        cdef int v = int(visits)
        cdef int cheap = self.params.cheap_visits if cheap_visits is None else int(cheap_visits)
        cdef float scale = self.params.gumbel_scale if gumbel_scale is None else float(gumbel_scale)
        if v < 0:
            raise ValueError(f"visits must be >= 0, got {visits}")
        if cheap < 0:
            raise ValueError(f"cheap_visits must be >= 0, got {cheap_visits}")
        if not (scale >= 0.0 and scale <= 1e6):
            raise ValueError(f"gumbel_scale must be in 0..1e6, got {gumbel_scale}")
        for g in (range(self.games) if games is None else games):
            s = self._search_game(g)
            if s.inflight:
                raise RuntimeError(f"game {g} has leaves in flight; apply them first")
            s.full_search = 1
            s.target = v
            if cheap > 0 and rng_uniform(&s.rng) >= self.params.full_search_fraction:
                s.full_search = 0
                s.target = cheap
            s.noise_wanted = s.full_search and self.params.noise_weight > 0.0
            s.gumbel = self.params.search == SEARCH_GUMBEL
            if s.gumbel:
                # Sequential halving needs the visits of this search alone: a fresh root.
                tree_reset(&s.tree, self.size * self.size)
                s.gumbel_ready = 0
                s.gumbel_scale = scale
                s.noise_wanted = 0
                s.noise_done = 0
            if self.params.value_bias > 0.0:
                self._bias_restart(s)
            s.active = not board_is_over(&s.root_board) and s.target > 0
            if (s.noise_wanted and not s.noise_done and s.tree.first_child[s.tree.root] != UNEXPANDED
                    and not (s.tree.flags[s.tree.root] & FLAG_PENDING)):
                _add_noise(s, self.params.dirichlet_alpha, self.params.noise_weight)

    @property
    def in_flight(self):
        """Batches collected and not yet applied."""
        return self.batch_count

    def cancel(self):
        """Drops every batch in flight (an evaluator failed): each pending leaf loses its
        virtual loss and its unevaluated children, so the search is usable again, as if those
        descents never happened. Returns the number of leaves dropped."""
        cdef int i, dropped = self.leaf_count
        cdef Leaf* leaf
        cdef SearchGame* s
        cdef Tree* t
        for i in range(self.leaf_count):
            leaf = &self.leaves[(self.leaf_head + i) % self.leaf_cap]
            s = &self.search_games[leaf.game]
            t = &s.tree
            undo_virtual_loss(t, leaf.node)
            t.flags[leaf.node] &= ~FLAG_PENDING
            t.first_child[leaf.node] = UNEXPANDED      # its children stay as garbage until compaction
            t.num_children[leaf.node] = 0
        self.leaf_head = self.leaf_count = 0
        self.batch_head = self.batch_count = 0
        for i in range(self.games):
            self.search_games[i].inflight = 0
            self.search_games[i].active = 0
        return dropped

    def idle_games(self):
        """int32 array of the games whose search has ended (or never started) and that have no
        leaf in flight: a move may be chosen and played there now."""
        cdef int g, k = 0
        out = np.empty(self.games, dtype=np.int32)
        cdef int32_t[::1] o = out
        for g in range(self.games):
            if not self.search_games[g].active and self.search_games[g].inflight == 0:
                o[k] = g
                k += 1
        return out[:k]

    @property
    def done(self):
        """True when no game wants more simulations and nothing is in flight."""
        cdef int g
        if self.batch_count:
            return False
        for g in range(self.games):
            if self.search_games[g].active:
                return False
        return True

    def collect(self, cnp.uint8_t[:, :, :, ::1] out not None):
        """Selects leaves for every game that wants simulations and writes their planes to
        out[0 .. count-1] ([rows, planes, N, N] uint8, rows >= games * leaves_per_game).
        Returns count (0: nothing to evaluate now). The batch is in flight until apply()."""
        cdef int count
        cdef int n = self.size
        if out.shape[0] < self.games * self.params.leaves_per_game or out.shape[1] != self.planes \
                or out.shape[2] != n or out.shape[3] != n:
            raise ValueError(f"out has shape {tuple(out.shape)[:4]}, expected "
                             f"({self.games * self.params.leaves_per_game}, {self.planes}, {n}, {n})")
        if self.batch_count == self.params.max_batches:
            raise RuntimeError(f"{self.params.max_batches} batches already in flight; apply one first")
        with nogil:
            count = self._collect(&out[0, 0, 0, 0], EVAL_EXTERNAL)
        return count

    def apply(self, logits, values):
        """Evaluations of the oldest batch in flight: logits [count, N*N + 1] and values [count]
        (float32, or anything numpy turns into it), row i for the i-th leaf collect() wrote."""
        cdef int count, nn = self.size * self.size, i, j
        if self.batch_count == 0:
            raise RuntimeError("no batch in flight")
        count = self.batch_sizes[self.batch_head]
        cdef cnp.ndarray la = np.ascontiguousarray(logits, dtype=np.float32)
        cdef cnp.ndarray va = np.ascontiguousarray(values, dtype=np.float32).reshape(-1)
        if la.ndim != 2 or la.shape[0] != count or la.shape[1] != nn + 1:
            raise ValueError(f"logits have shape {np.shape(la)}, expected ({count}, {nn + 1}); "
                             f"batch left in flight")
        if va.shape[0] != count:
            raise ValueError(f"values have shape {np.shape(va)}, expected ({count},)")
        cdef const float* lp = <const float*>la.data
        cdef const float* vp = <const float*>va.data
        cdef bint finite = 1
        with nogil:
            for i in range(count * (nn + 1)):
                if not isfinite(lp[i]):
                    finite = 0
                    break
            for i in range(count):
                if not isfinite(vp[i]):
                    finite = 0
                    break
        if not finite:
            raise ValueError("logits or values are not all finite; batch left in flight")
        with nogil:
            self._apply(lp, vp, EVAL_EXTERNAL)

    def run(self, evaluator, visits, games=None, gumbel_scale=None):
        """start(visits, games, gumbel_scale=gumbel_scale), then collect / evaluate / apply until
        done. `evaluator` is a callable(planes uint8 [count, P, N, N]) -> (logits [count, N*N+1],
        values [count]), or
        'uniform' / 'rollout' for the built-in C evaluators (no Python call per batch)."""
        cdef int mode, count, n = self.size
        if self.batch_count:
            raise RuntimeError("batches in flight; run() needs the search idle")
        self.start(visits, games, gumbel_scale=gumbel_scale)
        if isinstance(evaluator, str):
            if evaluator not in _BUILTIN:
                raise ValueError(f"unknown evaluator {evaluator!r}; a callable, 'uniform' or 'rollout'")
            mode = _BUILTIN[evaluator]
            with nogil:
                while True:
                    count = self._collect(self.own_planes, mode)
                    if count == 0:
                        break
                    self._apply(self.zero_logits, self.eval_values, mode)
            return
        if not callable(evaluator):
            raise TypeError(f"evaluator must be callable or 'uniform' / 'rollout', got {evaluator!r}")
        buf = np.empty((self.games * self.params.leaves_per_game, self.planes, n, n), dtype=np.uint8)
        try:
            while True:
                count = self.collect(buf)
                if count == 0:
                    break
                logits, values = evaluator(buf[:count])
                self.apply(logits, values)
        except BaseException:
            self.cancel()          # an evaluator that failed leaves no leaf in flight behind
            raise

    cdef int _collect(self, uint8_t* out, int mode) noexcept nogil:
        cdef int g, taken, status, count = 0, idx
        cdef int row_bytes = self.planes * self.size * self.size
        cdef SearchGame* s
        if self.batch_count == self.params.max_batches:
            return 0
        for g in range(self.games):
            s = &self.search_games[g]
            if not s.active:
                continue
            taken = 0
            while taken < self.params.leaves_per_game and s.target - root_child_visits(&s.tree) - s.inflight > 0:
                idx = (self.leaf_head + self.leaf_count + count) % self.leaf_cap
                status = self._descend(s, g, out + count * row_bytes, &self.leaves[idx], mode)
                if status == DESCENT_LEAF:
                    count += 1
                    taken += 1
                    s.inflight += 1
                elif status == DESCENT_COLLISION:
                    break
                else:
                    self.simulations += 1
            if s.inflight == 0 and root_child_visits(&s.tree) >= s.target:
                s.active = 0
        if count:
            self.batch_sizes[(self.batch_head + self.batch_count) % self.params.max_batches] = count
            self.batch_count += 1
            self.leaf_count += count
        return count

    cdef int _descend(self, SearchGame* s, int g, uint8_t* out, Leaf* leaf, int mode) noexcept nogil:
        # One simulation's descent from the root of game g (see DESCENT_*).
        cdef Tree* t = &s.tree
        cdef BoardState* b = &self.work
        cdef int nn = self.size * self.size, depth, move
        cdef int32_t node, child
        cdef uint64_t h
        cdef uint8_t f
        cdef float v
        while True:                       # restarts after a superko-illegal child is found
            board_copy(b, &s.root_board)
            node = t.root
            depth = 0
            self.path_hash[0] = board_position_hash(b)
            t.virtual_loss[node] += 1
            while True:
                f = t.flags[node]
                if f & FLAG_PENDING:
                    undo_virtual_loss(t, node)
                    return DESCENT_COLLISION
                if f & FLAG_TERMINAL:
                    self._backup(s, node, terminal_value(f))
                    return DESCENT_TERMINAL
                if t.first_child[node] == UNEXPANDED:
                    if board_is_over(b):
                        v = result_for(b, b.to_move)
                        t.flags[node] |= FLAG_TERMINAL | (FLAG_WIN if v > 0 else (FLAG_LOSS if v < 0 else 0))
                        self._backup(s, node, v)
                        return DESCENT_TERMINAL
                    self._expand(s, node, b)
                    t.flags[node] |= FLAG_PENDING
                    if self.params.value_bias > 0.0:
                        t.bias_key[node] = bias_key(b)
                    leaf.game = g
                    leaf.node = node
                    leaf.sym = 0
                    leaf.value = 0.0
                    if mode == EVAL_ROLLOUT:
                        v = b.to_move
                        board_playout(b, &s.rng)
                        leaf.value = result_for(b, <int>v)
                    else:
                        if self.params.random_symmetry:
                            leaf.sym = rng_below(&s.rng, 8)
                        if leaf.sym == 0:
                            encode(b, self.encoding_id, out)
                        else:
                            encode(b, self.encoding_id, self.scratch_planes)
                            sym_planes(self.scratch_planes, out, self.planes, self.size, leaf.sym)
                    return DESCENT_LEAF
                if node == t.root and s.gumbel:
                    child = gumbel_select_root(s, &self.params.gumbel) if s.gumbel_ready else NO_NODE
                    if child == NO_NODE:
                        undo_virtual_loss(t, node)
                        return DESCENT_COLLISION
                else:
                    child = puct_select(t, node, self.params.c_puct, self.params.fpu_reduction,
                                        self.params.virtual_loss)
                move = t.move[child]
                board_play(b, move)
                depth += 1
                h = board_position_hash(b)
                if move != nn and history_repeats(&s.history, self.path_hash, depth, h):
                    t.flags[child] |= FLAG_ILLEGAL
                    undo_virtual_loss(t, node)
                    break
                self.path_hash[depth] = h
                t.virtual_loss[child] += 1
                node = child

    cdef void _backup(self, SearchGame* s, int32_t node, float value) noexcept nogil:
        # fastgo.puct.backup, or with the subtree value-bias correction where it is on
        if self.params.value_bias > 0.0:
            backup_biased(&s.tree, &s.bias, node, value, self.params.value_bias,
                          self.params.value_bias_alpha)
        else:
            backup(&s.tree, node, value)

    cdef void _expand(self, SearchGame* s, int32_t node, const BoardState* b) noexcept nogil:
        # Allocates the children of `node`: one per legal move (pass always), priors 0 until
        # apply(). Leaves the node unexpanded if the tree is at max_nodes.
        cdef Tree* t = &s.tree
        cdef int nn = self.size * self.size, m, count = 0
        cdef int32_t first
        cdef const uint8_t* mask
        if node == t.root and s.root_mask_valid:
            mask = s.root_mask
        else:
            board_legal_moves(b, self.legal_mask)
            mask = self.legal_mask
        for m in range(nn + 1):
            count += mask[m] != 0
        if not tree_reserve(t, t.used + count, self.params.max_nodes):
            return
        first = t.used
        for m in range(nn + 1):
            if mask[m]:
                init_node(t, t.used, node, m, 0.0)
                t.used += 1
        t.first_child[node] = first
        t.num_children[node] = <int16_t>count

    cdef void _apply(self, const float* logits, const float* values, int mode) noexcept nogil:
        # Applies the oldest batch in flight; row i of logits / values belongs to its i-th leaf.
        cdef int count = self.batch_sizes[self.batch_head], i, j, k, idx, m
        cdef int nn = self.size * self.size, n = self.size
        cdef Leaf* leaf
        cdef SearchGame* s
        cdef Tree* t
        cdef int32_t node, first
        cdef const float* row
        cdef float mx, total, v, p
        for i in range(count):
            leaf = &self.leaves[(self.leaf_head + i) % self.leaf_cap]
            s = &self.search_games[leaf.game]
            t = &s.tree
            node = leaf.node
            first = t.first_child[node]
            if mode == EVAL_EXTERNAL:
                row = logits + i * (nn + 1)
                v = values[i]
            else:
                row = self.zero_logits
                v = leaf.value
            if first != UNEXPANDED:
                k = t.num_children[node]
                mx = -INFINITY
                for j in range(k):
                    m = t.move[first + j]
                    if m != nn and leaf.sym != 0:
                        m = sym_move(m, n, leaf.sym)
                    t.prior[first + j] = row[m]
                    if row[m] > mx:
                        mx = row[m]
                total = 0.0
                for j in range(k):
                    p = exp(t.prior[first + j] - mx)
                    t.prior[first + j] = p
                    total += p
                for j in range(k):
                    t.prior[first + j] /= total
                if node == t.root and s.noise_wanted and not s.noise_done:
                    _add_noise(s, self.params.dirichlet_alpha, self.params.noise_weight)
            t.flags[node] &= ~FLAG_PENDING
            v = clamp_value(v)
            if node == t.root and s.gumbel and not s.gumbel_ready:
                s.root_raw_value = v
                gumbel_prepare_root(s, self.params.gumbel_considered, s.gumbel_scale)
            if self.params.value_bias > 0.0:
                # the network's value, less the bias its context has shown so far
                t.raw_value[node] = v
                v = clamp_value(v - self.params.value_bias * bias_of(&s.bias, t.bias_key[node]))
                t.own_value[node] = v
            self._backup(s, node, v)
            s.inflight -= 1
            self.simulations += 1
            if s.inflight == 0 and root_child_visits(&s.tree) >= s.target:
                s.active = 0
        self.leaf_head = (self.leaf_head + count) % self.leaf_cap
        self.leaf_count -= count
        self.batch_head = (self.batch_head + 1) % self.params.max_batches
        self.batch_count -= 1

    # --- results ----------------------------------------------------------------------------

    def root_visits(self, int g):
        """int32 [N*N + 1]: visits of each root move (0 for moves not searched or illegal)."""
        cdef SearchGame* s = self._search_game(g)
        cdef Tree* t = &s.tree
        cdef int32_t first = t.first_child[t.root], j
        out = np.zeros(self.size * self.size + 1, dtype=np.int32)
        cdef int32_t[::1] o = out
        if first != UNEXPANDED:
            for j in range(t.num_children[t.root]):
                o[t.move[first + j]] = t.visits[first + j]
        return out

    def root_value(self, int g):
        """Mean value at the root, from the side to move there (0.0 before any visit)."""
        cdef SearchGame* s = self._search_game(g)
        cdef Tree* t = &s.tree
        if t.visits[t.root] == 0:
            return 0.0
        return t.value_sum[t.root] / t.visits[t.root]

    def root_priors(self, int g):
        """float32 [N*N + 1]: the root's priors (with noise if added), 0 where no child."""
        cdef SearchGame* s = self._search_game(g)
        cdef Tree* t = &s.tree
        cdef int32_t first = t.first_child[t.root], j
        out = np.zeros(self.size * self.size + 1, dtype=np.float32)
        if first != UNEXPANDED:
            for j in range(t.num_children[t.root]):
                out[t.move[first + j]] = t.prior[first + j]
        return out

    def improved_policy(self, g):
        """float32 [N*N + 1]: the Gumbel search's policy target softmax(log prior + sigma(completed
        q)) over the root's legal moves (0 elsewhere); all zeros before the root is evaluated.
        Only for search='gumbel' (a PUCT search's target is its visits)."""
        cdef SearchGame* s = self._search_game(g)
        cdef Tree* t = &s.tree
        cdef int32_t first = t.first_child[t.root], j, k
        if self.params.search != SEARCH_GUMBEL:
            raise RuntimeError("improved_policy() needs search='gumbel'; a PUCT target is root_visits()")
        out = np.zeros(self.size * self.size + 1, dtype=np.float32)
        if first == UNEXPANDED or not s.gumbel_ready:
            return out
        k = t.num_children[t.root]
        probs = np.zeros(k, dtype=np.float32)
        cdef float[::1] pv = probs
        improved_policy(t.prior + first, t.visits + first, t.value_sum + first, t.flags + first,
                        k, s.root_raw_value, &self.params.gumbel, &pv[0])
        for j in range(k):
            out[t.move[first + j]] = pv[j]
        return out

    def root_gumbel(self, int g):
        """The Gumbel state of game g's root (tests, tools): {'noise': float32 [N*N + 1] g(a) (NaN
        where the root has no such child), 'considered': m, 'raw_value': the root's network value,
        'ready': whether the noise is drawn}."""
        cdef SearchGame* s = self._search_game(g)
        cdef Tree* t = &s.tree
        cdef int32_t first = t.first_child[t.root], j
        noise = np.full(self.size * self.size + 1, np.nan, dtype=np.float32)
        if first != UNEXPANDED and s.gumbel_ready:
            for j in range(t.num_children[t.root]):
                noise[t.move[first + j]] = s.gumbel_noise[j]
        return {"noise": noise, "considered": int(s.gumbel_m) if s.gumbel_ready else 0,
                "raw_value": float(s.root_raw_value) if s.gumbel_ready else 0.0,
                "ready": bool(s.gumbel_ready)}

    def is_full_search(self, int g):
        """Playout-cap randomization: whether game g's current search is a full one (a training
        target) rather than a cheap one."""
        return bool(self._search_game(g).full_search)

    def root_board(self, int g):
        """A copy of game g's root position as a Board."""
        cdef SearchGame* s = self._search_game(g)
        cdef Board b = Board.__new__(Board)
        board_copy(&b.state, &s.root_board)
        return b

    def resign_info(self, int g):
        """Resignation bookkeeping of game g: {'disabled': bool, 'would_resign': color or 0,
        'would_resign_move': move number or -1} (the latter two where it is disabled)."""
        cdef SearchGame* s = self._search_game(g)
        return {"disabled": bool(s.resign_disabled), "would_resign": s.would_resign,
                "would_resign_move": s.would_resign_move}

    def choose_move(self, int g, temperature=None, bint resign=True):
        """The move to play at game g's root: sampled in proportion to visits ** (1 / T) for
        temperature T > 0, the most visited (ties: higher prior) for T = 0; T None: 1 before
        move `temperature_moves`, 0 after. Returns RESIGN (-2) where resignation is on and the
        root value has been below resign_threshold for resign_consecutive own moves; call it
        once per move (it counts those moves). The pass where the root has no visited child.
        (fastgo.move_choice)"""
        cdef SearchGame* s = self._search_game(g)
        cdef double temp
        if temperature is None:
            temp = 1.0 if s.root_board.num_moves < self.params.temperature_moves else 0.0
        else:
            temp = float(temperature)
        return choose_root_move(s, temp, resign, self.params.resign_threshold,
                                self.params.resign_consecutive, &self.params.gumbel)

    def analysis(self, int g, int max_pv=10):
        """Root children with visits, most visited first: dicts with move, visits, winrate (for
        the side to move at the root, 0..1), prior, pv (moves from this one on)."""
        return root_analysis(&self._search_game(g).tree, max_pv)

    def tree_arrays(self, int g):
        """Copies of game g's node arrays [0 .. used) and the root index, for tests and tools."""
        cdef SearchGame* s = self._search_game(g)
        cdef Tree* t = &s.tree
        cdef int n = t.used
        if not t.with_bias:         # no bias arrays: the correction's fields read as zero
            bias = {"bias_key": np.zeros(n, np.uint64), "raw_value": np.zeros(n, np.float32),
                     "own_value": np.zeros(n, np.float32), "bias_num": np.zeros(n, np.float32),
                     "bias_den": np.zeros(n, np.float32)}
        else:
            bias = {
                "bias_key": np.asarray(<uint64_t[:n]>t.bias_key).copy(),
                "raw_value": np.asarray(<float[:n]>t.raw_value).copy(),
                "own_value": np.asarray(<float[:n]>t.own_value).copy(),
                "bias_num": np.asarray(<float[:n]>t.bias_num).copy(),
                "bias_den": np.asarray(<float[:n]>t.bias_den).copy()}
        return {
            "root": int(t.root),
            "used": n,
            "parent": np.asarray(<int32_t[:n]>t.parent).copy(),
            "first_child": np.asarray(<int32_t[:n]>t.first_child).copy(),
            "num_children": np.asarray(<int16_t[:n]>t.num_children).copy(),
            "move": np.asarray(<int16_t[:n]>t.move).copy(),
            "prior": np.asarray(<float[:n]>t.prior).copy(),
            "visits": np.asarray(<int32_t[:n]>t.visits).copy(),
            "value_sum": np.asarray(<float[:n]>t.value_sum).copy(),
            "virtual_loss": np.asarray(<int32_t[:n]>t.virtual_loss).copy(),
            "flags": np.asarray(<uint8_t[:n]>t.flags).copy(),
            **bias,
        }


def _game_history(game):
    # Positional hashes of the game's positions before the current one, oldest first (Game keeps
    # them in hash_history, the current position last); none when the Game plays without superko.
    if not game.superko:
        return []
    hashes = list(game.hash_history)
    if hashes and int(hashes[len(hashes) - 1]) == int(game.board.position_hash):
        hashes = hashes[:len(hashes) - 1]
    return hashes
