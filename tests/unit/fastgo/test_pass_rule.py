"""The pass rule (fastgo.pass_rule): one function for self-play (winning_pass=False) and play
(winning_pass=True), fed the root's visits and priors of a search."""
import numpy as np

from fastgo.board import BLACK
from fastgo.game import Game
from fastgo.pass_rule import points_instead_of_pass, settle_pass


class FixedRoot:
    """What settle_pass reads of a search: the root's visits and priors of game g."""

    def __init__(self, visits, priors):
        self.visits, self.priors = np.asarray(visits), np.asarray(priors)

    def root_visits(self, g):
        return self.visits.copy()

    def root_priors(self, g):
        return self.priors.copy()


def test_play_keeps_the_pass_for_a_won_or_filled_board_only():
    game = Game(3, 0.5)
    pass_move = game.pass_move
    visits = np.zeros(10, np.int32)
    priors = np.full(10, 0.1, np.float32)
    visits[[2, 6]] = (3, 5)
    play = dict(winning_pass=True)
    assert settle_pass(game, pass_move, FixedRoot(visits, priors), **play) == 6      # most visited
    priors[7] = 0.5
    assert settle_pass(game, pass_move, FixedRoot(np.zeros(10, np.int32), priors), **play) == 7
    assert settle_pass(game, 3, FixedRoot(visits, priors), **play) == 3   # a point stays a point
    game.play(4)
    game.play(pass_move)                       # White passed and Black wins as it stands
    assert settle_pass(game, 3, FixedRoot(visits, priors), **play) == pass_move
    filled = Game(2, 0.5)                      # B 0, W pass, B 3: Black's only points are eyes
    for move in (0, filled.pass_move, 3):
        filled.play(move)
    filled.play(filled.pass_move)
    assert filled.to_move == BLACK and len(filled.unfilled_points()) == 0
    no_visits = FixedRoot(np.zeros(5), np.ones(5))
    assert settle_pass(filled, filled.pass_move, no_visits, **play) == filled.pass_move


def test_self_play_plays_on_where_play_would_take_the_winning_pass():
    game = Game(3, 0.5)
    game.play(4)
    game.play(game.pass_move)                  # Black wins as it stands: play passes, self-play not
    visits = np.zeros(10, np.int32)
    visits[[2, 9]] = (1, 7)
    root = FixedRoot(visits, np.full(10, 0.1, np.float32))
    assert settle_pass(game, game.pass_move, root, winning_pass=True) == game.pass_move
    assert settle_pass(game, game.pass_move, root, winning_pass=False) == 2
    assert len(points_instead_of_pass(game, visits, winning_pass=True)) == 0
    assert 2 in points_instead_of_pass(game, visits, winning_pass=False)


def test_filled_off_and_no_pass_before():
    game = Game(3, 0.5)
    visits = np.zeros(10, np.int32)
    visits[[1, 9]] = (2, 5)
    assert len(points_instead_of_pass(game, visits, winning_pass=False, filled=False)) == 0
    early = points_instead_of_pass(game, visits, winning_pass=False, filled=False, no_pass_before=3)
    assert early.tolist() == [1]               # before move 3: the visited points only
    unvisited_pass = visits.copy()
    unvisited_pass[9] = 0
    assert len(points_instead_of_pass(game, unvisited_pass, winning_pass=False)) == 0
    assert len(points_instead_of_pass(game, unvisited_pass, winning_pass=False,
                                      pass_considered=True)) == 9


def test_sampled_choice_follows_the_visits():
    game = Game(3, 0.5)
    visits = np.zeros(10, np.int32)
    visits[[0, 8, 9]] = (1, 3, 10)
    root = FixedRoot(visits, np.full(10, 0.1, np.float32))
    rng = np.random.default_rng(0)
    picks = [settle_pass(game, 9, root, winning_pass=False, rng=rng) for _ in range(400)]
    assert set(picks) == {0, 8} and 0.65 < picks.count(8) / 400 < 0.85   # 3/4 expected
