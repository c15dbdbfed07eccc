"""The maximum-likelihood Elo fit over the ratings table's rows (BayesElo-style), and CGOS's
9x9 scale placed on it. Stdlib and numpy only.

The model: P(i beats j) = 1 / (1 + 10 ** ((r_j - r_i) / 400)), ratings r in Elo; a draw counts
half a win and half a loss. The prior is BayesElo's in form: `prior_games` virtual draws between
every pair of players that met, so a perfect record still gives a finite rating. Its default
(PRIOR_GAMES) is a tenth of a game, not BayesElo's 2: against a one-sided pairing (20-0) the
virtual draws pull the two players together with a force that does not fade with their gap, and
along a chain of checkpoints that each win their references 20-0 the pulls add up, pinning every
checkpoint near the level one 20-0 score gives (two virtual draws held a chain of twelve
checkpoints 150 Elo apart to half its span; docs/learning.md).

A run's own checkpoints (players named as rundata.rundir.checkpoint_player names them) also get a
sequential prior, as KataGo's python/elo.py has one (make_sequential_prior): `sequence_games`
virtual draws between each checkpoint and the next one by step in the same group, whether they
met or not. It says that a few minutes of training rarely move a player far. Without it, the
evaluator's short first ratings decide the curve: a 4-0 against the previous checkpoint, which
the pairing rule stops as one-sided, weighs +763 Elo under the tenth of a game above (+273 with
two virtual draws); docs/learning.md, "The curve against direct matches", sets a run's curve
beside its direct matches with and without it. The anchor (default "random") is fixed at 0; players
not connected to it by games are rated in their own group, whose first player (by first
appearance in the table) is fixed at 0 (see `components`). The 95% intervals are
r +- 1.96 sqrt(diag(H^-1)), H the Hessian of the negative log-posterior over the free ratings
(the observed Fisher information).
"""
from __future__ import annotations

import math

import numpy as np

from rundata.ratings_table import RatingsTable, TableError
from rundata.rundir import kept_steps, player_step

__all__ = ["fit_ratings", "fit_window", "FIT_CHECKPOINTS", "gain_intervals", "GroupFit",
           "components", "pair_totals", "PRIOR_GAMES", "SEQUENCE_GAMES", "MAX_FIT_PLAYERS",
           "cgos_ratings", "cgos_text", "CGOS_STAND_IN", "CGOS_ANCHOR_ELO"]

Z95 = 1.959963984540054
_S = math.log(10.0) / 400.0   # logistic slope per Elo point


PRIOR_GAMES = 0.1             # virtual draws per pair of players that met (see the module)
SEQUENCE_GAMES = 2.0          # virtual draws between a run's consecutive checkpoints (the module)
MAX_FIT_PLAYERS = 2000        # players in one connected group: the fit's Hessian is n x n, its
                              # solve O(n**3) (2,000: 32 MB and about a second)
FIT_CHECKPOINTS = 400         # a run's newest checkpoints that a fit rates, all of them (about 33
                              # hours of an evaluator's points every 5 minutes); older ones
                              # only where rundata.rundir.kept_steps keeps them (fit_window)


def pair_totals(results):
    """(players in order of first appearance, {(i, j): [score_i, score_j]} with i < j): the
    summed scores of each pair over all rows (a draw adds half to each). Self-pairings carry no
    information and are left out (their player still appears)."""
    players, index, totals = [], {}, {}
    for row in results:
        ids = []
        for key in ("a", "b"):
            name = row[key]
            if name not in index:
                index[name] = len(players)
                players.append(name)
            ids.append(index[name])
        i, j = ids
        if i == j:
            continue
        half = 0.5 * row.get("draws", 0)
        score_i, score_j = row["wins_a"] + half, row["wins_b"] + half
        if i > j:
            i, j, score_i, score_j = j, i, score_j, score_i
        pair = totals.setdefault((i, j), [0.0, 0.0])
        pair[0] += score_i
        pair[1] += score_j
    return players, {k: v for k, v in totals.items() if v[0] + v[1] > 0}


