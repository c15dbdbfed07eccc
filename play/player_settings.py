"""How a network plays, one record for every command and role that plays one (PlayerSettings):
its search (fastgo.search_settings.SearchSettings: the root search, the leaves of a step,
PUCT's constants, resignation), its visits a move, the pass rule, the opening moves sampled by
visits, and where its network runs (backend, device, the runner's capacity, torch's threads).
Every default of a player is here; a command's flags become one record in one function
(fastgo_cli.player_flags.settings_from_flags)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from fastgo.search_settings import SearchSettings
from fastgo.variants import Backend, Device, PassRule, check_pass_rule
from network.loading import DEFAULT_BACKEND, DEFAULT_CAPACITY

PLAYER_SEARCH = SearchSettings.for_play()    # a player's search: no root noise, no resignation


@dataclass(frozen=True)
class PlayerSettings:
    """A player's settings: `visits` root visits a move (equal time sets a side's from its
    measured speed, play.equal_time.pace_sides), its `search` (the network's encoding replaces
    the one given here; its resign_threshold: a one-game player resigns below that root
    value), the `pass_rule` (fastgo.move_choice), the first `opening_moves` of a match game
    sampled by visits, the CPU inference `backend`, the `device`, the runner's `capacity`
    (positions of one forward pass) and torch's CPU `threads` (0: the use's,
    network.loading.USES). ValueError names a field out of range."""

    visits: int
    search: SearchSettings = PLAYER_SEARCH
    pass_rule: PassRule = PassRule.FILL
    opening_moves: int = 0
    backend: Backend = DEFAULT_BACKEND
    device: Device = Device.CPU
    capacity: int = DEFAULT_CAPACITY
    threads: int = 0

    def __post_init__(self):
        if int(self.visits) < 1:
            raise ValueError(f"visits must be >= 1, got {self.visits}")
        if not isinstance(self.search, SearchSettings):
            raise TypeError(f"search must be a SearchSettings, got {type(self.search).__name__}")
        object.__setattr__(self, "pass_rule", check_pass_rule(self.pass_rule))
        for name, variant in (("backend", Backend), ("device", Device)):
            value = getattr(self, name)
            if value not in variant.choices():
                raise ValueError(f"{name} must be one of {list(variant.choices())}, got "
                                 f"{value!r}")
            object.__setattr__(self, name, variant(value))
        for name, low in (("opening_moves", 0), ("capacity", 1), ("threads", 0)):
            if getattr(self, name) < low:
                raise ValueError(f"{name} must be >= {low}, got {getattr(self, name)}")

    def replace(self, **changes) -> PlayerSettings:
        """A copy with `changes` (validated again)."""
        return dataclasses.replace(self, **changes)
