"""A command's player flags become its PlayerSettings (play.player_settings) here, in one
function every command that plays a network calls (gtp, play, analysis, arena, compare): a flag
sets the field its destination names in PLAYER_FIELDS or SEARCH_FIELDS (a flag means one thing
in every command); a new knob is its flag, its line here and, past the search's fields, the
record's field."""
from __future__ import annotations

from fastgo.search_settings import SearchSettings
from play.player_settings import PlayerSettings

# a flag's destination -> the PlayerSettings field it sets
PLAYER_FIELDS = {"visits": "visits", "pass_rule": "pass_rule", "opening_moves": "opening_moves",
                 "backend": "backend", "device": "device", "capacity": "capacity",
                 "threads": "threads"}
# a flag's destination -> the field it sets of the player's search (SearchSettings.for_play)
SEARCH_FIELDS = {"search": "search", "leaves": "leaves_per_game", "c_puct": "c_puct",
                 "fpu": "fpu_reduction", "value_bias": "value_bias",
                 "resign": "resign_threshold"}


def flag_value(args, dest, side=None):
    """The value of the parsed flag `dest`, None where the command has no such flag or it was
    not given. For `side` 'a' or 'b' (the arena's per-side flags), DEST_a or DEST_b first, B
    taking A's where it gives none, then DEST itself."""
    names = {None: (), "a": ("_a",), "b": ("_b", "_a")}[side]
    for name in [dest + suffix for suffix in names] + [dest]:
        value = getattr(args, name, None)
        if value is not None:
            return value
    return None


def settings_from_flags(args, side=None, **defaults) -> PlayerSettings:
    """The PlayerSettings of parsed flags `args`: every flag of PLAYER_FIELDS and SEARCH_FIELDS
    the command has and was given (flag_value; `side`: the arena's 'a' or 'b'); `defaults`, by
    the same names, for those it has no flag for or leaves unset (None); the record's own
    defaults for the rest. ValueError (TypeError for a name that is no flag's) for a value
    the record or the search refuses."""
    unknown = set(defaults) - set(PLAYER_FIELDS) - set(SEARCH_FIELDS)
    if unknown:
        raise TypeError(f"settings_from_flags: no player flag is called {sorted(unknown)}")
    given = dict(defaults)
    for dest in (*PLAYER_FIELDS, *SEARCH_FIELDS):
        value = flag_value(args, dest, side)
        if value is not None:
            given[dest] = value
    search = SearchSettings.for_play(**{SEARCH_FIELDS[dest]: value for dest, value in given.items()
                                        if dest in SEARCH_FIELDS})
    return PlayerSettings(search=search, **{PLAYER_FIELDS[dest]: value
                                            for dest, value in given.items()
                                            if dest in PLAYER_FIELDS})
