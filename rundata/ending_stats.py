"""Statistics of how the most recent self-play games ended: the share that ended by two passes,
at the move cap, by resignation, and the median final margin of those that ended on the board.
The trainer keeps one over the games it takes in and puts its summary on its status (the status
line and the dashboard read it there). Whether a position is decided is another question, the
kernel's (fastgo/ending.pyx)."""
from __future__ import annotations

from collections import deque

import numpy as np

from rundata.records import ENDS

RECENT_GAMES = 1000           # games the shares and the median are taken over


class EndingStats:
    """The last `recent` games' (end, final margin): end one of rundata.records.ENDS, margin
    the final Tromp-Taylor margin in points (Black's view; ignored after a resignation)."""

    def __init__(self, recent: int = RECENT_GAMES):
        if not 1 <= recent <= 1_000_000:
            raise ValueError(f"recent must be 1..1000000 games, got {recent!r}")
        self._games: deque[tuple[str, float]] = deque(maxlen=recent)

    def add(self, end: str, score: float) -> None:
        if end not in ENDS:
            raise ValueError(f"end must be one of {list(ENDS)}, got {end!r}")
        self._games.append((end, float(score)))

    def add_games(self, games) -> None:
        """GameRecords (rundata.records), oldest first."""
        for game in games:
            self.add(game.end, game.score)

    def summary(self) -> dict:
        """{"games": n, "passes": share, "move_cap": share, "resign": share, "median_margin":
        points or None}: shares in [0, 1] of the last n games (0 each when n is 0); the median
        of |margin| over the games that ended on the board (passes or the move cap)."""
        n = len(self._games)
        out: dict[str, float | None] = {"games": n}
        for end in ("passes", "move_cap", "resign"):
            out[end] = round(sum(1 for e, _ in self._games if e == end) / n, 4) if n else 0.0
        margins = [abs(s) for e, s in self._games if e in ("passes", "move_cap")]
        out["median_margin"] = round(float(np.median(margins)), 2) if margins else None
        return out