def components(results, anchor="random"):
    """The groups of players connected by games, each a list of names with its fixed player
    first: the anchor for its group, else the group's first player in table order. The anchor's
    group (or the first group) comes first."""
    players, totals = pair_totals(results)
    parent = list(range(len(players)))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, j in totals:
        parent[find(i)] = find(j)
    groups = {}
    for k in range(len(players)):
        groups.setdefault(find(k), []).append(players[k])
    out = []
    for members in groups.values():
        if anchor in members:
            members.remove(anchor)
            out.insert(0, [anchor] + members)
        else:
            out.append(members)
    return out


def fit_window(results, newest=FIT_CHECKPOINTS):
    """(rows, left out): the rows of `results` that a fit takes, and how many of a run's
    checkpoints (rundata.rundir.player_step) it leaves out. Up to `newest` checkpoints, all
    rows. Past them, the newest `newest` checkpoints and the older ones kept_steps keeps (about
    one every 25% of training steps: the copies the evaluator keeps as opponents) stay, with
    every anchor, and the rows of the other checkpoints go: a week's run is fitted over a few
    hundred players, not thousands, and the fit's time and memory stop growing with the run's
    length. A left-out checkpoint has no rating; its games stay in the table."""
    step_of = {}
    for row in results:
        for key in ("a", "b"):
            name = row[key]
            if name not in step_of:
                step_of[name] = player_step(name)
    steps = sorted({s for s in step_of.values() if s is not None})
    if len(steps) <= newest:
        return results, 0
    keep = set(steps[len(steps) - newest:]) | kept_steps(steps)
    out = RatingsTable((row for row in results
                        if (step_of[row["a"]] is None or step_of[row["a"]] in keep)
                        and (step_of[row["b"]] is None or step_of[row["b"]] in keep)),
                       getattr(results, "skipped_lines", ()))
    out.note = getattr(results, "note", "")
    return out, len(steps) - len(keep)


def _sequence(names):
    """The local indices of `names`' run checkpoints (rundata.rundir.player_step) in order
    of step."""
    steps = sorted((step, k) for k, name in enumerate(names)
                   if (step := player_step(name)) is not None)
    return [k for _, k in steps]


def _fit_group(names, index, totals, prior_games, sequence_games, max_iter=100,
               covariance=False):
    """Newton's method on the log-posterior of one connected group; names[0] fixed at 0.
    Returns ratings [n] and standard errors [n] (Elo), and with `covariance` the covariance
    [n, n] of the ratings (row and column 0, the fixed player's, zero; inf where singular)."""
    n = len(names)
    local = {index[name]: k for k, name in enumerate(names)}
    pairs = []     # (k_i, k_j, score_i, score_j) with the priors' virtual draws added
    for (i, j), (si, sj) in totals.items():
        if i in local and j in local:
            half = 0.5 * prior_games
            pairs.append((local[i], local[j], si + half, sj + half))
    if sequence_games > 0:
        chain = _sequence(names)
        half = 0.5 * sequence_games
        pairs.extend((k, m, half, half) for k, m in zip(chain, chain[1:]))
    r = np.zeros(n)
    if n == 1:
        return (r, np.zeros(1), np.zeros((1, 1))) if covariance else (r, np.zeros(1))
    ki = np.array([p[0] for p in pairs])
    kj = np.array([p[1] for p in pairs])
    si = np.array([p[2] for p in pairs], dtype=float)
    sj = np.array([p[3] for p in pairs], dtype=float)
    games = si + sj

    def objective(r):
        # negative log-posterior: -sum s_i log p_ij + s_j log p_ji, p_ij = sigmoid(S (r_i - r_j))
        x = _S * (r[ki] - r[kj])
        return float(np.sum(si * np.logaddexp(0.0, -x) + sj * np.logaddexp(0.0, x)))

    def derivatives(r):
        x = _S * (r[ki] - r[kj])
        p = 0.5 * (1.0 + np.tanh(0.5 * x))          # sigmoid(x), overflow-free
        g_pair = -_S * (si - games * p)               # d objective / d r_i per pair
        h_pair = _S * _S * games * p * (1.0 - p)
        grad = np.zeros(n)
        np.add.at(grad, ki, g_pair)
        np.add.at(grad, kj, -g_pair)
        hess = np.zeros((n, n))
        np.add.at(hess, (ki, ki), h_pair)
        np.add.at(hess, (kj, kj), h_pair)
        np.add.at(hess, (ki, kj), -h_pair)
        np.add.at(hess, (kj, ki), -h_pair)
        return grad[1:], hess[1:, 1:]

    value = objective(r)
    for _ in range(max_iter):
        grad, hess = derivatives(r)
        try:
            step = np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(hess, grad, rcond=None)[0]
        t = 1.0
        while True:                  # backtracking: the objective never increases
            trial = r.copy()
            trial[1:] -= t * step
            trial_value = objective(trial)
            if trial_value <= value + 1e-12 or t < 1e-6:
                break
            t *= 0.5
        r, previous, value = trial, value, trial_value
        if np.max(np.abs(t * step)) < 1e-7 or abs(previous - value) < 1e-12:
            break
    _, hess = derivatives(r)
    full = np.zeros((n, n))
    try:
        cov = np.linalg.inv(hess)
        se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
        full[1:, 1:] = cov
    except np.linalg.LinAlgError:
        se = np.full(n - 1, np.inf)
        full[1:, 1:] = np.inf
    if covariance:
        return r, np.concatenate([[0.0], se]), full
    return r, np.concatenate([[0.0], se])


