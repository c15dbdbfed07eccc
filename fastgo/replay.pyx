# Replaying recorded games on the C board (see replay.pxd). A game record stores moves only;
# `check_game` verifies them under the self-play rules (positional superko, play stops at two
# passes or the move cap) in time linear in the game, and `encode_samples` rebuilds sampled
# positions for training: replay, encode, one of the 8 symmetries, dense targets, one nogil loop.
import numpy as np

cimport numpy as cnp
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport calloc, free
from libc.string cimport memset

from fastgo.constants cimport check_board_size
from fastgo.rules cimport (
    BoardState, BLACK, board_init, board_play, board_is_legal, board_is_over, board_position_hash)
from fastgo.scoring cimport board_score, board_ownership
from fastgo.features cimport encoding_planes, encode
from fastgo.symmetry cimport sym_move, sym_planes
from fastgo.history cimport History, history_init, history_free, history_push, history_contains

cnp.import_array()

_REASONS = {REPLAY_OFF_BOARD: "off board", REPLAY_ILLEGAL: "illegal (occupied, suicide or ko)",
            REPLAY_SUPERKO: "superko", REPLAY_AFTER_END: "played after the game ended"}
from fastgo.features import ENCODING_IDS as _ENCODINGS


cdef int _replay_checked(BoardState* b, const int16_t* moves, int count, History* seen,
                         int* bad) noexcept nogil:
    # Plays moves[0 .. count) on b (a fresh board); returns REPLAY_OK or the code of the first
    # refused move, whose index goes to bad[0]. seen: an empty history of count + 1 positions.
    cdef int i, nn = b.size * b.size, move
    cdef uint64_t h
    history_push(seen, board_position_hash(b))
    for i in range(count):
        move = moves[i]
        bad[0] = i
        if board_is_over(b):
            return REPLAY_AFTER_END
        if move < 0 or move > nn:
            return REPLAY_OFF_BOARD
        if not board_play(b, move):
            return REPLAY_ILLEGAL
        if move == nn:
            continue
        h = board_position_hash(b)
        if history_contains(seen, h):
            return REPLAY_SUPERKO
        history_push(seen, h)
    bad[0] = -1
    return REPLAY_OK


cdef int check_samples(const int16_t[::1] moves, const int64_t[::1] game_start,
                       const int32_t[::1] sample_game, const int32_t[::1] sample_move) except -1:
    cdef int64_t games = game_start.shape[0] - 1
    cdef int i, g
    if games < 0:
        raise ValueError("game_start needs at least one entry")
    if sample_move.shape[0] != sample_game.shape[0]:
        raise ValueError(f"sample_game and sample_move must have the same length, got "
                         f"{sample_game.shape[0]} and {sample_move.shape[0]}")
    for i in range(sample_game.shape[0]):
        g = sample_game[i]
        if not 0 <= g < games or not 0 <= sample_move[i] < game_start[g + 1] - game_start[g]:
            raise ValueError(f"sample {i}: game {g}, move {sample_move[i]} out of range")
        if game_start[g] < 0 or game_start[g + 1] > moves.shape[0]:
            raise ValueError(f"sample {i}: game {g} indexes past the moves")
    return 0


cdef void seek_position(BoardState* b, int size, float komi, bint track_history,
                        const int16_t* moves, const int64_t* game_start, int g, int m,
                        int* cursor) noexcept nogil:
    cdef int64_t start = game_start[g]
    if cursor[0] != g or m < cursor[1]:
        board_init(b, size, komi)
        b.track_history = track_history
        cursor[0] = g
        cursor[1] = 0
    while cursor[1] < m:
        board_play(b, moves[start + cursor[1]])
        cursor[1] += 1


