# The choice of the played move on a finished search: the root choice of the search kernel (see
# move_choice.pxd) and, on top of it, the pass rule (choose_move): the one place that decides
# which move is played after a search, for self-play, matches and the GTP engine alike.
from libc.math cimport exp, log
from libc.stdint cimport int32_t
from fastgo.rng cimport rng_uniform
from fastgo.tree cimport Tree, NO_NODE, UNEXPANDED, FLAG_PENDING
from fastgo.gumbel cimport gumbel_final_child
from fastgo.ending import decided, own_area
from fastgo.variants import PassRule, check_pass_rule

import numpy as np


cdef int choose_root_move(SearchGame* s, double temp, bint resign, float resign_threshold,
                          int resign_consecutive, const GumbelParams* gumbel) noexcept nogil:
    cdef Tree* t = &s.tree
    cdef int32_t first = t.first_child[t.root], k, j, best = NO_NODE
    cdef double total = 0.0, r, w, vmax = 0.0
    cdef int color = s.root_board.to_move, nn = s.root_board.size * s.root_board.size
    if resign and resign_threshold > -1.0 and t.visits[t.root] > 0:
        if t.value_sum[t.root] / t.visits[t.root] < resign_threshold:
            s.low_streak[color] += 1
        else:
            s.low_streak[color] = 0
        if s.low_streak[color] >= resign_consecutive:
            if not s.resign_disabled:
                return RESIGN_MOVE
            if s.would_resign == 0:
                s.would_resign = color
                s.would_resign_move = s.root_board.num_moves
    if first == UNEXPANDED or (t.flags[t.root] & FLAG_PENDING):
        return nn
    k = t.num_children[t.root]
    for j in range(k):
        if t.visits[first + j] > vmax:
            vmax = t.visits[first + j]
    if vmax == 0:
        return nn
    if s.gumbel and gumbel != NULL:
        best = gumbel_final_child(s, gumbel)
        return nn if best == NO_NODE else t.move[best]
    if temp <= 1e-6:
        for j in range(k):
            if best == NO_NODE or t.visits[first + j] > t.visits[best] or (
                    t.visits[first + j] == t.visits[best] and t.prior[first + j] > t.prior[best]):
                best = first + j
        return t.move[best]
    for j in range(k):
        if t.visits[first + j] > 0:
            total += exp((log(t.visits[first + j]) - log(vmax)) / temp)
    r = rng_uniform(&s.rng) * total
    for j in range(k):
        if t.visits[first + j] > 0:
            w = exp((log(t.visits[first + j]) - log(vmax)) / temp)
            best = first + j
            if r < w:
                break
            r -= w
    return t.move[best]


cdef list root_analysis(const Tree* t, int max_pv):
    cdef int32_t first = t.first_child[t.root], j, i, node, c, best
    rows = []
    if first == UNEXPANDED or (t.flags[t.root] & FLAG_PENDING):
        return rows
    for j in range(t.num_children[t.root]):
        c = first + j
        if t.visits[c] == 0:
            continue
        pv = [int(t.move[c])]
        node = c
        while len(pv) < max_pv and t.first_child[node] != UNEXPANDED \
                and not (t.flags[node] & FLAG_PENDING):
            best = NO_NODE
            for i in range(t.num_children[node]):
                if t.visits[t.first_child[node] + i] > 0 and (
                        best == NO_NODE or t.visits[t.first_child[node] + i] > t.visits[best]):
                    best = t.first_child[node] + i
            if best == NO_NODE:
                break
            pv.append(int(t.move[best]))
            node = best
        rows.append({"move": int(t.move[c]), "visits": int(t.visits[c]),
                     "winrate": 0.5 * (1.0 - t.value_sum[c] / t.visits[c]),
                     "prior": float(t.prior[c]), "pv": pv})
    rows.sort(key=lambda row: (-row["visits"], -row["prior"]))
    return rows


# -- the pass rule -------------------------------------------------------------------------------
# One vocabulary (fastgo.variants.PassRule; fastgo.variants.check_pass_rule takes a name) for
# config (selfplay.pass_rule, selfplay.earliest_pass, selfplay.policy_pass_rule), players and the
# command line (--pass-rule):
#   "free": the pass is a move like any other: the search's (or the policy's) own choice;
#   "fill": no pass while a legal point outside the player's own eyes is left (the game is played
#           out: dead stones are captured and the dame filled before a pass, as Tromp-Taylor
#           scoring and CGOS's --capture-all-dead expect).
#   "settled": as "fill", but the pass is also allowed once the board is settled
#           (Board.settled: every empty region borders one colour only, so no dame is open and
#           no stone stands in the other side's area): the game need not be filled out to
#           single-point eyes once its area is decided. Policy-only play takes it as "fill".
#   "decided": as "fill", but the pass is also allowed once the position is decided in the Go
#           sense (fastgo.ending: settled, seki dame aside, and every group with two eyes or in
#           seki), so a game ends by passes when it is over and its Tromp-Taylor count is the
#           score a Go player would give; an untrained network's early pass stays refused (one
#           stone, one eye). Policy-only play takes it as "fill".
# winning_pass (a parameter of choose_move, not a rule value): under "fill" and "settled", a
#   pass that ends a
#   won game (the opponent has just passed and the position as it stands is won, Game.pass_wins)
#   is played whatever the search chose. Matches and the GTP engine take it (True); self-play
#   does not (False), so that every self-play game is played out and a pass is never a policy
#   target before the board is filled. The network never saw such a pass in self-play, so its
#   search's opinion of one is a guess; the rules know the answer.
# earliest_pass: before this move number, no pass while the search visited a board point; 0 = off.
PASS_RULE_HELP = ("fill = no pass while a legal point outside the own eyes is left (as self-play "
                  "with selfplay.pass_rule = \"fill\"), except the winning pass: a pass that ends "
                  "a won game (the opponent passed and the position as it stands is won) is "
                  "played; settled = as fill, and the pass is also allowed once every empty "
                  "region borders one colour only; decided = as fill, and the pass is also allowed "
                  "once the position is decided (every region one colour's or seki, every group "
                  "two eyes or in seki); free = the pass is a move like any other "
                  "(the search's own choice)")
