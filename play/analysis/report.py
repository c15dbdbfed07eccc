"""KataGo's analysis response objects from a search and its TreeStats (play.tree_stats).

Perspective (KataGo's reportAnalysisWinratesAs): SIDETOMOVE reports every win rate, score,
utility, lcb and ownership for the player to move at the analysed turn; BLACK / WHITE for that
colour (a flip where the other is to move). Ownership and policy are row-major from the top
left (A19 ... T1 on 19x19), the policy's pass last and -1 on illegal points. `utility` is the
win-rate utility 2 * winrate - 1 (fastgo's search maximises the win rate alone). `scoreLead` is the
points that would even the game, KataGo's meaning: the lead head's median final margin where
the network has one (model.lead_head), averaged over the search; `scoreMean` and `scoreSelfplay`
are the score head's mean margin (KataGo's self-play score), which differs from the lead where
the margin's spread is skewed. Without a lead head all three are the mean. There is no
`scoreStdev` (the network predicts no score spread).
"""
from __future__ import annotations

import numpy as np

from fastgo import coords
from fastgo.board import BLACK, EMPTY, WHITE
from play.tree_stats import lead_of


def _r(x):
    """KataGo's roundDynamic: 8 significant digits."""
    return float(f"{x:.8g}")


def flips(perspective, to_move):
    """Whether values from `to_move`'s view are reported negated (win rates as 1 - w)."""
    return (perspective == "BLACK" and to_move == WHITE) or \
        (perspective == "WHITE" and to_move == BLACK)


def _ownership(values, flip):
    values = -values if flip else values
    return [round(float(v), 6) for v in values]


def policy_list(logits, legal):
    """The network's policy (softmax over the legal moves of `legal`, a uint8 mask of N*N+1)
    as KataGo's list: probabilities, -1 where illegal."""
    logits = np.asarray(logits, np.float64)
    mask = np.asarray(legal, bool)
    mask[-1] = True
    out = np.full(logits.shape, -1.0)
    if mask.any():
        z = logits[mask] - logits[mask].max()
        p = np.exp(z)
        out[mask] = p / p.sum()
    return [-1 if v < 0 else _r(v) for v in out]


def move_infos(rows, stats, size, perspective, *, moves_ownership=False):
    """moveInfos from BatchedSearch.analysis rows (most visited first) and TreeStats."""
    flip = flips(perspective, stats.to_move)
    infos = []
    for order, row in enumerate(rows):
        move = row["move"]
        win = float(row["winrate"])
        extra = stats.moves.get(move)
        info = {"move": coords.to_gtp(move, size), "visits": int(row["visits"]),
                "winrate": _r(1.0 - win if flip else win),
                "prior": _r(float(row["prior"])), "order": order,
                "pv": [coords.to_gtp(m, size) for m in row["pv"]]}
        utility = 2.0 * win - 1.0
        info["utility"] = _r(-utility if flip else utility)
        if extra is not None and extra.lcb is not None:
            info["lcb"] = _r(1.0 - extra.lcb if flip else extra.lcb)
        else:
            info["lcb"] = info["winrate"]
        if extra is not None and extra.score is not None:
            sign = -1.0 if flip else 1.0
            info["scoreMean"] = info["scoreSelfplay"] = _r(sign * extra.score)
            info["scoreLead"] = _r(sign * lead_of(extra))
        if moves_ownership and extra is not None and extra.ownership is not None:
            info["ownership"] = _ownership(extra.ownership, flip)
        infos.append(info)
    return infos


