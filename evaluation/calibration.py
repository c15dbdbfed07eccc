"""The ladder's calibration (`fastgo ladder`, `fastgo ladder calibrate`): each rung's place on
CGOS's 9x9 scale from the calibration table alone (rundata.calibration_table), the links of
its chain (neighbouring rungs by that fit, with the games behind each), and the games that make
the least certain link more certain, played and added one finished game at a time.

A link is two rungs next to each other in the fitted order among the players that can run here
(GNU Go's levels where it is installed, KataGo's rungs where it is found, the reference players
of the folder in use, random and mcts:N everywhere). calibrate picks the link with the fewest
games (the widest Elo interval among equals) under its target, plays one batch of it with the
colours alternating, and looks again. Only rungs the table rates are linked; a rung of one's
own with no games yet (`only`) is first played against the rung in the middle of the ladder,
then placed by the fit like any other.
"""
from __future__ import annotations

import os
import secrets
import time
from dataclasses import dataclass

from fastgo.player_spec import parse_spec
from rundata.calibration_table import add_rows, read_calibration
from rundata.elo_fit import CGOS_STAND_IN, cgos_ratings, fit_ratings, pair_totals
from rundata.match_stats import elo_from_score, wilson_interval

TARGET_GAMES = 100            # games a link of the chain is calibrated with
BATCH_GAMES = 8               # games of one link played at once (colours alternating)
SIZE, KOMI = 9, 7.5           # what every calibration game is played at (the arena's default)


@dataclass(frozen=True)
class Link:
    """Two neighbouring rungs, `low` the weaker by the fit, and their direct games: the low
    one's wins, the high one's, draws."""
    low: str
    high: str
    wins_low: int = 0
    wins_high: int = 0
    draws: int = 0

    @property
    def games(self) -> int:
        return self.wins_low + self.wins_high + self.draws

    @property
    def score(self) -> float | None:
        """The low rung's score (draws half), None without games."""
        return (self.wins_low + 0.5 * self.draws) / self.games if self.games else None

    def elo(self) -> tuple | None:
        """(high over low in Elo, low95, high95) from the direct games alone (a one-sided record
        gives an infinite bound), None without games."""
        score = self.score
        if score is None:
            return None
        low, high = wilson_interval(self.wins_low + 0.5 * self.draws, self.games)
        return (-elo_from_score(score), -elo_from_score(high), -elo_from_score(low))

    def width(self) -> float:
        """Width in Elo of the direct games' 95% interval (inf without games)."""
        elo = self.elo()
        return float("inf") if elo is None else elo[2] - elo[1]


def direct_games(rows) -> dict:
    """{(a, b): (wins_a, wins_b, draws)} summed over `rows` in both orders (a < b by name)."""
    out: dict = {}
    for row in rows:
        a, b, wins_a, wins_b = row["a"], row["b"], row["wins_a"], row["wins_b"]
        if a == b:
            continue
        if b < a:
            a, b, wins_a, wins_b = b, a, wins_b, wins_a
        total = out.setdefault((a, b), [0, 0, 0])
        total[0] += wins_a
        total[1] += wins_b
        total[2] += row.get("draws", 0)
    return {pair: tuple(v) for pair, v in out.items()}


def link(low, high, games) -> Link:
    """The Link of `low` and `high` with their direct games from direct_games' `games`."""
    if low < high:
        wins_low, wins_high, draws = games.get((low, high), (0, 0, 0))
    else:
        wins_high, wins_low, draws = games.get((high, low), (0, 0, 0))
    return Link(low, high, wins_low, wins_high, draws)


def ratings(rows) -> dict:
    """{name: (elo, low95, high95)} of the table's players: on CGOS's scale where the stand-in
    is in the table (and the player connected to it), else Elo over the table's first player."""
    if not rows:
        return {}
    players, _ = pair_totals(rows)
    if CGOS_STAND_IN in players:
        return cgos_ratings(rows)
    return fit_ratings(rows, anchor=players[0])


@dataclass
class LadderView:
    """The ladder as the table places it: `order`, rated rungs weakest first with their
    (elo, low, high); `links`, the neighbouring pairs of `order` with their direct games;
    `unrated`, the players asked for that the table does not rate."""
    order: list
    links: list
    unrated: list


