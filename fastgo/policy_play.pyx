"""Policy-only play for G games at once: the network's policy is the player (no search).

    play = PolicyPlay(games=G, size=9, komi=7.5, encoding="alphazero", floor=1e-3)
    play.reset(learners, seeds)             # int32 [G] BLACK / WHITE / 0, uint64 [G]
    play.start(g, learner, seed, group)     # or one game at a time
    while play.live:
        count = play.collect(buf, phase)    # encodes the games to move in this phase
        play.apply(logits, values)          # samples, plays and records one move per row
    moves, values = play.record(g)          # int16 [L], float32 [L]
    score, ownership = play.result(g)

Each position is encoded under a random one of the 8 symmetries (from the game's own stream)
and the reply's logits are read back through it. A move is sampled from softmax(logits) over
the acceptable moves (see policy_play.pxd), every probability raised to the floor and
renormalised; positional superko strikes a repeating move and draws again. `collect` and
`apply` run one nogil loop over the games; nothing per position touches Python.

Phases (two-player games, learner against an opponent): PHASE_LEARNER collects the games whose
mover is the learner, PHASE_OPPONENT the others; after the first step every live game is in
every step, alternately for the learner's network and the opponent's, so one request per step
carries the whole batch. PHASE_ALL collects every live game (self-play: learner 0). Games may
face two opponents at once (two mini-batches overlapping): a PHASE_OPPONENT collect puts the
games of group 0 first, then those of group 1 (`group_counts`).
"""
import numpy as np

cimport numpy as cnp
from libc.math cimport exp, isfinite
from libc.stdint cimport uint8_t, int8_t, int16_t, int32_t, int64_t, uint64_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcpy, memset

from fastgo.board cimport Board
from fastgo.constants cimport MAX_MOVES, check_board_size
from fastgo.rules cimport (
    BoardState, BLACK, WHITE, board_init, board_play, board_legal_moves, board_is_eye,
    board_is_over, board_position_hash)
from fastgo.scoring cimport board_score, board_ownership
from fastgo.features cimport encoding_planes, encode
from fastgo.replay cimport check_samples, seek_position
from fastgo.rng cimport Rng, rng_seed, rng_below, rng_uniform
from fastgo.symmetry cimport sym_move, sym_planes
from fastgo.history cimport (
    History, history_init, history_free, history_clear, history_push, history_contains)

cnp.import_array()

from fastgo.features import ENCODING_IDS as _ENCODINGS
globals().update(PHASE_ALL=<int>PHASE_ALL, PHASE_LEARNER=<int>PHASE_LEARNER,
                 PHASE_OPPONENT=<int>PHASE_OPPONENT)

cdef float LOW_LOGIT = -1e30          # a logit that is not finite counts as this


# ---------------------------------------------------------------------------------------------
# The sampler

cdef int acceptable_moves(const BoardState* b, bint allow_pass, int16_t* cand) noexcept nogil:
    cdef int nn = b.size * b.size, color = b.to_move, m, k = 0
    cdef uint8_t mask[MAX_MOVES]
    board_legal_moves(b, mask)
    for m in range(nn):
        if mask[m] and not board_is_eye(b, m, color):
            cand[k] = m
            k += 1
    if allow_pass or k == 0:
        cand[k] = nn
        k += 1
    return k


cdef int _weights(const BoardState* b, const float* logits, int sym, float floor,
                  bint allow_pass, int16_t* cand, double* w) noexcept nogil:
    # cand[k], w[k] for the k acceptable moves: w = max(softmax, floor) (not renormalised).
    cdef int n = b.size, nn = b.size * b.size, m, k, j
    cdef double mx = LOW_LOGIT, total = 0.0, l
    k = acceptable_moves(b, allow_pass, cand)
    for j in range(k):
        m = cand[j]
        l = logits[m if (sym == 0 or m == nn) else sym_move(m, n, sym)]
        if not isfinite(l) or l < LOW_LOGIT:
            l = LOW_LOGIT
        w[j] = l
        if l > mx:
            mx = l
    for j in range(k):
        w[j] = exp(w[j] - mx)
        total += w[j]
    for j in range(k):
        w[j] = w[j] / total
        if w[j] < floor:
            w[j] = floor
    return k


