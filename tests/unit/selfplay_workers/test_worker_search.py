"""The worker's search settings: Gumbel root search records the improved policy as the target,
and visits_schedule grows the search with the model's training step."""
import numpy as np
import pytest

from fastgo.game import Game
from network.batch_evaluator import RandomEvaluator
from rundata.config import loads_config
from rundata.shards import list_shards, read_shard
from selfplay_workers.worker import SelfplayWorker

BASE = """
[model]
board_size = 5
[selfplay]
games = 6
visits = 12
komi = 0.5
resign_threshold = -1.0
pass_rule = "fill"
"""


class Versioned(RandomEvaluator):
    """Random logits and values, answered as a model trained `version` steps; counts rows."""

    def __init__(self, version):
        super().__init__(5, seed=3)
        self.model_version = version
        self.rows = 0

    def evaluate(self, planes):
        self.rows += len(planes)
        return super().evaluate(planes)


def play(tmp_path, extra, *, version=None, count=12):
    config = loads_config(BASE + extra)
    evaluator = Versioned(version)
    worker = SelfplayWorker(config, evaluator, shard_dir=tmp_path, seed=9)
    worker.run(max_games=count)
    games = [g for n in list_shards(tmp_path) for g in read_shard(tmp_path / n).games]
    return worker, evaluator, games


def test_gumbel_targets_are_distributions_over_legal_moves(tmp_path):
    _, _, games = play(tmp_path, 'search = "gumbel"\ncheap_visits = 4\nfull_search_fraction = 0.5\n')
    assert len(games) >= 12
    full_positions = 0
    for record in games:
        starts = np.concatenate([[0], np.cumsum(record.policy_count, dtype=np.int64)])
        game = Game(5, 0.5)
        for k, move in enumerate(record.moves):
            moves = record.policy_moves[starts[k]:starts[k + 1]]
            probs = record.policy_visits[starts[k]:starts[k + 1]]
            assert (record.policy_count[k] > 0) == bool(record.full[k])
            if record.full[k]:
                full_positions += 1
                assert probs.sum() == pytest.approx(1.0, abs=1e-4)
                assert (probs > 0).all()
                legal = game.legal_moves()
                assert all(legal[m] for m in moves)
                open_points = [m for m in np.flatnonzero(legal[:-1])
                               if not game.board.is_eye(int(m), game.to_move)]
                if open_points:
                    assert 25 not in moves.tolist()      # pass_rule "fill": the pass is no target
                # The improved policy covers every legal move that may be chosen, not only the
                # searched ones.
                assert len(moves) >= min(len(open_points), 12)
            game.play(int(move))
    assert 0.25 * sum(len(r.moves) for r in games) < full_positions


@pytest.mark.parametrize("search", ["puct", "gumbel"])
@pytest.mark.parametrize("version,low", [(None, True), (50, True), (500, False)])
def test_visits_follow_the_schedule(tmp_path, search, version, low):
    extra = f'search = "{search}"\nvisits_schedule = ["0:3", "100:24"]\n'
    worker, evaluator, games = play(tmp_path, extra, version=version, count=6)
    moves = sum(len(r.moves) for r in games)
    assert worker.stats()["visits"] == (3 if low else 24)
    per_move = evaluator.rows / max(1, moves)
    if low:
        assert per_move < 4.5             # at most 3 simulations + the root's evaluation
    else:
        assert per_move > 12


@pytest.mark.parametrize("search", ["gumbel", "puct"])
def test_each_full_search_records_its_policy_surprise(tmp_path, search):
    """The worker records KL(target || prior) at each full search, 0 at the cheap ones; with a
    random network the search moves the target away from its prior, so most are above 0."""
    _, _, games = play(tmp_path, f'search = "{search}"\ncheap_visits = 4\n'
                                 'full_search_fraction = 0.5\n')
    full_values = []
    for record in games:
        assert record.surprise is not None and len(record.surprise) == len(record.moves)
        assert np.all(record.surprise[record.full == 0] == 0)
        assert np.all((record.surprise >= 0) & (record.surprise <= 100))
        full_values.extend(record.surprise[record.full == 1].tolist())
    assert len(full_values) > 20
    assert np.mean(np.array(full_values) > 0) > 0.9