def root_info(stats, root_value, perspective):
    """rootInfo: the tree's mean win rate (root_value, -1..1 for the side to move) and the
    TreeStats' score and lcb, plus the network's own value and score at the root."""
    flip = flips(perspective, stats.to_move)
    sign = -1.0 if flip else 1.0
    win = 0.5 + 0.5 * float(root_value)
    info = {"visits": int(stats.root_visits), "winrate": _r(1.0 - win if flip else win),
            "utility": _r(sign * (2.0 * win - 1.0)),
            "currentPlayer": "B" if stats.to_move == BLACK else "W"}
    if stats.lcb is not None:
        info["lcb"] = _r(1.0 - stats.lcb if flip else stats.lcb)
    if stats.score is not None:
        info["scoreSelfplay"] = _r(sign * stats.score)
        info["scoreLead"] = _r(sign * lead_of(stats))
    if stats.raw_value is not None:
        raw = 0.5 + 0.5 * stats.raw_value
        info["rawWinrate"] = _r(1.0 - raw if flip else raw)
    if stats.raw_score is not None:
        info["rawScoreSelfplay"] = _r(sign * stats.raw_score)
        raw_lead = stats.raw_lead if stats.raw_lead is not None else stats.raw_score
        info["rawLead"] = _r(sign * raw_lead)
    return info


def analysis_response(query, turn, game, search_rows, stats, root_value, *, during_search):
    """The whole response object of one analysed turn."""
    size = query.size
    out = {"id": query.id, "isDuringSearch": bool(during_search), "turnNumber": int(turn),
           "moveInfos": move_infos(search_rows, stats, size, query.perspective,
                                   moves_ownership=query.include_moves_ownership),
           "rootInfo": root_info(stats, root_value, query.perspective)}
    if query.include_ownership and stats.ownership is not None:
        out["ownership"] = _ownership(stats.ownership, flips(query.perspective, stats.to_move))
    if query.include_policy and stats.raw_logits is not None:
        out["policy"] = policy_list(stats.raw_logits, game.legal_moves())
    return out


def area_ownership(stones, to_move):
    """Tromp-Taylor area of int8 `stones` (N, N; EMPTY / BLACK / WHITE) as ownership from
    `to_move`'s view, [N*N] floats: +1 own stones and empty regions reaching only own stones,
    -1 the opponent's, 0 regions reaching both or neither. Iterative flood fill."""
    stones = np.asarray(stones)
    n = stones.shape[0]
    owner = np.where(stones == BLACK, 1.0, np.where(stones == WHITE, -1.0, 0.0))
    seen = np.zeros((n, n), bool)
    for r0 in range(n):
        for c0 in range(n):
            if stones[r0, c0] != EMPTY or seen[r0, c0]:
                continue
            region, reach, stack = [], set(), [(r0, c0)]
            seen[r0, c0] = True
            while stack:
                r, c = stack.pop()
                region.append((r, c))
                for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                    if 0 <= rr < n and 0 <= cc < n:
                        if stones[rr, cc] == EMPTY:
                            if not seen[rr, cc]:
                                seen[rr, cc] = True
                                stack.append((rr, cc))
                        else:
                            reach.add(int(stones[rr, cc]))
            value = 1.0 if reach == {BLACK} else (-1.0 if reach == {WHITE} else 0.0)
            for r, c in region:
                owner[r, c] = value
    owner = owner.reshape(-1)
    return owner if to_move == BLACK else -owner


def finished_response(query, turn, game, ownership=None):
    """A turn whose game is over (two passes or the move cap): no search, the rules' result;
    `ownership` ([N*N] from the view of the player to move) goes in when the query asked for
    it."""
    to_move = game.to_move
    score = float(game.score()) * (1.0 if to_move == BLACK else -1.0)
    win = 1.0 if score > 0 else (0.0 if score < 0 else 0.5)
    flip = flips(query.perspective, to_move)
    sign = -1.0 if flip else 1.0
    out = {"id": query.id, "isDuringSearch": False, "turnNumber": int(turn), "moveInfos": [],
            "rootInfo": {"visits": 0, "winrate": 1.0 - win if flip else win,
                         "scoreLead": _r(sign * score), "scoreSelfplay": _r(sign * score),
                         "utility": sign * (2.0 * win - 1.0), "lcb": 1.0 - win if flip else win,
                         "currentPlayer": "B" if to_move == BLACK else "W"}}
    if ownership is not None and query.include_ownership:
        out["ownership"] = _ownership(np.asarray(ownership, np.float64), flip)
    return out


def no_results(query_id, turn):
    """A turn terminated before any visit (KataGo's noResults response)."""
    return {"id": query_id, "isDuringSearch": False, "noResults": True, "turnNumber": int(turn)}
