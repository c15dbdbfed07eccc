"""Every player's strength from a ratings table: its Elo over the anchor (`random` = 0) and its
rating on CGOS's 9x9 scale, each with a 95% interval, and the gain of one player over another.
The evaluator's ratings.json, the status line, curve.png, `fastgo ratings` and the dashboard all
take their numbers from a Strength, so they show the same number for the same table.

One fit (rundata.elo_fit.GroupFit, with the covariance of the ratings) gives the anchor's
group: the Elo of each player, its rating on CGOS's scale when the stand-in of CGOS's anchor is
in that group, and every gain interval. Players not connected to the anchor by games are fitted
in their own groups (rundata.elo_fit.fit_ratings, relative to each group's first player).
"""
from __future__ import annotations

import os

from rundata.elo_fit import (
    CGOS_STAND_IN,
    PRIOR_GAMES,
    SEQUENCE_GAMES,
    GroupFit,
    cgos_ratings,
    components,
    fit_ratings,
    fit_window,
)
from rundata.ladder import with_calibration
from rundata.ratings_table import RatingsTable, TableError, read_table

__all__ = ["Strength", "strength_of", "read_strength"]

MAX_CACHED = 16               # tables whose Strength read_strength keeps


class Strength:
    """The strength of every player of `rows` (a table as read_table gives it), with the
    ladder's calibration games (rundata.ladder) where `rows` has a calibrated rung.

    elo:    {name: (elo, low95, high95)}, anchor = 0 (its group's first player for the others)
    cgos:   {name: (elo, low95, high95)} on CGOS's 9x9 scale, players connected to CGOS_STAND_IN
    groups: the players connected by games, the anchor's group first (rundata.elo_fit.components)
    error:  '' or why nothing was fitted (a TableError: a group over MAX_FIT_PLAYERS); then elo
            and cgos are empty while rows stay readable.
    rows:   the rows fitted: a long run's oldest checkpoints left out (rundata.elo_fit.fit_window)
    left_out: how many of a run's checkpoints that leaves out (rated none)."""

    def __init__(self, rows, anchor="random", prior_games=PRIOR_GAMES,
                 sequence_games=SEQUENCE_GAMES, stand_in=CGOS_STAND_IN):
        rows, self.left_out = fit_window(with_calibration(rows))
        self.rows, self.anchor = rows, anchor
        self._priors = {"prior_games": prior_games, "sequence_games": sequence_games}
        self.elo, self.cgos, self.error, self._fit = {}, {}, "", None
        self.groups = components(rows, anchor)
        self._group = {name: k for k, names in enumerate(self.groups) for name in names}
        try:
            fit = GroupFit(rows, anchor=anchor, **self._priors)
            self.elo = {name: fit.difference(name, fit.names[0]) for name in fit.names}
            if len(self.groups) > 1:          # the other groups, each its own fit
                self.elo = dict(fit_ratings(rows, anchor=anchor, **self._priors), **self.elo)
            self.cgos = cgos_ratings(rows, stand_in=stand_in, fit=fit) if stand_in in fit \
                else cgos_ratings(rows, stand_in=stand_in, **self._priors)
            self._fit = fit
        except TableError as err:
            self.elo, self.cgos, self.error = {}, {}, str(err)

    def connected(self, a, b) -> bool:
        """True when `a` and `b` are both rated and connected by games (one group)."""
        return a in self.elo and b in self.elo and self._group.get(a) == self._group.get(b)

    def gain(self, player, before):
        """(low95, high95) of `player`'s Elo minus `before`'s, the pair's covariance included
        (far narrower than their two intervals against a distant anchor); None when they are
        the same player or not connected."""
        if player == before or not self.connected(player, before):
            return None
        if self._fit is not None and player in self._fit and before in self._fit:
            return self._fit.difference(player, before)[1:]
        refit = fit_ratings(self.rows, anchor=before, **self._priors)
        return refit[player][1:] if player in refit else None


def strength_of(rows, **options) -> Strength:
    """The Strength of a table's rows; `options`: anchor, prior_games, sequence_games, stand_in
    (Strength's)."""
    return Strength(rows, **options)


_CACHE: dict = {}             # path -> ((mtime_ns, size), Strength)


def read_strength(path) -> Strength:
    """The Strength of the ratings table at `path` with the default options (anchor random),
    read and fitted again only when the file changed (mtime and size); a missing or unreadable
    file is an empty table."""
    path = os.fspath(path)
    try:
        st = os.stat(path)
        key = (st.st_mtime_ns, st.st_size)
    except OSError:
        key = None
    cached = _CACHE.get(path)
    if cached is not None and key is not None and cached[0] == key:
        return cached[1]
    try:
        rows = read_table(path)
    except (OSError, ValueError):
        rows = RatingsTable()
    value = Strength(rows)
    if key is not None:
        if len(_CACHE) >= MAX_CACHED:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[path] = (key, value)
    return value
