"""SearchPlayer (play.search_player) and `fastgo bench mcts`."""
import json

import numpy as np

from fastgo.board import BLACK, WHITE
from fastgo.game import Game
from fastgo.search_settings import SearchSettings
from fastgo_cli.main import main
from play.players import RandomPlayer
from play.search_player import SearchPlayer


def test_search_player_reuses_its_tree_and_survives_undo():
    player = SearchPlayer("rollout", 200, seed=1)
    game = Game(7, 7.5)
    game.play(player.genmove(game))
    reply = player.analysis()[0]["pv"][1]          # the opponent plays the expected reply
    game.play(reply)
    player._sync(game)
    reused = player.search.root_visits(0).sum()
    assert player._synced == game.moves
    assert reused > 0
    game.undo()
    game.undo()
    move = player.genmove(game)                    # back at the start: a fresh tree
    assert player.search.root_visits(0).sum() == 200
    assert game.is_legal(move)


def area_evaluator(calls):
    """A callable evaluator that knows a little Go and nothing else: uniform policy; value =
    tanh(area estimate / N) from the side to move's planes (alphazero planes 0 and 1: own and
    opponent stones), each empty point counted for the color that has more stones beside it."""
    def evaluate(planes):
        calls.append(len(planes))
        count, n = len(planes), planes.shape[2]
        own, other = planes[:, 0].astype(np.float32), planes[:, 1].astype(np.float32)
        stones = own - other
        pad = np.pad(stones, ((0, 0), (1, 1), (1, 1)))
        beside = pad[:, :-2, 1:-1] + pad[:, 2:, 1:-1] + pad[:, 1:-1, :-2] + pad[:, 1:-1, 2:]
        area = stones.sum((1, 2)) + ((1 - own - other) * np.sign(beside)).sum((1, 2))
        return np.zeros((count, n * n + 1), np.float32), np.tanh(area / n).astype(np.float32)
    return evaluate


def play_against_random(player, size, games, komi=7.5):
    """Wins of `player` against RandomPlayer, alternating colors."""
    wins = 0
    for i in range(games):
        color = BLACK if i % 2 == 0 else WHITE
        rnd = RandomPlayer(seed=i)
        game = Game(size, komi)
        player.reset()
        while not game.is_over():
            game.play((player if game.to_move == color else rnd).genmove(game))
        wins += game.winner == color
    return wins


def test_search_player_with_a_callable_evaluator_beats_random():
    # The search must use the callable's values: with this evaluator (no rollouts anywhere)
    # it wins; the built-in rollout evaluator is tested below on its own.
    calls = []
    player = SearchPlayer(area_evaluator(calls), 100, seed=2)
    assert play_against_random(player, 7, 4) == 4
    assert sum(calls) >= 100                      # every visit's leaf went through the callable


def test_search_player_with_the_rollout_evaluator_beats_random():
    assert play_against_random(SearchPlayer("rollout", 300, seed=3), 9, 2) == 2


def test_bench_mcts_cli_writes_json(tmp_path, capsys):
    out = tmp_path / "mcts.json"
    rc = main(["bench", "mcts", "--games-at-once", "8", "--seconds", "0.2", "--repeats", "1",
               "--no-python", "--json", str(out)])
    assert rc == 0
    result = json.loads(out.read_text())
    assert result["board"] == 9 and result["games_at_once"] == 8 and result["sims_per_s"] > 0
    assert "simulations/s" in capsys.readouterr().out


def test_gumbel_search_player_is_deterministic_and_budgets_its_clock():
    calls = []
    moves = set()
    for seed in (1, 2, 3):
        player = SearchPlayer(area_evaluator(calls), 48, SearchSettings.for_play(search="gumbel"),
                              seed=seed)
        game = Game(7, 7.5)
        moves.add(player.genmove(game))
        assert player.search.root_visits(0).sum() == 48          # a fresh root, all visits
        assert np.nanmax(np.abs(player.search.root_gumbel(0)["noise"])) == 0.0
        assert player.ponder(game, 16, 100) is False              # nothing kept to ponder on
    assert len(moves) == 1
    # Under a clock: the first search takes one step's visits; later ones what the measured
    # speed fits into the seconds given (never more than `visits`).
    player = SearchPlayer(area_evaluator(calls), 400, SearchSettings.for_play(search="gumbel"),
                          seed=4)
    game = Game(7, 7.5)
    game.play(player.genmove(game, seconds=10.0))
    assert player.search.root_visits(0).sum() == SearchPlayer.STEP_VISITS
    player._rate = 1000.0                      # as if 1000 visits/s were measured
    game.play(player.genmove(game, seconds=0.1))
    assert player.search.root_visits(0).sum() == 100
    player._rate = 1e9
    game.play(player.genmove(game, seconds=10.0))
    assert player.search.root_visits(0).sum() == 400


def passing_network(planes):
    """Uniform over the points, the pass 10 logits above them; a value of 0 everywhere."""
    count, n = len(planes), planes.shape[2]
    logits = np.zeros((count, n * n + 1), np.float32)
    logits[:, -1] = 10.0
    return logits, np.zeros(count, np.float32)


def test_a_player_that_loves_passing_plays_on_under_the_fill_rule():
    for rule, expect_early_pass in (("fill", False), ("free", True)):
        player = SearchPlayer(passing_network, 16, seed=1, pass_rule=rule)
        game = Game(5, 0.5)
        early_pass = False
        while not game.is_over() and len(game.moves) < 30:
            mover = game.to_move
            move = player.genmove(game) if mover == BLACK \
                else RandomPlayer(seed=len(game.moves)).genmove(game)
            if mover == BLACK and move == game.pass_move and len(game.unfilled_points()) \
                    and not game.pass_wins():
                early_pass = True
            game.play(move)
        assert early_pass == expect_early_pass, rule


def test_no_pass_plays_a_searched_point_outside_the_own_eyes():
    # GTP's cleanup (genmove no_pass): the passing network's pass becomes the most visited open
    # point, never an own eye, until no open point is left.
    player = SearchPlayer(passing_network, 16, seed=1, pass_rule="free")
    game = Game(5, 0.5)
    while not game.is_over() and len(game.moves) < 60:
        if game.to_move == BLACK:
            open_points = set(game.unfilled_points().tolist())
            move = player.genmove(game, no_pass=True)
            visits = player.search.root_visits(0)
            if open_points:
                assert move in open_points
                assert visits[move] == max(visits[m] for m in open_points)
            else:
                assert move == game.pass_move
        else:
            move = RandomPlayer(seed=len(game.moves)).genmove(game)
        game.play(move)
