"""The arena as a program (play.arena) without the command line: a checkpoint's settings reach
its side and player (play.player_settings.PlayerSettings), a checkpoint side's name says
what sets it apart, run_arena plays an ArenaPlan to its lines, JSON and SGFs, and refuses sides
of different board sizes before a game is played."""
import json
from types import SimpleNamespace

import pytest

from fastgo.search_settings import SearchSettings
from network.batch_evaluator import UniformEvaluator
from play.arena.loop import run_arena
from play.arena.plan import ArenaError, ArenaPlan
from play.arena.sides import checkpoint_name
from play.network_player import make_search_player, make_search_side
from play.player_settings import PlayerSettings


def network(size=5):
    """A stand-in for a loaded Network: a uniform evaluator and the fields a side reads."""
    config = SimpleNamespace(encoding="alphazero", board_size=size, name="b1c8",
                             score_head=False)
    return SimpleNamespace(evaluator=UniformEvaluator(size), config=config, name="net",
                           shape=("b1c8", size, "alphazero", "torch-fp32"), komi=7.5, step=3,
                           heads=None)


def test_the_settings_reach_the_side_and_the_player():
    search = SearchSettings.for_play(search="gumbel", leaves_per_game=2, c_puct=2.5,
                                     resign_threshold=-0.9)
    settings = PlayerSettings(visits=7, search=search, opening_moves=3, pass_rule="free")
    side = make_search_side(network(), settings, seed=4, name="A")
    assert (side.visits, side.opening_moves, side.pass_rule, side.name) == (7, 3, "free", "A")
    assert side.settings.search == "gumbel" and side.settings.leaves_per_game == 2
    assert side.settings.c_puct == 2.5 and side.board_size == 5
    player = make_search_player(network(), settings, seed=4)
    assert player.visits == 7 and player.board_size == 5
    assert player.settings.resign_threshold == -0.9 and player.settings.search == "gumbel"


def plan(tmp_path, a="random", b="mcts:4", **fields):
    settings = PlayerSettings(visits=2)
    fields = {"size": 5, **fields}
    return ArenaPlan(a=a, b=b, games=4, settings_a=settings, settings_b=settings, seed=9,
                     games_at_once=2, json_path=str(tmp_path / "m.json"),
                     sgf_dir=str(tmp_path / "sgf"), **fields)


def test_a_checkpoint_name_says_its_step_pace_and_changed_search(tmp_path):
    timed = plan(tmp_path, move_seconds=0.5)
    search = SearchSettings.for_play(search="gumbel", leaves_per_game=4, c_puct=1.5,
                                     fpu_reduction=0.3)
    settings = PlayerSettings(visits=64, search=search)
    assert checkpoint_name("runs/x/../x/c.ckpt", 12, plan(tmp_path), settings) == \
        "runs/x/c.ckpt#12@v64x4-gumbel-cpuct1.5-fpu0.3"
    assert checkpoint_name("c.ckpt", 12, timed, PlayerSettings(visits=1)) == "c.ckpt#12@0.5s"
    clocked = plan(tmp_path, game_seconds=60.0)
    assert checkpoint_name("c.ckpt", 1, clocked, PlayerSettings(visits=1)) == "c.ckpt#1@60s-game"


def test_run_arena_plays_a_plan_to_its_lines_json_and_sgfs(tmp_path):
    out, err = [], []
    assert run_arena(plan(tmp_path), out=out.append, err=err.append) == 0
    assert err == [] and out[0] == ("fastgo arena: A random vs B mcts:4, 5x5 komi 7.5, 4 games, "
                                    "2 at once")
    data = json.loads((tmp_path / "m.json").read_text())
    assert data["games"] == 4 and f"games: {data['games']}" in out
    assert len(list((tmp_path / "sgf").glob("arena-*.sgf"))) == 4


def test_sides_of_different_board_sizes_are_refused_before_a_game(tmp_path, monkeypatch):
    import play.arena.sides

    sides = {"A": make_search_side(network(5), PlayerSettings(visits=2)),
             "B": make_search_side(network(7), PlayerSettings(visits=2))}
    monkeypatch.setattr(play.arena.sides, "make_arena_side", lambda spec, plan, seed, which:
                        sides[which])
    with pytest.raises(ArenaError, match=r"different board sizes: \[5, 7\]"):
        run_arena(plan(tmp_path, size=None), out=[].append, err=[].append)
    assert not (tmp_path / "m.json").exists()