class GroupFit:
    """One fit of the players connected by games to `anchor` (anchor fixed at 0), with the
    covariance of their ratings: any difference between two of them gets its own 95% interval
    (the same, up to rounding, as a fit anchored at one of the two) without another fit."""

    def __init__(self, results, anchor="random", prior_games=PRIOR_GAMES,
                 sequence_games=SEQUENCE_GAMES):
        players, totals = pair_totals(results)
        self.names = components(results, anchor)[0] if players else []
        if len(self.names) > MAX_FIT_PLAYERS:
            raise TableError(f"{len(self.names)} players connected by games, over the "
                             f"{MAX_FIT_PLAYERS} one fit takes")
        index = {name: k for k, name in enumerate(players)}
        self.index = {name: k for k, name in enumerate(self.names)}
        if self.names:
            self.r, _, self.cov = _fit_group(self.names, index, totals,
                                             _prior(prior_games, "prior_games"), covariance=True,
                                             sequence_games=_prior(sequence_games, "sequence_games"))

    def __contains__(self, name):
        return name in self.index

    def difference(self, a, b):
        """(r_a - r_b, low95, high95) in Elo; KeyError when either is not in the group."""
        i, j = self.index[a], self.index[b]
        d = float(self.r[i] - self.r[j])
        var = self.cov[i, i] + self.cov[j, j] - 2.0 * self.cov[i, j]
        half = Z95 * math.sqrt(max(0.0, var)) if math.isfinite(var) else math.inf
        return d, d - half, d + half


def _prior(value, what):
    """A prior's count of virtual games as a float; ValueError unless finite and >= 0."""
    value = float(value)
    if not value >= 0.0 or math.isinf(value):
        raise ValueError(f"{what} must be a finite number >= 0, got {value!r}")
    return value


