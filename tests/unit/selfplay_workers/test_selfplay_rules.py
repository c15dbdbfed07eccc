"""Self-play move rules: with pass_rule = "fill" no player passes while a legal move outside its
own eyes is left, and the pass is then no policy target; "settled" passes only there or on a
settled board (every empty region reaching one colour); with earliest_pass none passes early."""
import numpy as np
import pytest

from fastgo.game import Game
from network.batch_evaluator import UniformEvaluator
from rundata.config import loads_config
from rundata.shards import list_shards, read_shard
from selfplay_workers.worker import SelfplayWorker

BASE = """
[model]
board_size = 5
[selfplay]
games = 8
visits = 12
komi = 0.5
resign_threshold = -1.0
"""


def games_of(tmp_path, extra, count=16):
    config = loads_config(BASE + extra)
    SelfplayWorker(config, UniformEvaluator(5), shard_dir=tmp_path, seed=4).run(max_games=count)
    return [g for n in list_shards(tmp_path) for g in read_shard(tmp_path / n).games]


def points_outside_eyes(game):
    """The legal board points that do not fill the side to move's own eye (computed here, not
    by the code under test)."""
    return [m for m in np.flatnonzero(game.legal_moves()[:-1])
            if not game.board.is_eye(int(m), game.to_move)]


def test_pass_only_when_the_board_is_filled(tmp_path):
    games = games_of(tmp_path, 'pass_rule = "fill"\n')
    passes = 0
    for record in games:
        starts = np.concatenate([[0], np.cumsum(record.policy_count, dtype=np.int64)])
        game = Game(5, 0.5)
        for k, move in enumerate(record.moves):
            open_points = points_outside_eyes(game)
            if move == 25:
                passes += 1
                assert not open_points, f"passed at move {k} with {open_points} open"
            elif open_points:
                assert 25 not in record.policy_moves[starts[k]:starts[k + 1]]
            game.play(int(move))
    assert passes > 0


def test_settled_passes_only_on_a_filled_or_settled_board(tmp_path):
    games = games_of(tmp_path, 'pass_rule = "settled"\n')
    passes = settled_passes = 0
    for record in games:
        starts = np.concatenate([[0], np.cumsum(record.policy_count, dtype=np.int64)])
        game = Game(5, 0.5)
        for k, move in enumerate(record.moves):
            open_points = points_outside_eyes(game)
            settled = game.board.settled()
            if move == 25:
                passes += 1
                assert settled or not open_points, f"passed at move {k} with {open_points} open"
                settled_passes += bool(open_points)
            elif open_points and not settled:
                assert 25 not in record.policy_moves[starts[k]:starts[k + 1]]
            game.play(int(move))
    # a uniform search passes where it may: some passes come before the board is filled
    assert passes > 0 and settled_passes > 0


def test_no_pass_before_the_earliest_pass(tmp_path):
    games = games_of(tmp_path, "earliest_pass = 10\n")
    for record in games:
        assert 25 not in record.moves[:10].tolist()


@pytest.mark.parametrize("extra", ["", 'pass_rule = "fill"\n', 'pass_rule = "settled"\n'])
def test_games_verify_under_the_rules(tmp_path, extra):
    assert len(games_of(tmp_path, extra, count=8)) >= 8