cdef int sample_move(const BoardState* b, const float* logits, int sym, float floor,
                     bint allow_pass, const History* history, Rng* rng,
                     BoardState* scratch) noexcept nogil:
    cdef int16_t cand[MAX_MOVES]
    cdef double w[MAX_MOVES]
    cdef int nn = b.size * b.size, k, j, m, left
    cdef double total = 0.0, r
    # No stone ever captured: every board move adds a stone, no position can repeat.
    cdef bint check = history.length > 0 and (b.captures[BLACK] + b.captures[WHITE]) > 0
    k = _weights(b, logits, sym, floor, allow_pass, cand, w)
    for j in range(k):
        total += w[j]
    left = k
    while left > 0:
        r = rng_uniform(rng) * total
        m = -1
        for j in range(k):
            if w[j] <= 0.0:
                continue
            m = j
            if r < w[j]:
                break
            r -= w[j]
        if m < 0:
            break
        if cand[m] == nn or not check:
            return cand[m]
        memcpy(scratch, b, sizeof(BoardState))
        scratch.track_history = 0          # the planes' history is not needed for a hash
        board_play(scratch, cand[m])
        if not history_contains(history, board_position_hash(scratch)):
            return cand[m]
        total -= w[m]
        w[m] = 0.0
        left -= 1
    return nn


cdef void move_distribution(const BoardState* b, const float* logits, int sym, float floor,
                            bint allow_pass, double* probs) noexcept nogil:
    cdef int16_t cand[MAX_MOVES]
    cdef double w[MAX_MOVES]
    cdef int nn = b.size * b.size, k, j
    cdef double total = 0.0
    k = _weights(b, logits, sym, floor, allow_pass, cand, w)
    for j in range(nn + 1):
        probs[j] = 0.0
    for j in range(k):
        total += w[j]
    for j in range(k):
        probs[cand[j]] = w[j] / total


def _check_logits(logits, int nn):
    arr = np.ascontiguousarray(logits, dtype=np.float32).reshape(-1)
    if arr.shape[0] != nn + 1:
        raise ValueError(f"logits: need {nn + 1} entries, got {arr.shape[0]}")
    return arr


def distribution(Board board not None, logits, *, float floor=1e-3, bint allow_pass=False):
    """float64 [N*N + 1]: the probabilities sample_move draws from for the side to move of
    `board` (before positional superko), logits in the board's own frame."""
    cdef int nn = board.state.size * board.state.size
    cdef float[::1] lv = _check_logits(logits, nn)
    out = np.zeros(nn + 1, dtype=np.float64)
    cdef double[::1] ov = out
    move_distribution(&board.state, &lv[0], 0, floor, allow_pass, &ov[0])
    return out


def acceptable_masks(int size, float komi, const int16_t[::1] moves not None,
                     const int64_t[::1] game_start not None,
                     const int32_t[::1] sample_game not None,
                     const int32_t[::1] sample_move not None,
                     uint8_t[:, ::1] out not None, *, bint allow_pass=False):
    """out[i, m] = 1 where move m is acceptable to sample_move (the sampler's rule: legal, not
    the mover's own eye, the pass only when allow_pass or nothing else is acceptable), else 0,
    for position sample_move[i] of game sample_game[i] (moves[game_start[g] ..
    game_start[g + 1]) as in fastgo.replay.encode_samples), identity symmetry. out: uint8
    [B, N*N + 1]. The positions come from fastgo.replay.seek_position (samples of one game in
    rising move order, as the trainer asks for them, share one replay); indices are checked
    first (fastgo.replay.check_samples). One nogil loop."""
    cdef int nn = size * size, count = sample_game.shape[0], i, j, k
    cdef int cursor[2]
    cdef int16_t cand[MAX_MOVES]
    cdef BoardState* b
    check_board_size(size)
    check_samples(moves, game_start, sample_game, sample_move)
    if out.shape[0] < count or out.shape[1] != nn + 1:
        raise ValueError(f"acceptable_masks: need out [>= {count}, {nn + 1}], got "
                         f"[{out.shape[0]}, {out.shape[1]}]")
    b = <BoardState*>calloc(1, sizeof(BoardState))
    if b == NULL:
        raise MemoryError()
    cursor[0], cursor[1] = -1, 0         # no game on the board yet
    try:
        with nogil:
            for i in range(count):
                # legality and eyes do not read the planes' history
                seek_position(b, size, komi, 0, &moves[0], &game_start[0], sample_game[i],
                              sample_move[i], cursor)
                memset(&out[i, 0], 0, nn + 1)
                k = acceptable_moves(b, allow_pass, cand)
                for j in range(k):
                    out[i, cand[j]] = 1
    finally:
        free(b)
    return out


