"""selfplay.nn_cache: the worker's cache of network evaluations answers what the network would
have answered, sends on only the positions it does not hold, forgets on a new network version,
and leaves self-play's games unchanged where the network is exactly symmetric."""
import numpy as np
import pytest

from fastgo.constants import ENCODING_PLANES
from fastgo.nn_cache import NetworkCache
from network.batch_evaluator import _Immediate
from rundata.config import ConfigError, loads_config
from rundata.shards import list_shards, read_shard
from selfplay_workers.cached_evaluator import CachedEvaluator
from selfplay_workers.worker import SelfplayWorker


class Symmetric(_Immediate):
    """A deterministic network that commutes with the board's symmetries: a point's logit is a
    weighted count of its set planes, the pass logit and the value depend on plane totals only.
    Counts the rows it was asked and keeps a version."""

    def __init__(self, size, planes, version=1):
        super().__init__()
        self.size = size
        self.weights = np.linspace(0.25, 2.0, planes).astype(np.float32)
        self.model_version = version
        self.rows = 0

    def evaluate(self, planes):
        self.rows += len(planes)
        count = len(planes)
        board = np.einsum("bpm,p->bm", planes.reshape(count, planes.shape[1], -1).astype(np.float32),
                          self.weights)
        totals = planes.reshape(count, planes.shape[1], -1).sum(axis=2).astype(np.float32)
        pass_logit = (totals[:, 0] - totals[:, 1]) / 16.0
        values = np.tanh((totals[:, 0] - totals[:, 1]) / 8.0).astype(np.float32)
        return np.concatenate([board, pass_logit[:, None]], axis=1).astype(np.float32), values


def test_answers_equal_the_networks_and_only_misses_are_sent(board_copies):
    rng = np.random.default_rng(5)
    n, p = 5, 4
    net = Symmetric(n, p)
    cached = CachedEvaluator(net, NetworkCache(256, n, p))
    first = rng.integers(0, 2, size=(10, p, n, n), dtype=np.uint8)
    logits, values = cached.evaluate(first)
    assert net.rows == 10
    # the same positions under other symmetries, mixed with new ones
    turned = np.stack([board_copies(x)[3] for x in first[:6]])
    fresh = rng.integers(0, 2, size=(4, p, n, n), dtype=np.uint8)
    second = np.concatenate([turned, fresh])
    got_logits, got_values = cached.evaluate(second)
    want_logits, want_values = Symmetric(n, p).evaluate(second)
    np.testing.assert_array_equal(got_logits, want_logits)
    np.testing.assert_array_equal(got_values, want_values)
    assert net.rows == 14, "only the 4 new positions go to the network"
    assert (cached.rows, cached.hits) == (20, 6)
    # a batch the cache holds whole sends nothing
    requests = cached.requests
    cached.evaluate(first[:3])
    assert cached.requests == requests and net.rows == 14


def test_a_new_network_version_empties_the_cache():
    rng = np.random.default_rng(6)
    n, p = 5, 4
    net = Symmetric(n, p, version=1)
    cached = CachedEvaluator(net, NetworkCache(256, n, p))
    a = rng.integers(0, 2, size=(4, p, n, n), dtype=np.uint8)
    b = rng.integers(0, 2, size=(4, p, n, n), dtype=np.uint8)
    cached.evaluate(a)
    net.model_version = 2
    cached.evaluate(b)             # answered by version 2: version 1's entries go
    rows = net.rows
    cached.evaluate(a)
    assert net.rows == rows + 4
    cached.evaluate(b)
    assert net.rows == rows + 4


def test_a_failed_receive_leaves_no_ticket_behind():
    class Busy(Symmetric):
        def receive(self, ticket):
            raise RuntimeError("busy")

    net = Busy(5, 4)
    cached = CachedEvaluator(net, NetworkCache(16, 5, 4))
    ticket = cached.submit(np.zeros((2, 4, 5, 5), np.uint8))
    with pytest.raises(RuntimeError, match="busy"):
        cached.receive(ticket)
    with pytest.raises(KeyError, match="unknown"):
        cached.receive(ticket)


BASE = """
[model]
board_size = 5
[selfplay]
games = 8
search = "gumbel"
visits = 16
cheap_visits = 4
full_search_fraction = 0.5
komi = 0.5
resign_threshold = -1.0
pass_rule = "fill"
"""


def play(tmp_path, extra):
    tmp_path.mkdir()
    config = loads_config(BASE + extra)
    net = Symmetric(5, ENCODING_PLANES[config.model.encoding])
    worker = SelfplayWorker(config, net, shard_dir=tmp_path, seed=11)
    stats = worker.run(max_games=16)
    games = [g for name in list_shards(tmp_path) for g in read_shard(tmp_path / name).games]
    return stats, net, games


def test_self_play_plays_the_same_games_with_fewer_network_rows(tmp_path):
    plain_stats, plain_net, plain = play(tmp_path / "plain", "")
    cached_stats, cached_net, cached = play(tmp_path / "cached", "nn_cache = 4096\n")
    assert len(plain) == len(cached) >= 16
    key = sorted((g.moves.tolist(), g.policy_visits.round(5).tolist()) for g in plain)
    assert key == sorted((g.moves.tolist(), g.policy_visits.round(5).tolist()) for g in cached)
    assert cached_stats["cache_hits"] > 0
    assert cached_net.rows == plain_net.rows - cached_stats["cache_hits"]
    assert "cache_hits" not in plain_stats


@pytest.mark.parametrize("entries", [3, 100, -1, 1 << 25])
def test_nn_cache_must_be_a_power_of_two(entries):
    with pytest.raises(ConfigError, match="nn_cache"):
        loads_config(BASE + f"nn_cache = {entries}\n")
