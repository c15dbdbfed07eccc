"""The pass rule of a network that learns from games played out (selfplay.pass_when_filled): where
the pass is no choice, and which board point is played instead. Self-play and play (matches, the
GTP engine) call the same two functions; they differ in one parameter, `winning_pass`:

- self-play (winning_pass=False): no pass while a legal point outside the own eyes is left, so
  every game is played out and a pass is never a policy target before the board is filled;
- play (winning_pass=True): the same, except that a pass which ends a won game (the opponent
  has just passed and the position as it stands is won, Game.pass_wins) is played, whatever the
  search chose. The network never saw such a pass in self-play, so its search's opinion of one
  is a guess; the rules know the answer.

A search is anything with root_visits(g) and root_priors(g) (int32 / float32 [N*N + 1], pass last),
as fastgo.mcts.BatchedSearch.
"""
from __future__ import annotations

import numpy as np

NO_POINTS = np.zeros(0, dtype=np.int64)
# A player's choice (play.search_player, play.match, --pass-rule): filled = play's rule above;
# search = the search's own choice (no rule).
PASS_RULES = ("filled", "search")
PASS_RULE_HELP = ("filled = no pass while a legal point outside the own eyes is left (as self-play "
                  "with selfplay.pass_when_filled), except that a pass which ends a won game is "
                  "played (the opponent passed and the position as it stands is won); search = "
                  "the search's own choice")


def points_instead_of_pass(game, visits, *, winning_pass: bool, filled: bool = True,
                           no_pass_before: int = 0, pass_considered: bool = False) -> np.ndarray:
    """int64 board points to play instead of the pass in `game`; empty where the pass is allowed.

    visits: the root's visits (int [N*N + 1], pass last). filled: no pass while a legal point
    outside the own eyes is left (Game.unfilled_points), tested where the pass is a choice (it
    has visits, or pass_considered: a Gumbel target weighs every legal move). winning_pass: a
    pass that ends a won game stays allowed. no_pass_before: before this move number, no pass
    while the search visited a board point (the visited points); 0 = off."""
    nn = len(visits) - 1
    if filled and (visits[nn] > 0 or pass_considered):
        if winning_pass and game.pass_wins():
            return NO_POINTS
        return np.asarray(game.unfilled_points(), dtype=np.int64)
    if len(game.moves) < no_pass_before and visits[:nn].any():
        return np.flatnonzero(visits[:nn])
    return NO_POINTS


def settle_pass(game, move, search, g=0, *, winning_pass: bool, filled: bool = True,
                no_pass_before: int = 0, rng=None) -> int:
    """The move to play after `search` (game g of it) chose `move` in `game`: `move`, unless it
    is a pass the rule refuses (points_instead_of_pass, same parameters); then the point among
    those by the search's visits (sampled in proportion with `rng`, a numpy Generator; the most
    visited without), by prior where none was visited. With winning_pass and filled, a pass
    that ends a won game is returned whatever `move` was. Reads the root only where the pass is
    overruled."""
    pass_move = game.board.pass_move
    if winning_pass and filled and game.pass_wins():
        return pass_move
    if move != pass_move:
        return move
    visits = search.root_visits(g)
    points = points_instead_of_pass(game, visits, winning_pass=winning_pass, filled=filled,
                                    no_pass_before=no_pass_before, pass_considered=True)
    if not len(points):
        return move
    weights = visits[points].astype(np.float64)
    if weights.sum() <= 0:
        return int(points[int(np.argmax(search.root_priors(g)[points]))])
    if rng is not None:
        return int(rng.choice(points, p=weights / weights.sum()))
    return int(points[int(np.argmax(weights))])