_NO_POINTS = np.zeros(0, dtype=np.int64)


def points_instead_of_pass(game, visits, *, pass_rule, bint winning_pass, int earliest_pass=0,
                           bint every_move_weighed=False):
    """int64 board points to play instead of the pass in `game`; empty where the pass is allowed.

    visits: the root's visits (int [N*N + 1], pass last). pass_rule "fill": the legal points
    outside the own eyes (Game.unfilled_points), tested where the pass is a choice (it has
    visits, or every_move_weighed: a Gumbel target weighs every legal move); with winning_pass,
    none where the pass ends a won game. "settled": the same, and none once the board is
    settled (Board.settled); "decided": none once the position is decided (fastgo.ending). earliest_pass: before this move number, the visited board points
    (0 = off). "free" with earliest_pass 0 never refuses the pass."""
    nn = len(visits) - 1
    rule = check_pass_rule(pass_rule)
    if rule != PassRule.FREE and (visits[nn] > 0 or every_move_weighed):
        if winning_pass and game.pass_wins():
            return _NO_POINTS
        if rule == PassRule.SETTLED and game.board.settled():
            return _NO_POINTS
        if rule == PassRule.DECIDED and decided(game.board):
            return _NO_POINTS
        return np.asarray(game.unfilled_points(), dtype=np.int64)
    if len(game.moves) < earliest_pass and visits[:nn].any():
        return np.flatnonzero(visits[:nn])
    return _NO_POINTS


def choose_move(search, int g, game, *, pass_rule, bint winning_pass, int earliest_pass=0,
                temperature=None, bint resign=True, rng=None, refused=None, own_points=None):
    """The move to play in `game` after `search` (a fastgo.mcts.BatchedSearch, or anything with
    choose_move(g, temperature, resign), root_visits(g) and root_priors(g)) searched it as its
    game g: the search's root choice (BatchedSearch.choose_move: temperature, the most visited,
    Gumbel, RESIGN = -2 where `resign` and the game looks lost), then the pass rule.

    A pass the rule refuses (points_instead_of_pass, same parameters, every move weighed)
    becomes the point among those by the search's visits: sampled in proportion with `rng` (a
    numpy Generator), the most visited without; by prior where none was visited. Under "fill"
    or "settled" with winning_pass, a pass that ends a won game is returned whatever the
    search chose (unless it resigned). Under "decided" in a decided position, a stone in the
    own area (own_area_points; `own_points` where the caller already has them) becomes the
    pass. refused: points_instead_of_pass's answer where the caller already has
    it (self-play, for the policy target); an empty one keeps the search's move. The root is
    read only where the pass is overruled."""
    move = search.choose_move(g, temperature, resign)
    rule = check_pass_rule(pass_rule)
    fill = rule != PassRule.FREE                      # "fill", "settled" or "decided"
    if rule == PassRule.DECIDED and move >= 0 and move != game.board.pass_move:
        if own_points is None:
            own_points = own_area_points(game, rule)
        if len(own_points) and (own_points == move).any():
            return game.board.pass_move
    if (not fill and earliest_pass <= 0) or move < 0:
        return move
    if refused is not None and not len(refused):
        return move
    pass_move = game.board.pass_move
    if winning_pass and fill and game.pass_wins():
        return pass_move
    if move != pass_move:
        return move
    visits = search.root_visits(g)
    points = points_instead_of_pass(game, visits, pass_rule=pass_rule, winning_pass=winning_pass,
                                    earliest_pass=earliest_pass, every_move_weighed=True)
    if not len(points):
        return move
    weights = visits[points].astype(np.float64)
    if weights.sum() <= 0:
        return int(points[int(np.argmax(search.root_priors(g)[points]))])
    if rng is not None:
        return int(rng.choice(points, p=weights / weights.sum()))
    return int(points[int(np.argmax(weights))])


def own_area_points(game, pass_rule):
    """int64 board points where "decided" plays the pass instead: under that rule in a decided
    position (fastgo.ending.decided), the empty points of the regions that border the side to
    move only (fastgo.ending.own_area), where a stone changes no area; empty otherwise.
    Self-play moves their policy-target weight to the pass."""
    if check_pass_rule(pass_rule) != PassRule.DECIDED or not decided(game.board):
        return _NO_POINTS
    return np.flatnonzero(own_area(game.board)).astype(np.int64)


def point_instead_of_pass(game, ranked=()):
    """Where a player that may not pass yet goes instead ("fill" without the winning pass, as
    GTP's kgs-genmove_cleanup asks): the first of `ranked` (board points, best first: a search's
    analysis rows) that is a legal point outside the own eyes (Game.unfilled_points), else the
    lowest such point; the pass where none is left."""
    points = np.asarray(game.unfilled_points(), dtype=np.int64)
    if not len(points):
        return game.board.pass_move
    allowed = set(points.tolist())
    for move in ranked:
        if move in allowed:
            return int(move)
    return int(points.min())


def policy_may_pass(pass_rule):
    """Policy-only play's pass rule (fastgo.policy_play's allow_pass, no search): True under
    "free" (the pass is a move the policy may choose), False under "fill", "settled" and
    "decided" (the
    pass only when no legal point outside the own eyes is left; policy play has no settled
    test)."""
    return check_pass_rule(pass_rule, "policy_pass_rule") == PassRule.FREE
