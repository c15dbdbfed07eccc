"""SearchPlayer (selfplay_workers.search_player) and `fastgo bench mcts`."""
import json

import numpy as np

from fastgo.board import BLACK, WHITE
from fastgo.game import Game
from fastgo_cli.main import main
from selfplay_workers.players import RandomPlayer
from selfplay_workers.search_player import SearchPlayer


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


def test_search_player_with_a_callable_evaluator_beats_random():
    calls = []

    def evaluator(planes):
        calls.append(len(planes))
        count, n = len(planes), planes.shape[2]
        return np.zeros((count, n * n + 1), np.float32), np.zeros(count, np.float32)

    cheap = SearchPlayer(evaluator, 20, seed=2)
    game = Game(5, 0.5)
    assert game.is_legal(cheap.genmove(game)) and calls
    strong = SearchPlayer("rollout", 300, seed=3)
    wins = 0
    for i in range(2):
        color = BLACK if i == 0 else WHITE
        rnd = RandomPlayer(seed=i)
        game = Game(9, 7.5)
        strong.reset()
        while not game.is_over():
            game.play((strong if game.to_move == color else rnd).genmove(game))
        wins += game.winner == color
    assert wins == 2


def test_bench_mcts_cli_writes_json(tmp_path, capsys):
    out = tmp_path / "mcts.json"
    rc = main(["bench", "mcts", "--games", "8", "--seconds", "0.2", "--repeats", "1",
               "--no-python", "--json", str(out)])
    assert rc == 0
    result = json.loads(out.read_text())
    assert result["board"] == 9 and result["games"] == 8 and result["sims_per_s"] > 0
    assert "simulations/s" in capsys.readouterr().out