def fit_ratings(results, anchor="random", prior_games=PRIOR_GAMES,
                sequence_games=SEQUENCE_GAMES) -> dict:
    """{name: (elo, low95, high95)} for every player in `results` (rows as read_table gives;
    a row needs a, b, wins_a, wins_b and may leave out draws).

    Maximum a posteriori Elo under the logistic model with `prior_games` virtual draws between
    each pair of players that met (BayesElo's form of prior, weak by default; 0 gives the plain
    MLE, infinite for a perfect record), and `sequence_games` between a run's consecutive
    checkpoints (the module; 0: none). The anchor is fixed at (0, 0, 0); when it is absent from the table the
    first player is. Groups not connected to the anchor by games are fixed at their own first
    player (see `components`). Intervals: +-1.96 standard errors from the inverse Hessian.
    TableError when a group holds more than MAX_FIT_PLAYERS players."""
    prior_games = _prior(prior_games, "prior_games")
    sequence_games = _prior(sequence_games, "sequence_games")
    players, totals = pair_totals(results)
    index = {name: k for k, name in enumerate(players)}
    groups = components(results, anchor)
    largest = max((len(g) for g in groups), default=0)
    if largest > MAX_FIT_PLAYERS:
        raise TableError(f"{largest} players connected by games, over the {MAX_FIT_PLAYERS} "
                         f"one fit takes")
    out = {}
    for names in groups:
        r, se = _fit_group(names, index, totals, prior_games, sequence_games)
        for name, rating, error in zip(names, r, se):
            rating = float(rating)
            out[name] = (rating, rating - Z95 * float(error), rating + Z95 * float(error))
    return out


def gain_intervals(results, players, prior_games=PRIOR_GAMES,
                   sequence_games=SEQUENCE_GAMES) -> dict:
    """{player: (low, high)}: for each of `players` after the first, the 95% interval of its
    Elo minus the Elo of the player before it in the list, from a fit anchored at that one
    (the pair's covariance included: far narrower than the two players' intervals against a
    distant anchor when the chain to it runs through one-sided results). A player not in the
    same connected group as the one before it is left out."""
    group_of = {name: k for k, group in enumerate(components(results)) for name in group}
    out = {}
    for before, player in zip(players, players[1:]):
        if before == player or before not in group_of or group_of.get(player) != group_of[before]:
            continue
        fit = fit_ratings(results, anchor=before, prior_games=prior_games,
                          sequence_games=sequence_games)
        if player in fit:
            out[player] = (fit[player][1], fit[player][2])
    return out


# CGOS's 9x9 scale: what a Go player can place.

CGOS_ANCHOR_ELO = 1800.0      # CGOS's anchor, GNU Go 3.7.10 at its default level (10)
CGOS_STAND_IN = "gnugo:10"    # GNU Go 3.8 at its default level with CGOS's options stands in
                              # for it here (docs/guide.md#strength-on-cgoss-scale)


def cgos_ratings(results, stand_in=CGOS_STAND_IN, prior_games=PRIOR_GAMES, fit=None,
                 sequence_games=SEQUENCE_GAMES) -> dict:
    """{name: (elo, low95, high95)} on CGOS's 9x9 scale for every player connected by games to
    `stand_in`: each player's difference to the stand-in with its own interval (not the chain
    to `random`), plus CGOS_ANCHOR_ELO. `fit`: a GroupFit of these results already made (any
    anchor; the stand-in's players outside it are left out), else one anchored at the
    stand-in. {} when `stand_in` has played no game. This is the one place that puts a rating
    on CGOS's scale; Elo over `random` stays fit_ratings(results)."""
    if fit is None:
        players, _ = pair_totals(results)
        if stand_in not in players:
            return {}
        fit = GroupFit(results, anchor=stand_in, prior_games=prior_games,
                       sequence_games=sequence_games)
    if stand_in not in fit:
        return {}
    return {name: tuple(CGOS_ANCHOR_ELO + v for v in fit.difference(name, stand_in))
            for name in fit.names}


def cgos_text(rating) -> str:
    """'CGOS 1650 (1580..1720)' for an (elo, low, high) on CGOS's scale; 'CGOS -' for None.
    An interval bound beyond +-10,000 (a one-sided record) is shown as '?'."""
    if not rating:
        return "CGOS -"

    def shown(value):
        return f"{value:.0f}" if math.isfinite(value) and abs(value) < 10_000 else "?"
    return f"CGOS {shown(rating[0])} ({shown(rating[1])}..{shown(rating[2])})"
