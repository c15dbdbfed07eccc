"""The batched search's settings (fastgo.mcts.BatchedSearch) as two frozen, validated structures,
as KataGo's SearchParams: SearchSettings (PUCT, root noise, batching, the tree, the move choice,
resignation, playout-cap randomization) with GumbelSettings (the Gumbel root search) inside.
`for_selfplay(config)` builds self-play's from a fastgo Config, the one place the [selfplay]
section becomes a search; `for_play(...)` the players' (no noise, no resignation unless asked).

Values are in the units of the config: visits are root-child visits, fractions are in [0, 1],
c_puct, fpu_reduction and virtual_loss are >= 0. ValueError names the field that is out of range.

"Off" has one spelling here: None (dirichlet_alpha: the automatic alpha; resign_threshold: never
resign; cheap_visits: no playout-cap randomization); 0 in those fields is refused with a message.
The config's spellings, which shipped configs use (0 for dirichlet_alpha and cheap_visits, -1
for resign_threshold), become None in `for_selfplay` and nowhere else; BatchedSearch turns None
into the named sentinels of its typed struct (fastgo/search_params.pxd) in one function.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from fastgo.features import ENCODING_IDS
from fastgo.variants import Search


@dataclass(frozen=True)
class GumbelSettings:
    """The Gumbel root search (fastgo.gumbel; Danihelka et al. 2022)."""

    considered: int = 16       # m: moves sampled at the root (at most the legal ones)
    c_visit: float = 50.0      # sigma(q) = (c_visit + max N) * c_scale * q
    c_scale: float = 1.0
    rescale: bool = False      # completed q min-max rescaled to [0, 1] (default: (q + 1) / 2)
    scale: float = 1.0         # scale of the Gumbel noise (0: none, for play)

    def __post_init__(self):
        if self.considered < 1:
            raise ValueError(f"gumbel.considered must be >= 1, got {self.considered}")
        if not (self.c_visit >= 0 and self.c_scale >= 0 and self.scale >= 0):
            raise ValueError("gumbel.c_visit, c_scale and scale must be >= 0")


@dataclass(frozen=True)
class SearchSettings:
    """Everything BatchedSearch does per game that is not the batch's shape (games, board size,
    komi) or its seed."""

    search: Search = Search.PUCT       # root selection (a name is taken and made a Search)
    encoding: str = "alphazero"        # feature planes the evaluator takes
    c_puct: float = 1.25               # exploration constant of PUCT
    fpu_reduction: float = 0.25        # first-play urgency: parent Q minus this x sqrt(visited prior)
    dirichlet_alpha: float | None = None   # None: 0.03 x 361 / legal root moves
    noise_weight: float = 0.25         # weight of the root's Dirichlet noise (0: no noise)
    leaves_per_game: int = 1           # leaves one game adds to one batch (virtual loss between)
    virtual_loss: float = 1.0          # visits of a loss charged to each node on a pending path
    max_batches: int = 2               # batches in flight at once
    max_nodes: int = 1 << 20           # node capacity per game (arrays grow by doubling up to it)
    random_symmetry: bool = True       # a random one of the 8 symmetries per evaluation
    temperature_moves: int = 0         # choose_move without a temperature: 1 before this move, 0 after
    resign_threshold: float | None = None   # None: never resign; else below this root value ...
    resign_consecutive: int = 2        # ... for this many consecutive own moves
    resign_disabled_fraction: float = 0.1   # games (drawn per game) that never resign
    cheap_visits: int | None = None    # playout-cap randomization: a cheap search's visits ...
    full_search_fraction: float = 1.0  # ... taken with probability 1 - this, without noise
    gumbel: GumbelSettings = field(default_factory=GumbelSettings)
    value_bias: float = 0.0            # subtree value-bias correction's lambda (0: off; fastgo.value_bias)
    value_bias_alpha: float = 0.8      # ... a node's error weighs (its children's visits) ** this

    def __post_init__(self):
        if self.search not in Search.choices():
            raise ValueError(f"unknown search {self.search!r}; expected one of "
                             f"{sorted(Search.choices())}")
        object.__setattr__(self, "search", Search(self.search))
        if self.encoding not in ENCODING_IDS:
            raise ValueError(f"unknown encoding {self.encoding!r}; expected one of "
                             f"{sorted(ENCODING_IDS)}")
        for name in ("leaves_per_game", "max_batches", "resign_consecutive"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.c_puct < 0 or self.fpu_reduction < 0 or self.virtual_loss < 0:
            raise ValueError("c_puct, fpu_reduction and virtual_loss must be >= 0")
        for name in ("noise_weight", "resign_disabled_fraction", "full_search_fraction"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {getattr(self, name)}")
        if self.dirichlet_alpha is not None and not self.dirichlet_alpha > 0:
            raise ValueError(f"dirichlet_alpha must be > 0 or None, got {self.dirichlet_alpha}")
        if self.resign_threshold is not None and not -1.0 <= self.resign_threshold <= 1.0:
            raise ValueError(f"resign_threshold must be in [-1, 1] or None (never resign), got "
                             f"{self.resign_threshold}")
        if self.cheap_visits is not None and int(self.cheap_visits) < 1:
            raise ValueError(f"cheap_visits must be >= 1 or None, got {self.cheap_visits}")
        if self.temperature_moves < 0:
            raise ValueError(f"temperature_moves must be >= 0, got {self.temperature_moves}")
        if not 0.0 <= self.value_bias <= 1.0:
            raise ValueError(f"value_bias must be in [0, 1], got {self.value_bias}")
        if not 0.0 <= self.value_bias_alpha <= 2.0:
            raise ValueError(f"value_bias_alpha must be in [0, 2], got {self.value_bias_alpha}")
        if not isinstance(self.gumbel, GumbelSettings):
            raise TypeError(f"gumbel must be a GumbelSettings, got {type(self.gumbel).__name__}")

    def replace(self, **changes) -> SearchSettings:
        """A copy with `changes` (validated again)."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def for_selfplay(cls, config) -> SearchSettings:
        """Self-play's search from a fastgo Config: [model] encoding and the [selfplay] section
        (0 in dirichlet_alpha and cheap_visits means off; a resign_threshold of -1 never
        resigns)."""
        sp = config.selfplay
        return cls(
            search=sp.search, encoding=config.model.encoding, c_puct=sp.c_puct,
            fpu_reduction=sp.fpu_reduction, dirichlet_alpha=sp.dirichlet_alpha or None,
            noise_weight=sp.noise_weight, max_batches=2, temperature_moves=sp.temperature_moves,
            resign_threshold=None if sp.resign_threshold <= -1.0 else sp.resign_threshold,
            resign_consecutive=sp.resign_consecutive,
            resign_disabled_fraction=sp.resign_disabled_fraction,
            cheap_visits=sp.cheap_visits or None, value_bias=sp.value_bias,
            full_search_fraction=sp.full_search_fraction if sp.cheap_visits else 1.0,
            gumbel=GumbelSettings(considered=sp.gumbel_considered, c_visit=sp.gumbel_c_visit,
                                  c_scale=sp.gumbel_c_scale, rescale=sp.gumbel_rescale))

    @classmethod
    def for_play(cls, encoding="alphazero", *, search=Search.PUCT, leaves_per_game=1,
                 resign_threshold=None, **changes) -> SearchSettings:
        """A player's search (matches, the GTP engine): no root noise, the most visited move,
        resignation only below `resign_threshold` (then in every game); `changes` as fields."""
        resign = {} if resign_threshold is None else {"resign_threshold": resign_threshold,
                                                      "resign_disabled_fraction": 0.0}
        return cls(search=search, encoding=encoding, leaves_per_game=leaves_per_game,
                   noise_weight=0.0, **resign, **changes)