def check_game(int size, float komi, const int16_t[::1] moves not None):
    """Replays `moves` (pass = N*N) from the empty board under positional superko.

    Returns (bad, reason, over, score, ownership): bad is the index of the first refused move
    (-1: all legal) and reason its cause; over whether the final position ended the game (two
    passes or the move cap); score the Tromp-Taylor score of the final position (Black minus
    White minus komi); ownership int8 [N*N] of the final position (+1 Black, -1 White, 0 dame).
    Time and memory are linear in len(moves)."""
    cdef BoardState* b
    cdef History seen
    cdef int count = moves.shape[0], bad = -1, code
    cdef float score
    cdef bint over
    check_board_size(size)
    ownership = np.zeros(size * size, dtype=np.int8)
    cdef int8_t[::1] own = ownership
    if not history_init(&seen, count + 1):
        raise MemoryError()
    b = <BoardState*>calloc(1, sizeof(BoardState))
    if b == NULL:
        history_free(&seen)
        raise MemoryError()
    try:
        with nogil:
            board_init(b, size, komi)
            b.track_history = 0
            code = _replay_checked(b, &moves[0] if count else NULL, count, &seen, &bad)
            over = board_is_over(b)
            score = board_score(b)
            board_ownership(b, &own[0])
    finally:
        free(b)
        history_free(&seen)
    return bad, _REASONS.get(code, ""), bool(over), float(score), ownership


