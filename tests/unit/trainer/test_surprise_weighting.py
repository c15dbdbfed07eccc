"""Policy surprise weighting (trainer.surprise_weight): each game keeps its weight, its
surprising full-search positions are drawn more often, and the window draws by those weights."""
import numpy as np
import pytest

from rundata.records import GameRecord
from selfplay_workers.worker import policy_surprise
from trainer.window import Block, ReplayWindow, block_from_games, sampling_weights


def test_weights_by_hand():
    # game 0: four positions, three full (surprise 1, 3, 0); game 1: two full without surprise;
    # game 2: one position without a full search
    game_start = np.array([0, 4, 6, 7], np.int64)
    full = np.array([1, 0, 1, 1, 1, 1, 0], np.uint8)
    surprise = np.array([1.0, 0.0, 3.0, 0.0, 0.0, 0.0, 0.0], np.float32)
    weights = sampling_weights(game_start, full, surprise, 0.5)
    # F = 3, S = 4: 1 - 0.5 + 0.5 * 3 * s / 4
    np.testing.assert_allclose(weights, [0.875, 1.0, 1.625, 0.5, 1.0, 1.0, 1.0])
    assert weights[[0, 2, 3]].sum() == pytest.approx(3.0)       # the game keeps its weight
    np.testing.assert_array_equal(sampling_weights(game_start, full, surprise, 0.0), np.ones(7))
    # share 1: all of it by surprise, a full position without surprise is never drawn
    np.testing.assert_allclose(sampling_weights(game_start, full, surprise, 1.0)[:4],
                               [0.75, 1.0, 2.25, 0.0])


def test_policy_surprise_is_the_kl_of_the_target_from_the_prior():
    target = np.array([5.0, 5.0, 0.0], np.float32)             # any scale: visits
    prior = np.array([0.25, 0.75, 0.0], np.float32)
    expected = 0.5 * np.log(0.5 / 0.25) + 0.5 * np.log(0.5 / 0.75)
    assert policy_surprise(target, prior) == pytest.approx(expected, rel=1e-5)
    assert policy_surprise(target / 10, prior) == pytest.approx(expected, rel=1e-5)
    assert policy_surprise(np.zeros(3, np.float32), prior) == 0.0
    assert policy_surprise(prior, prior) == pytest.approx(0.0, abs=1e-6)
    # a target on a move the prior gave nothing is bounded
    assert 0 < policy_surprise(np.array([0.0, 0.0, 1.0], np.float32), prior) <= 100.0


def block(lengths, full, surprise):
    m, g = sum(lengths), len(lengths)
    return Block(name="b", moves=np.zeros(m, np.int16), game_len=np.array(lengths, np.int64),
                 winner=np.zeros(g, np.int8), score=np.zeros(g, np.float32),
                 score_known=np.zeros(g, np.uint8), ownership=np.zeros((g, 25), np.int8),
                 policy_count=np.zeros(m, np.int64), policy_moves=np.zeros(0, np.int16),
                 policy_visits=np.zeros(0, np.float32), full=np.array(full, np.uint8),
                 root_value=np.zeros(m, np.float32), surprise=np.array(surprise, np.float32),
                 searched=np.ones(g, np.uint8), ids=tuple(str(i) for i in range(g)))


@pytest.mark.parametrize("share", [0.0, 0.5, 1.0])
def test_the_window_draws_positions_by_their_weights(share):
    lengths, full, surprise = [4, 2, 1], [1, 0, 1, 1, 1, 1, 0], [1, 0, 3, 0, 0, 0, 0]
    window = ReplayWindow(5, 0.5, "katago", window="fixed", window_size=100,
                          surprise_weight=share)
    window.add(block(lengths, full, surprise))
    drawn = []
    window.encode = lambda game, move, symmetry, out: drawn.append(
        np.asarray(window.flat()["game_start"])[game] + move)
    out = {"planes": np.empty((20_000, 1, 5, 5), np.uint8)}
    rng = np.random.default_rng(7)
    for _ in range(10):
        window.sample(rng, out)
    counts = np.bincount(np.concatenate(drawn), minlength=7)
    starts = np.array([0, 4, 6, 7], np.int64)
    weights = sampling_weights(starts, np.array(full, np.uint8), np.array(surprise, np.float32),
                               share)
    expected = 200_000 * weights / weights.sum()
    # 200,000 draws: each count within 5 standard deviations of its expectation
    assert np.all(np.abs(counts - expected) <= 5 * np.sqrt(expected + 1)), (counts, expected)
    if share == 1.0:
        assert counts[3] == 0


def test_a_window_of_older_games_without_surprise_draws_uniformly():
    """Games recorded before the shards held a surprise (GameRecord.surprise None) weigh 1."""
    old = [GameRecord(size=5, komi=0.5, moves=np.array([0, 1, 25], np.int16),
                      full=np.ones(3, np.uint8), root_value=np.zeros(3, np.float32),
                      policy_count=np.zeros(3, np.uint16), policy_moves=np.zeros(0, np.int16),
                      policy_visits=np.zeros(0, np.float32), winner=1, score=1.5, end="resign",
                      ownership=np.zeros(25, np.int8), versions=[1], id=c * 32)
           for c in "ab"]
    window = ReplayWindow(5, 0.5, "katago", window="fixed", window_size=100, surprise_weight=0.5)
    window.add(block_from_games(old, 5, "old"))
    np.testing.assert_allclose(np.diff(np.concatenate([[0.0], window.flat()["cumulative_weight"]])),
                               np.ones(6))
