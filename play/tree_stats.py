"""What a search tree says beyond visits and win rates: score, ownership and a lower confidence
bound per root move, averaged over the search as KataGo averages them.

`tree_stats(search, g, cache, model_komi=...)` walks game g's tree of a BatchedSearch (nodes
with visits, the most visited first when there are more than `max_nodes`), re-encodes each
node's position and takes its network outputs from the HeadsCache (play.heads_cache: hits
when the cache was the search's evaluator under the identity symmetry; otherwise the misses
are evaluated once, in one batch). Each node weighs as many times as it was evaluated (once;
a terminal node once per visit, with the rules' score and result). A root move's score and
ownership are the weighted means over its subtree, the root's over the whole tree; all from the
root's side to move's view (ownership +1 = that player's point).

Scores: the network's score head learnt the margin at `model_komi`, so a position of komi K
adds (model_komi - K) for Black (the opposite for White). Without a score head the score is
the ownership's sum less the komi (Black) or plus it (White); without either, None. The lead
(the margin's median, model.lead_head) is averaged the same way; a terminal node's lead is the
rules' score; without a lead head it is None (reports then give the score as the lead).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fastgo.board import BLACK
from fastgo.features import encode_into, num_planes
from fastgo.mcts import FLAG_LOSS, FLAG_TERMINAL, FLAG_WIN

MAX_NODES = 20_000       # nodes walked per report at most (the most visited)
LCB_Z = 1.96             # standard errors below the mean win rate
LCB_PRIOR_VAR = 0.25     # one pseudo-visit of the largest win-rate variance (a coin flip)


@dataclass
class MoveStats:
    visits: int
    score: float | None = None        # mean score of the subtree, root mover's view
    lead: float | None = None         # mean lead of the subtree, root mover's view
    ownership: np.ndarray | None = None
    lcb: float | None = None          # win rate lower bound, root mover's view, 0..1


@dataclass
class TreeStats:
    root_visits: int
    to_move: int                      # BLACK or WHITE at the root
    score: float | None = None
    lead: float | None = None
    ownership: np.ndarray | None = None
    lcb: float | None = None
    raw_value: float | None = None    # the network's value at the root, root mover's view
    raw_score: float | None = None
    raw_lead: float | None = None
    raw_logits: np.ndarray | None = None
    moves: dict = field(default_factory=dict)    # root move -> MoveStats
    nodes: int = 0                    # nodes walked


def lead_of(stats):
    """The lead a report gives for a MoveStats or TreeStats: its lead where the network has a
    lead head, else its score (the mean margin, the nearest the network has)."""
    return stats.lead if stats.lead is not None else stats.score


def _walk(search, g, arrays, limit):
    """Depth-first over nodes with visits (>= a threshold keeping at most `limit` of them):
    lists of (node, board, depth, top) where top is the root move above (-1 at the root)."""
    root = arrays["root"]
    visits, first, count = arrays["visits"], arrays["first_child"], arrays["num_children"]
    moves = arrays["move"]
    visited = visits[visits > 0]
    threshold = 1
    if len(visited) > limit:
        threshold = max(1, int(np.partition(visited, len(visited) - limit)[len(visited) - limit]))
    out = []
    stack = [(root, search.root_board(g), 0, -1)]
    while stack and len(out) < limit:
        node, board, depth, top = stack.pop()
        out.append((node, board, depth, top))
        start = first[node]
        if start < 0:
            continue
        kids = np.arange(start, start + count[node])
        kids = kids[visits[kids] >= threshold]
        for child in kids[np.argsort(visits[kids], kind="stable")]:
            after = board.copy()
            after.play(int(moves[child]))
            stack.append((int(child), after, depth + 1, int(moves[child]) if depth == 0 else top))
    return out


def _at_komi(margin, mover, komi, model_komi):
    """A head's margin (score or lead, the mover's view, at model_komi) at komi `komi`; None
    stays None."""
    if margin is None:
        return None
    shift = 0.0 if model_komi is None else (model_komi - komi)
    return margin + (1.0 if mover == BLACK else -1.0) * shift


def _score(entry, mover, komi, model_komi):
    sign = 1.0 if mover == BLACK else -1.0
    if entry[3] is not None:
        return _at_komi(entry[3], mover, komi, model_komi)
    if entry[2] is not None:
        return float(entry[2].sum()) - sign * komi
    return None


def tree_stats(search, g, cache, *, model_komi=None, max_nodes=MAX_NODES, ownership=True):
    """TreeStats of game g (see the module docstring); ownership=False skips the ownership
    sums (cheaper)."""
    arrays = search.tree_arrays(g)
    visits, first, count = arrays["visits"], arrays["first_child"], arrays["num_children"]
    flags = arrays["flags"]
    walked = _walk(search, g, arrays, max_nodes)
    root_board = walked[0][1]
    komi, root_mover = float(root_board.komi), root_board.to_move
    stats = TreeStats(root_visits=int(visits[arrays["root"]]), to_move=root_mover,
                      nodes=len(walked))
    evaluated = [i for i, (node, *_rest) in enumerate(walked)
                 if not flags[node] & FLAG_TERMINAL]
    planes = np.empty((len(evaluated), num_planes(search.settings.encoding), search.size, search.size),
                      np.uint8)
    for j, i in enumerate(evaluated):
        encode_into(walked[i][1], search.settings.encoding, planes[j])
    entries = dict(zip(evaluated, cache.fetch(planes) if evaluated else []))
    # top -> [weight, value sum, value sq sum, score w, score sum, own w, own sum, lead w, lead sum]
    groups = {}
    for i, (node, board, depth, top) in enumerate(walked):
        own_count = int(visits[node])
        start = first[node]
        if start >= 0:
            own_count -= int(visits[start:start + count[node]].sum())
        if own_count <= 0:
            continue
        sign = 1.0 if depth % 2 == 0 else -1.0
        mover = board.to_move
        group = groups.setdefault(top, [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, None, 0.0, 0.0])
        if flags[node] & FLAG_TERMINAL:
            f = flags[node]
            value = 1.0 if f & FLAG_WIN else (-1.0 if f & FLAG_LOSS else 0.0)
            score = lead = float(board.score()) * (1.0 if mover == BLACK else -1.0)
            own = None
        else:
            entry = entries[i]
            value, own = entry[1], entry[2]
            score = _score(entry, mover, komi, model_komi)
            lead = _at_komi(entry[4], mover, komi, model_komi)     # no stand-in: None
            if node == arrays["root"]:
                stats.raw_value, stats.raw_score, stats.raw_logits = value, score, entry[0]
                stats.raw_lead = lead
        win = 0.5 + 0.5 * sign * value
        group[0] += own_count
        group[1] += own_count * win
        group[2] += own_count * win * win
        if score is not None:
            group[3] += own_count
            group[4] += own_count * sign * score
        if lead is not None:
            group[7] += own_count
            group[8] += own_count * sign * lead
        if ownership and own is not None:
            group[5] += own_count
            part = (own_count * sign) * own
            group[6] = part if group[6] is None else group[6] + part
    total = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, None, 0.0, 0.0]
    for top, group in groups.items():
        for k in (0, 1, 2, 3, 4, 5, 7, 8):
            total[k] += group[k]
        if group[6] is not None:
            total[6] = group[6] if total[6] is None else total[6] + group[6]
        if top >= 0:
            stats.moves[top] = _summary(MoveStats(visits=0), group)
    root = _summary(MoveStats(visits=stats.root_visits), total)
    stats.score, stats.ownership, stats.lcb = root.score, root.ownership, root.lcb
    stats.lead = root.lead
    return stats


def _summary(out, group):
    weight, win_sum, win_sq, score_w, score_sum, own_w, own_sum, lead_w, lead_sum = group
    if weight > 0:
        mean = win_sum / weight
        var = (max(0.0, win_sq - weight * mean * mean) + LCB_PRIOR_VAR) / (weight + 1.0)
        out.lcb = mean - LCB_Z * float(np.sqrt(var / weight))
    if score_w > 0:
        out.score = score_sum / score_w
    if lead_w > 0:
        out.lead = lead_sum / lead_w
    if own_w > 0 and own_sum is not None:
        out.ownership = np.clip(own_sum / own_w, -1.0, 1.0)
    return out