def encode_samples(int size, float komi, encoding,
                   const int16_t[::1] moves not None, const int64_t[::1] game_start not None,
                   const int8_t[::1] winner not None, const int8_t[:, ::1] ownership not None,
                   const int64_t[::1] policy_start not None, const int16_t[::1] policy_moves not None,
                   const float[::1] policy_visits not None, const uint8_t[::1] full not None,
                   const int32_t[::1] sample_game not None, const int32_t[::1] sample_move not None,
                   const uint8_t[::1] sample_sym not None,
                   uint8_t[:, :, :, ::1] out_planes not None, float[:, ::1] out_policy not None,
                   float[::1] out_policy_weight not None, float[::1] out_value not None,
                   float[:, ::1] out_ownership not None, *, const float[::1] score=None,
                   float[::1] out_score=None, int64_t[::1] out_reply=None,
                   float[::1] out_reply_weight=None):
    """Rebuilds B sampled positions and their targets (the trainer's data path).

    The window holds G games: game g's moves are moves[game_start[g] .. game_start[g+1]), its
    winner winner[g] (1 Black, -1 White, 0 draw) and final ownership ownership[g] (int8 [N*N],
    Black's view). Position p = game_start[g] + m (m moves played) has its search's visits in
    policy_moves / policy_visits[policy_start[p] .. policy_start[p+1]) and full[p] = 1 where it
    was a full search. Sample i is position sample_move[i] of game sample_game[i] under symmetry
    sample_sym[i]. Writes planes [B, P, N, N], the visit distribution [B, N*N+1] (zeros and weight
    0 where there is none), the value target [B] and ownership [B, N*N], both from the side to
    move's view. Optional auxiliary targets (KataGo's): with `score` (float [G], game g's final
    score margin, Black's view) and `out_score` [B], the margin from the side to move's view;
    with `out_reply` (int64 [B]) and `out_reply_weight` [B], the opponent's reply (the move
    played at position m + 1, moved by the symmetry, pass = N*N) with weight 1, or 0 with
    weight 0 at a game's last position. Indices are checked before the loop (check_samples);
    games are replayed unchecked (the reader verified them), samples of one game in rising move
    order sharing one replay (seek_position)."""
    cdef int enc = _ENCODINGS.get(encoding, -1)
    cdef int planes, nn = size * size, count = sample_game.shape[0]
    cdef int64_t games = game_start.shape[0] - 1, positions
    cdef int i, j, m, g, sym, point, row_bytes, mover
    cdef int cursor[2]
    cdef int64_t start, p, k
    cdef bint want_score = out_score is not None, want_reply = out_reply is not None
    cdef float total, sign
    cdef BoardState* b
    cdef uint8_t* scratch
    if enc < 0:
        raise ValueError(f"unknown encoding {encoding!r}")
    check_board_size(size)
    planes = encoding_planes(enc)
    row_bytes = planes * nn
    positions = policy_start.shape[0] - 1
    if games < 0 or positions < 0:
        raise ValueError("game_start and policy_start need at least one entry")
    if winner.shape[0] < games or ownership.shape[0] < games or ownership.shape[1] != nn:
        raise ValueError("winner / ownership do not cover every game")
    if full.shape[0] < positions or policy_visits.shape[0] < policy_moves.shape[0]:
        raise ValueError("full / policy_visits shorter than the positions / policy_moves")
    if (sample_move.shape[0] != count or sample_sym.shape[0] != count or out_planes.shape[0] < count
            or out_policy.shape[0] < count or out_value.shape[0] < count
            or out_policy_weight.shape[0] < count or out_ownership.shape[0] < count):
        raise ValueError("sample arrays and outputs must have the same length")
    if (out_planes.shape[1] != planes or out_planes.shape[2] != size or out_planes.shape[3] != size
            or out_policy.shape[1] != nn + 1 or out_ownership.shape[1] != nn):
        raise ValueError("output shapes do not match the board size and encoding")
    if want_score and (score is None or score.shape[0] < games or out_score.shape[0] < count):
        raise ValueError("out_score needs score covering every game and a row per sample")
    if want_reply and (out_reply_weight is None or out_reply.shape[0] < count
                       or out_reply_weight.shape[0] < count):
        raise ValueError("out_reply needs out_reply_weight, both with a row per sample")
    check_samples(moves, game_start, sample_game, sample_move)
    for i in range(count):
        g = sample_game[i]
        p = game_start[g] + sample_move[i]
        if sample_sym[i] > 7:
            raise ValueError(f"sample {i}: symmetry {sample_sym[i]} out of range")
        if p >= positions or not 0 <= policy_start[p] <= policy_start[p + 1] <= policy_moves.shape[0]:
            raise ValueError(f"sample {i}: game {g} indexes past the window's arrays")
    b = <BoardState*>calloc(1, sizeof(BoardState))
    scratch = <uint8_t*>calloc(row_bytes, 1)
    if b == NULL or scratch == NULL:
        free(b)
        free(scratch)
        raise MemoryError()
    cursor[0], cursor[1] = -1, 0         # no game on the board yet
    try:
        with nogil:
            for i in range(count):
                g = sample_game[i]
                m = sample_move[i]
                sym = sample_sym[i]
                start = game_start[g]
                seek_position(b, size, komi, 1, &moves[0], &game_start[0], g, m, cursor)
                if sym == 0:
                    encode(b, enc, &out_planes[i, 0, 0, 0])
                else:
                    encode(b, enc, scratch)
                    sym_planes(scratch, &out_planes[i, 0, 0, 0], planes, size, sym)
                # Policy: the search's visits, normalised, moved by the symmetry.
                p = start + m
                for j in range(nn + 1):
                    out_policy[i, j] = 0.0
                total = 0.0
                for k in range(policy_start[p], policy_start[p + 1]):
                    point = policy_moves[k]
                    if point < 0 or point > nn or policy_visits[k] <= 0:
                        continue
                    if point != nn and sym != 0:
                        point = sym_move(point, size, sym)
                    out_policy[i, point] += policy_visits[k]
                    total += policy_visits[k]
                if total > 0 and full[p]:
                    for j in range(nn + 1):
                        out_policy[i, j] /= total
                    out_policy_weight[i] = 1.0
                else:
                    for j in range(nn + 1):
                        out_policy[i, j] = 0.0
                    out_policy_weight[i] = 0.0
                # Value and ownership from the side to move's view (Black moves at even m).
                mover = b.to_move
                sign = 1.0 if mover == BLACK else -1.0
                out_value[i] = sign * winner[g]
                for j in range(nn):
                    point = j if sym == 0 else sym_move(j, size, sym)
                    out_ownership[i, point] = sign * ownership[g, j]
                if want_score:
                    out_score[i] = sign * score[g]
                if want_reply:
                    # The opponent's reply: the move played from position m + 1, if any.
                    point = moves[start + m + 1] if start + m + 1 < game_start[g + 1] else -1
                    if 0 <= point <= nn:
                        if point != nn and sym != 0:
                            point = sym_move(point, size, sym)
                        out_reply[i] = point
                        out_reply_weight[i] = 1.0
                    else:
                        out_reply[i] = 0
                        out_reply_weight[i] = 0.0
    finally:
        free(b)
        free(scratch)
