"""play.network_player: a side's search settings reach its SearchSettings with the network's
encoding, and nothing else moves."""
from types import SimpleNamespace

from fastgo.search_settings import SearchSettings
from play.network_player import make_search_side
from play.player_settings import PlayerSettings


def fake_network(encoding="katago", size=9):
    return SimpleNamespace(config=SimpleNamespace(encoding=encoding, board_size=size),
                           evaluator="uniform", name="net", shape=("net", size, encoding, None))


def test_changes_reach_the_sides_search_and_the_rest_stays_a_players():
    plain = make_search_side(fake_network(), PlayerSettings(visits=8)).settings
    assert plain == SearchSettings.for_play("katago")
    search = SearchSettings.for_play(search="gumbel", leaves_per_game=2, c_puct=0.5,
                                     fpu_reduction=0.0)
    changed = make_search_side(fake_network(), PlayerSettings(visits=8, search=search)).settings
    assert (changed.c_puct, changed.fpu_reduction) == (0.5, 0.0)
    assert changed == SearchSettings.for_play("katago", search="gumbel", leaves_per_game=2,
                                              c_puct=0.5, fpu_reduction=0.0)
    assert changed.noise_weight == 0.0 and changed.resign_threshold is None