def ladder_view(rows, players=None) -> LadderView:
    """The ladder of the table `rows` among `players` (None: every player of the table)."""
    rated = ratings(rows)
    names = list(rated) if players is None else [p for p in players if p in rated]
    order = sorted(((name, rated[name]) for name in names), key=lambda item: (item[1][0], item[0]))
    games = direct_games(rows)
    links = [link(low, high, games) for (low, _), (high, _) in zip(order, order[1:])]
    unrated = [] if players is None else [p for p in players if p not in rated]
    return LadderView(order, links, unrated)


FAR_GAMES = 16                # games after which a one-sided link is taken as too far apart
FAR_SCORE = (0.15, 0.85)      # the scores beyond which its games say little more


def too_far(step: Link) -> bool:
    """Whether a link's rungs are measured as too far apart for its games to say more than
    "stronger": FAR_GAMES games or more, the lower scoring outside FAR_SCORE. Such a link
    wants a rung between its two, not more games (`fastgo ladder` marks it)."""
    score = step.score          # None only without games
    return (step.games >= FAR_GAMES and score is not None
            and not FAR_SCORE[0] <= score <= FAR_SCORE[1])


def next_link(rows, players, target=TARGET_GAMES, only=None, near=None) -> Link | None:
    """The link to play next among `players` (see the module), or None when every link has
    `target` games. `only`: just the links of that rung (a rung of one's own); while it has no
    rating it plays `near` (a rated rung it is thought to be close to), else the middle of the
    ladder."""
    view = ladder_view(rows, players)
    if only is not None and only in view.unrated and view.order:
        rated = [name for name, _ in view.order]
        start = near if near in rated else rated[len(rated) // 2]
        return link(only, start, direct_games(rows))
    candidates = [k for k in view.links if only is None or only in (k.low, k.high)]
    candidates = [k for k in candidates if k.games < target and not too_far(k)]
    if not candidates:
        return None
    return min(candidates, key=lambda k: (k.games, -k.width(), k.low))


def available(players, missing) -> tuple[list, dict]:
    """(the players of `players` that can run here, {player: why not} for the others);
    `missing(spec)`: play.specs.missing (None when it runs)."""
    ok, gone = [], {}
    for name in players:
        why = missing(parse_spec(name))
        if why is None:
            ok.append(name)
        else:
            gone[name] = why.what + (f" (add it: {why.command})" if why.command else
                                     f": {why.why}")
    return ok, gone


def ladder_players(rows, ladder, index_names) -> list:
    """Every rung there is: the ladder's names, the reference players of the index in use
    (ref:NAME) and the table's players, each once, in that order."""
    out: list = []
    for name in list(ladder) + [f"ref:{n}" for n in index_names] + \
            [name for row in rows for name in (row["a"], row["b"])]:
        if name not in out:
            out.append(name)
    return out


class Calibration:
    """Plays the least certain links for `minutes` into the table at `path` (see the module).
    `read()`: the games the choice weighs (default: the table's own); `players`: the rungs
    that can run here; `make_side(name, seed)`: a match side (play.specs.make_spec_side);
    `play(a, b, games, offset, on_over, stop)`: play.match.play_match with those arguments;
    `say(line)`: progress; `clock`: seconds, monotonic."""

    def __init__(self, path, players, make_side, play, say, *, target=TARGET_GAMES,
                 batch=BATCH_GAMES, only=None, near=None, seed=None, clock=time.monotonic,
                 read=None) -> None:
        self.path, self.players, self.make_side, self.play = os.fspath(path), players, make_side, play
        # the games the choice of link weighs: the table's, or more (read())
        self.read = read or (lambda: read_calibration(self.path))
        self.say, self.target, self.batch, self.only, self.clock = say, target, batch, only, clock
        self.near = near
        self.seed = secrets.randbits(48) if seed is None else seed
        self.sides: dict = {}
        self.added = 0

    def side(self, name):
        if name not in self.sides:
            self.sides[name] = self.make_side(name, self.seed + len(self.sides))
        return self.sides[name]

    def close(self):
        for side in self.sides.values():
            close = getattr(side, "close", None)
            if close is not None:
                close()
        self.sides.clear()

    def run(self, minutes) -> str:
        """Plays until `minutes` have passed (games unfinished then are dropped) or every
        link has its target; returns why it ended. Each finished game is in the table before
        the next move is played."""
        deadline = self.clock() + 60.0 * minutes
        while self.clock() < deadline:
            chosen = next_link(self.read(), self.players, self.target, self.only, self.near)
            if chosen is None:
                return f"every link has {self.target} games or more"
            self._batch(chosen, deadline)
        return f"{minutes:g} minutes played"

    def _batch(self, chosen: Link, deadline):
        a, b = chosen.low, chosen.high
        offset = chosen.games
        side_a, side_b = self.side(a), self.side(b)
        seed = self.seed

        def on_over(number, a_black, score_a):
            row = {"a": a, "b": b, "wins_a": int(score_a == 1), "wins_b": int(score_a == 0),
                   "draws": int(score_a == 0.5), "source": "ladder calibrate", "size": SIZE, "komi": KOMI,
                   "game": int(number), "a_black": bool(a_black), "seed": seed}
            add_rows(self.path, [row])
            self.added += 1

        self.say(f"{a} vs {b}: {chosen.wins_low}-{chosen.wins_high}-{chosen.draws} so far; "
                 f"{self.batch} more")
        result = self.play(side_a, side_b, self.batch, offset, on_over,
                           lambda: self.clock() >= deadline)
        per_move = [seconds / moves if moves else 0.0 for seconds, moves in
                    ((result.seconds_a, result.moves_a), (result.seconds_b, result.moves_b))]
        self.say(f"  {a} {result.wins_a}, {b} {result.wins_b}"
                 + (f", draws {result.draws}" if result.draws else "")
                 + f"; {per_move[0]:.3f} / {per_move[1]:.3f} s a move"
                 + (f"; {self.batch - result.games} unfinished at the time limit, dropped"
                    if result.games < self.batch else ""))


def format_view(view: LadderView, skipped=None, damaged=0, rated=None) -> list:
    """`fastgo ladder`'s lines: each rung with its rating and interval, each link with its
    games, score and Elo step; the rungs not rated and those that cannot run here (`skipped`:
    {rung: why}, with their ratings from `rated` where it has them)."""
    lines = []
    width = max([len(name) for name, _ in view.order] + [4])
    lines.append(f"{'rung':<{width}}  {'CGOS':>5}  {'95% interval':>13}  {'link to the next':>16}"
                 f"  {'games':>5}  {'score':>5}  {'Elo step (95%)':>20}")
    for k, (name, (elo, low, high)) in enumerate(view.order):
        line = f"{name:<{width}}  {elo:5.0f}  {_span(low, high):>13}"
        if k < len(view.links):
            step = view.links[k]
            elo_step = step.elo()
            shown = "-" if elo_step is None else f"{elo_step[0]:+.0f} ({_span(*elo_step[1:])})"
            score = "-" if step.score is None else f"{step.score:.2f}"
            record = f"{step.wins_low}-{step.wins_high}-{step.draws}"
            line += f"  {record:>16}  {step.games:5d}  {score:>5}  {shown:>20}"
            if too_far(step):
                line += "  too far apart: a rung between wanted"
        lines.append(line)
    for name in view.unrated:
        lines.append(f"{name:<{width}}  not rated: no calibration games yet")
    groups: dict = {}
    for name, why in (skipped or {}).items():
        groups.setdefault(why, []).append(name)
    for why, names in groups.items():
        lines.append(f"not played here (no {why}):")
        for name in names:
            elo, low, high = (rated or {}).get(name, (None, None, None))
            lines.append(f"{name:<{width}}  " + (f"{elo:5.0f}  {_span(low, high):>13}"
                                                  if elo is not None else "not rated"))
    if damaged:
        lines.append(f"({damaged} damaged lines of the table skipped)")
    return lines


def _span(low, high) -> str:
    def shown(value):
        return f"{value:.0f}" if abs(value) < 10_000 else "?"
    return f"{shown(low)}..{shown(high)}"
