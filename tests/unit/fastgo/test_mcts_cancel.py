"""An evaluator that fails mid-search leaves the search usable: no leaf in flight, no virtual
loss, no pending node; the next search and the next genmove work."""
import numpy as np
import pytest

from fastgo.game import Game
from fastgo.mcts import FLAG_PENDING, BatchedSearch
from fastgo.search_settings import SearchSettings
from play.search_player import SearchPlayer


class FlakyEvaluator:
    """Uniform logits and value 0, except calls number `fail_at` (1-based) which raise."""

    def __init__(self, fail_at=()):
        self.fail_at = set(fail_at)
        self.calls = 0

    def __call__(self, planes):
        self.calls += 1
        if self.calls in self.fail_at:
            raise RuntimeError("evaluator failed")
        count = planes.shape[0]
        nn = planes.shape[2] * planes.shape[3]
        return np.zeros((count, nn + 1), np.float32), np.zeros(count, np.float32)


def assert_clean(search, games):
    assert search.in_flight == 0
    for g in range(games):
        tree = search.tree_arrays(g)
        assert not tree["virtual_loss"].any()
        assert not (tree["flags"] & FLAG_PENDING).any()


@pytest.mark.parametrize("fail_at", [1, 2, 5])
def test_run_after_an_evaluator_error(fail_at):
    search = BatchedSearch(games=3, size=5, seed=1, settings=SearchSettings(leaves_per_game=2))
    with pytest.raises(RuntimeError, match="evaluator failed"):
        search.run(FlakyEvaluator([fail_at]), 20)
    assert_clean(search, 3)
    before = [search.root_visits(g).sum() for g in range(3)]
    search.run(FlakyEvaluator(), 20)
    assert_clean(search, 3)
    for g in range(3):
        assert search.root_visits(g).sum() >= 20 >= before[g]


def test_cancel_drops_both_batches_in_flight():
    search = BatchedSearch(games=4, size=5, seed=2)
    search.start(10)
    buf = np.zeros((4, 17, 5, 5), np.uint8)
    first = search.collect(buf)
    assert first == 4                                # each game's root
    search.apply(*FlakyEvaluator()(buf[:first]))
    second = search.collect(buf)
    third = search.collect(np.zeros_like(buf))
    # one leaf per game in each batch (virtual loss steers the third away from the second)
    assert (second, third) == (4, 4) and search.in_flight == 2
    assert search.cancel() == second + third        # every leaf of both batches, counted once
    assert search.in_flight == 0 and search.cancel() == 0
    assert_clean(search, 4)
    search.run(FlakyEvaluator(), 10)
    assert all(search.root_visits(g).sum() >= 10 for g in range(4))


def test_player_keeps_playing_after_an_evaluator_error():
    evaluator = FlakyEvaluator([3])
    player = SearchPlayer(evaluator, 16, seed=3)
    game = Game(5, 0.5)
    with pytest.raises(RuntimeError):
        player.genmove(game)
    game.play(player.genmove(game))              # the same position again: works
    player.reset()
    assert player.genmove(Game(5, 0.5)) in range(26)
