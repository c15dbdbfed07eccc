"""fastgo.search_settings: the search's settings as one validated structure, built from the
config in one place (for_selfplay) and for players (for_play)."""
import dataclasses
import pathlib
import re

import pytest

from fastgo.board import Board
from fastgo.mcts import BatchedSearch
from fastgo.search_settings import GumbelSettings, SearchSettings
from rundata.config import loads_config


def test_selfplay_settings_come_from_the_config():
    config = loads_config("[model]\nencoding = \"liberty\"\n[selfplay]\nc_puct = 2.0\n"
                          "dirichlet_alpha = 0.0\nresign_threshold = -1.0\ncheap_visits = 0\n"
                          "full_search_fraction = 0.25\nsearch = \"gumbel\"\n"
                          "gumbel_considered = 8\n")
    s = SearchSettings.for_selfplay(config)
    assert (s.encoding, s.c_puct, s.search, s.gumbel.considered) == ("liberty", 2.0, "gumbel", 8)
    # 0 / -1 in the config mean off; without cheap visits every search is a full one
    assert s.dirichlet_alpha is None and s.resign_threshold is None and s.cheap_visits is None
    assert s.full_search_fraction == 1.0 and s.noise_weight == config.selfplay.noise_weight


def test_play_settings_have_no_noise_and_resign_only_when_asked():
    play = SearchSettings.for_play("alphazero", search="gumbel", leaves_per_game=4)
    assert play.noise_weight == 0.0 and play.resign_threshold is None and play.leaves_per_game == 4
    resigning = SearchSettings.for_play(resign_threshold=-0.8)
    assert resigning.resign_threshold == -0.8 and resigning.resign_disabled_fraction == 0.0


@pytest.mark.parametrize("changes, word", [
    ({"search": "mcts"}, "search"), ({"encoding": "nope"}, "encoding"),
    ({"leaves_per_game": 0}, "leaves_per_game"), ({"noise_weight": 1.5}, "noise_weight"),
    ({"c_puct": -1.0}, "c_puct"), ({"dirichlet_alpha": 0.0}, "dirichlet_alpha"),
    ({"cheap_visits": 0}, "cheap_visits"), ({"resign_threshold": -1.5}, "resign_threshold")])
def test_a_bad_field_is_refused_by_name(changes, word):
    with pytest.raises(ValueError, match=word):
        SearchSettings().replace(**changes)
    with pytest.raises(ValueError, match="scale"):
        GumbelSettings(scale=-1.0)


def test_the_search_reads_its_settings():
    settings = SearchSettings(c_puct=2.0, leaves_per_game=3, gumbel=GumbelSettings(scale=0.5))
    search = BatchedSearch(games=2, size=5, settings=settings, seed=1)
    assert search.settings is settings and search.settings.leaves_per_game == 3
    # one way to read a setting: through search.settings, never as the search's own attribute
    for name in ("c_puct", "leaves_per_game", "gumbel_scale", "search"):
        assert not hasattr(search, name), name
    search.set_position(0, Board(5))
    with pytest.raises(TypeError, match="SearchSettings"):
        BatchedSearch(games=1, size=5, settings={"c_puct": 2.0})
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.c_puct = 3.0


def test_off_is_none_and_the_struct_is_built_in_one_place():
    # None is the one spelling of off; the search turns it into the struct's sentinels in
    # params_from_settings alone, and declares no setting outside the struct.
    settings = BatchedSearch(games=1, size=5, seed=1).settings
    assert settings.resign_threshold is None and settings.cheap_visits is None
    assert settings.dirichlet_alpha is None and settings.search == "puct"
    assert settings.gumbel.considered == GumbelSettings().considered
    root = pathlib.Path(__file__).resolve().parents[3] / "fastgo"
    source = (root / "mcts.pyx").read_text()
    builder = source[source.index("cdef int params_from_settings"):]
    builder = builder[:builder.index("\n\n\n")]
    for sentinel in ("RESIGN_OFF", "CHEAP_VISITS_OFF", "ALPHA_AUTO"):
        assert source.count(sentinel) == builder.count(sentinel) + 1, sentinel   # + the cimport
    declarations = [line.split("#")[0] for line in (root / "mcts.pxd").read_text().splitlines()
                    if line.strip().startswith("cdef ")]
    for name in SearchSettings.__dataclass_fields__:
        if name not in ("encoding", "search", "gumbel"):
            assert not any(re.search(rf"\b{name}\b", d) for d in declarations), \
                f"mcts.pxd declares {name} beside the struct"
