"""play.player_settings.PlayerSettings: a player's defaults in one record (a player's search,
the fill pass rule, no opening moves, the loader's backend and capacity on the CPU), its words
made the project's Enums, and a field out of range refused by name."""
import pytest

from fastgo.search_settings import SearchSettings
from fastgo.variants import Backend, Device, PassRule, Search
from network.loading import DEFAULT_BACKEND, DEFAULT_CAPACITY
from play.player_settings import PLAYER_SEARCH, PlayerSettings


def test_the_defaults_are_a_players():
    settings = PlayerSettings(visits=8)
    assert settings.search == PLAYER_SEARCH == SearchSettings.for_play()
    assert settings.search.search is Search.PUCT and settings.search.noise_weight == 0.0
    assert settings.pass_rule is PassRule.FILL and settings.opening_moves == 0
    assert (settings.backend, settings.device) == (DEFAULT_BACKEND, Device.CPU)
    assert (settings.capacity, settings.threads) == (DEFAULT_CAPACITY, 0)


def test_words_become_enums_and_replace_checks_again():
    settings = PlayerSettings(visits=8, pass_rule="free", backend="torch", device="auto")
    assert settings.pass_rule is PassRule.FREE and settings.backend is Backend.TORCH
    assert settings.device is Device.AUTO
    assert settings.replace(visits=3).visits == 3
    with pytest.raises(ValueError, match="visits must be >= 1"):
        settings.replace(visits=0)


@pytest.mark.parametrize("fields, words", [
    ({"visits": 0}, "visits"), ({"pass_rule": "filled"}, "now spelt 'fill'"),
    ({"backend": "tpu"}, "backend must be one of"), ({"device": "gpu"}, "device must be one of"),
    ({"opening_moves": -1}, "opening_moves"), ({"capacity": 0}, "capacity"),
    ({"threads": -1}, "threads")])
def test_a_field_out_of_range_is_refused_by_name(fields, words):
    with pytest.raises(ValueError, match=words):
        PlayerSettings(**{"visits": 1, **fields})
    with pytest.raises(TypeError, match="SearchSettings"):
        PlayerSettings(visits=1, search="puct")
