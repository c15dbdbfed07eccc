"""What an arena match plays (ArenaPlan: the two player specs, each side's
play.player_settings.PlayerSettings, the games, the pace, the files written), the errors that
refuse one (ArenaError: one line, exit status 2) and the SPRT's constants."""
from __future__ import annotations

from dataclasses import dataclass

from fastgo.files import escaped
from play.player_settings import PlayerSettings

PROG = "fastgo arena"              # the start of every line the arena writes
SPRT_ALPHA = SPRT_BETA = 0.05
DEFAULT_GAMES_AT_ONCE = 20         # games played at the same time (networks batch across them)
DEFAULT_OPENING_MOVES = 2          # a checkpoint's first moves of a game sampled by visits
# a checkpoint's changed PUCT constants in its name: -cpuct1.5, -fpu0.3
NAME_SUFFIXES = {"c_puct": "cpuct", "fpu_reduction": "fpu", "value_bias": "vbias"}


class ArenaError(ValueError):
    """A match that cannot be played as asked (a bad player, sizes that disagree, an engine
    that does not start): one line for stderr, exit status 2."""


@dataclass
class ArenaPlan:
    """A match: players `a` and `b` (player specs, fastgo.player_spec), `games` games,
    `games_at_once` of them at a time, on `size` (None: the networks' size, else 9) with
    `komi`; `seed` the players' base seed (A gets seed + 1, B seed + 2). `settings_a` and
    `settings_b`: how a checkpoint side plays (its visits, search, leaves, PUCT's constants,
    backend; a ref:NAME player takes only the backend). Equal time: `move_seconds` a move or
    `game_seconds` a game clock (then the checkpoints' visits come from their measured speed).
    `sprt`: (elo0, elo1) to stop early, None to play every game. `names`: (name of A, name of
    B), None for a name made from the spec. The files: SGFs into `sgf_dir`, the summary to
    `json_path`, a row appended to `table` (None: no table)."""
    a: str
    b: str
    games: int
    settings_a: PlayerSettings
    settings_b: PlayerSettings
    seed: int = 0
    games_at_once: int = DEFAULT_GAMES_AT_ONCE
    size: int | None = None
    komi: float = 7.5
    visits: int | None = None          # the visits a match is said to be at (the JSON, table)
    move_seconds: float | None = None
    game_seconds: float | None = None
    sprt: tuple | None = None
    names: tuple = (None, None)
    sgf_dir: str | None = None
    json_path: str | None = None
    table: str | None = None

    def settings(self, which) -> PlayerSettings:
        """The PlayerSettings of side `which` ('A' or 'B')."""
        return self.settings_b if which == "B" else self.settings_a

    @property
    def at_once(self) -> int:
        return min(self.games_at_once, self.games)

    def pace(self, visits) -> str:
        """A network player's pace in its name: v64 (visits), 1s (a move), 60s-game (a clock)."""
        if self.game_seconds is not None:
            return f"{self.game_seconds:g}s-game"
        return f"v{visits}" if self.move_seconds is None else f"{self.move_seconds:g}s"


def one_line(exc):
    """An error's text on one line, shortened (fastgo.files.escaped)."""
    return escaped(exc, 300, one_line=True)