def sample_moves(Board board not None, logits, *, int draws=1, unsigned long long seed=0,
                 float floor=1e-3, bint allow_pass=False, history=()):
    """int32 [draws]: independent draws of sample_move for the side to move of `board` (the
    board is unchanged); `history`: earlier position hashes (positional superko)."""
    cdef int nn = board.state.size * board.state.size, i
    if not 0 <= floor <= 1:
        raise ValueError(f"floor: must be in [0, 1], got {floor}")
    if not 0 <= draws <= 100_000_000:
        raise ValueError(f"draws: must be in 0..100000000, got {draws}")
    cdef float[::1] lv = _check_logits(logits, nn)
    hashes = [int(h) & 0xFFFFFFFFFFFFFFFF for h in history]
    cdef History hist
    if not history_init(&hist, len(hashes) + 1):
        raise MemoryError()
    for h in hashes:
        history_push(&hist, <uint64_t>h)
    out = np.empty(draws, dtype=np.int32)
    cdef int32_t[::1] ov = out
    cdef Rng rng
    cdef BoardState* scratch = <BoardState*>calloc(1, sizeof(BoardState))
    if scratch == NULL:
        history_free(&hist)
        raise MemoryError()
    rng_seed(&rng, seed)
    try:
        with nogil:
            for i in range(draws):
                ov[i] = sample_move(&board.state, &lv[0], 0, floor, allow_pass, &hist, &rng,
                                    scratch)
    finally:
        free(scratch)
        history_free(&hist)
    return out


# ---------------------------------------------------------------------------------------------
# G games

cdef class PolicyPlay:
    """G games played by sampling from the policy. One object belongs to one thread."""

    cdef PolicyGame* games
    cdef BoardState* scratch
    cdef readonly int num_games, size, planes, cap
    cdef int encoding
    cdef readonly float floor
    cdef readonly bint allow_pass, symmetries
    cdef readonly long long moves_played       # moves applied since construction
    cdef int pending                           # rows of the batch in flight (0: none)
    cdef int counts[2]                         # rows of group 0 / 1 in the last collect
    cdef object _rows, _moves, _values, _scores, _owner, _planes_tmp
    cdef int32_t[::1] rows                     # [G] game of each row in flight
    cdef int16_t[:, ::1] moves                 # [G, cap] moves played, pass = N*N
    cdef float[:, ::1] values                  # [G, cap] value head for the mover, in [-1, 1]
    cdef float[::1] scores                     # [G] Tromp-Taylor score once over (Black's view)
    cdef int8_t[:, ::1] owner                  # [G, N*N] ownership once over
    cdef uint8_t[::1] planes_tmp               # [planes * N * N] one encoding before symmetry

    def __cinit__(self, *, int games=1, int size=9, float komi=7.5, encoding="alphazero",
                  float floor=1e-3, bint allow_pass=False, bint symmetries=True):
        if not 1 <= games <= 65536:
            raise ValueError(f"games: must be in 1..65536, got {games}")
        check_board_size(size)
        if encoding not in _ENCODINGS:
            raise ValueError(f"encoding: {encoding!r} is not one of {sorted(_ENCODINGS)}")
        if not 0.0 <= floor <= 1.0:
            raise ValueError(f"floor: must be in [0, 1], got {floor}")
        self.num_games, self.size, self.floor = games, size, floor
        self.allow_pass, self.symmetries = allow_pass, symmetries
        self.encoding = _ENCODINGS[encoding]
        self.planes = encoding_planes(self.encoding)
        self.cap = 2 * size * size
        self.games = <PolicyGame*>calloc(games, sizeof(PolicyGame))
        self.scratch = <BoardState*>calloc(1, sizeof(BoardState))
        if self.games == NULL or self.scratch == NULL:
            raise MemoryError()
        self._rows = np.zeros(games, dtype=np.int32)
        self._moves = np.zeros((games, self.cap), dtype=np.int16)
        self._values = np.zeros((games, self.cap), dtype=np.float32)
        self._scores = np.zeros(games, dtype=np.float32)
        self._owner = np.zeros((games, size * size), dtype=np.int8)
        self._planes_tmp = np.zeros(self.planes * size * size, dtype=np.uint8)
        self.rows, self.moves, self.values = self._rows, self._moves, self._values
        self.scores, self.owner = self._scores, self._owner
        self.planes_tmp = self._planes_tmp
        cdef int g
        for g in range(games):
            if not history_init(&self.games[g].history, self.cap + 1):
                raise MemoryError()
            board_init(&self.games[g].board, size, komi)
            self.games[g].over = 1

    def __dealloc__(self):
        cdef int g
        if self.games != NULL:
            for g in range(self.num_games):
                history_free(&self.games[g].history)
        free(self.games)
        free(self.scratch)

    def reset(self, learners, seeds):
        """Starts all G games from the empty board: learners int [G] (BLACK, WHITE or 0 for
        self-play), seeds [G] (each game's own stream). Drops a batch in flight."""
        lv = np.asarray(learners, dtype=np.int64).reshape(-1)
        sv = np.asarray([int(x) & 0xFFFFFFFFFFFFFFFF for x in np.asarray(seeds).reshape(-1)],
                        dtype=np.uint64)
        if lv.shape[0] != self.num_games or sv.shape[0] != self.num_games:
            raise ValueError(f"reset: need {self.num_games} learners and seeds, got "
                             f"{lv.shape[0]} and {sv.shape[0]}")
        if not np.isin(lv, (0, BLACK, WHITE)).all():
            raise ValueError("reset: a learner colour must be BLACK, WHITE or 0")
        cdef int g
        for g in range(self.num_games):
            self._start(g, <int32_t>lv[g], <uint64_t>sv[g], 0)
        self.pending = 0

    def start(self, int g, int learner, seed, int group=0):
        """Starts game g alone from the empty board (learner BLACK, WHITE or 0; `group` 0 or 1
        sorts it in PHASE_OPPONENT collects). Not while a batch is in flight."""
        self._game(g)
        if learner not in (0, BLACK, WHITE) or group not in (0, 1):
            raise ValueError(f"start: learner must be BLACK, WHITE or 0 and group 0 or 1, got "
                             f"{learner} and {group}")
        if self.pending:
            raise RuntimeError("start: a batch is in flight")
        self._start(g, learner, <uint64_t>(int(seed) & 0xFFFFFFFFFFFFFFFF), group)

    cdef void _start(self, int g, int32_t learner, uint64_t seed, int group) noexcept:
        cdef PolicyGame* s = &self.games[g]
        cdef uint64_t h
        board_init(&s.board, self.size, s.board.komi)
        rng_seed(&s.rng, seed)
        s.learner = learner
        s.group = group
        s.length = 0
        s.sym = 0
        s.over = 0
        history_clear(&s.history)
        history_push(&s.history, board_position_hash(&s.board))

    @property
    def group_counts(self):
        """(rows of group 0, rows of group 1) in the last collect."""
        return (self.counts[0], self.counts[1])

    @property
    def live(self):
        """Games not over."""
        cdef int g, k = 0
        for g in range(self.num_games):
            k += not self.games[g].over
        return k

    @property
    def in_flight(self):
        return self.pending

    def collect(self, cnp.uint8_t[:, :, :, ::1] out not None, int phase=PHASE_ALL):
        """Encodes every live game to move in `phase` into out[0 .. count) and returns count.
        out: uint8 [>= G, planes, N, N]. The rows wait for apply()."""
        if self.pending:
            raise RuntimeError("collect: the previous batch was not applied")
        if phase not in (PHASE_ALL, PHASE_LEARNER, PHASE_OPPONENT):
            raise ValueError(f"collect: phase must be 0, 1 or 2, got {phase}")
        if (out.shape[0] < self.num_games or out.shape[1] != self.planes
                or out.shape[2] != self.size or out.shape[3] != self.size):
            raise ValueError(f"collect: need a buffer of shape (>= {self.num_games}, "
                             f"{self.planes}, {self.size}, {self.size}), got "
                             f"{(out.shape[0], out.shape[1], out.shape[2], out.shape[3])}")
        with nogil:
            self.pending = self._collect(&out[0, 0, 0, 0], phase)
        return self.pending

    cdef int _collect(self, uint8_t* out, int phase) noexcept nogil:
        cdef int g, grp, count = 0, row_bytes = self.planes * self.size * self.size
        cdef bint mine
        cdef PolicyGame* s
        cdef uint8_t* row
        self.counts[0] = 0
        self.counts[1] = 0
        for grp in range(2 if phase == PHASE_OPPONENT else 1):
            for g in range(self.num_games):
                s = &self.games[g]
                if s.over or (phase == PHASE_OPPONENT and s.group != grp):
                    continue
                if phase != PHASE_ALL:
                    mine = s.learner == 0 or s.board.to_move == s.learner
                    if mine != (phase == PHASE_LEARNER):
                        continue
                row = out + <size_t>count * row_bytes
                s.sym = <int>rng_below(&s.rng, 8) if self.symmetries else 0
                if s.sym == 0:
                    memset(row, 0, row_bytes)
                    encode(&s.board, self.encoding, row)
                else:
                    memset(&self.planes_tmp[0], 0, row_bytes)
                    encode(&s.board, self.encoding, &self.planes_tmp[0])
                    sym_planes(&self.planes_tmp[0], row, self.planes, self.size, s.sym)
                self.rows[count] = g
                count += 1
                self.counts[s.group] += 1
        return count

    def apply(self, logits, values):
        """Plays one sampled move in each game of the batch in flight: logits float32
        [count, N*N + 1] (in the frame of the planes sent), values float32 [count] (the value
        head for the side to move). Returns the number of games that ended."""
        cdef int count = self.pending, nn = self.size * self.size
        la = np.ascontiguousarray(logits, dtype=np.float32)
        va = np.ascontiguousarray(values, dtype=np.float32).reshape(-1)
        if la.ndim != 2 or la.shape[0] != count or la.shape[1] != nn + 1 or va.shape[0] != count:
            raise ValueError(f"apply: need logits ({count}, {nn + 1}) and values ({count},), got "
                             f"{tuple(la.shape)} and {tuple(va.shape)}")
        if count == 0:
            return 0
        cdef const float[:, ::1] lv = la
        cdef const float[::1] vv = va
        cdef int ended
        with nogil:
            ended = self._apply(&lv[0, 0], &vv[0], count)
        self.pending = 0
        return ended

    cdef int _apply(self, const float* logits, const float* values, int count) noexcept nogil:
        cdef int i, g, move, ended = 0, nn = self.size * self.size
        cdef float v
        cdef uint64_t h
        cdef PolicyGame* s
        for i in range(count):
            g = self.rows[i]
            s = &self.games[g]
            v = values[i]
            if not isfinite(v):
                v = 0.0
            self.values[g, s.length] = -1.0 if v < -1.0 else (1.0 if v > 1.0 else v)
            move = sample_move(&s.board, logits + <size_t>i * (nn + 1), s.sym, self.floor,
                               self.allow_pass, &s.history, &s.rng, self.scratch)
            board_play(&s.board, move)
            self.moves[g, s.length] = <int16_t>move
            s.length += 1
            history_push(&s.history, board_position_hash(&s.board))
            self.moves_played += 1
            if board_is_over(&s.board):
                s.over = 1
                self.scores[g] = board_score(&s.board)
                board_ownership(&s.board, &self.owner[g, 0])
                ended += 1
        return ended

    def _game(self, int g):
        if not 0 <= g < self.num_games:
            raise IndexError(f"game {g} out of range 0..{self.num_games - 1}")
        return g

    def is_over(self, int g):
        return bool(self.games[self._game(g)].over)

    def learner(self, int g):
        """BLACK or WHITE: the learner's colour in game g; 0 = self-play."""
        return int(self.games[self._game(g)].learner)

    def record(self, int g):
        """(moves int16 [L], values float32 [L]) of game g so far (copies)."""
        cdef int length = self.games[self._game(g)].length
        return self._moves[g, :length].copy(), self._values[g, :length].copy()

    def result(self, int g):
        """(Tromp-Taylor score from Black's view, ownership int8 [N*N]) of a finished game."""
        if not self.games[self._game(g)].over:
            raise ValueError(f"game {g} is not over")
        return float(self._scores[g]), self._owner[g].copy()

    def board(self, int g):
        """A copy of game g's position as a fastgo.board.Board."""
        cdef Board b = Board(self.size, self.games[self._game(g)].board.komi)
        memcpy(&b.state, &self.games[g].board, sizeof(BoardState))
        return b
