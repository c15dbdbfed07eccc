"""Matches between two players, many games at once. A side is a play.players.MatchSide (a
SearchSide: an evaluator behind the batched search, all of its games to move searched together,
one batch per simulation step; a GtpSide), which gets all of its games to move at once, or a
play.players.Player (random, pure MCTS), asked one game at a time. A side may answer
Forfeit(reason) instead of a move (a GTP engine that crashed, timed out, answered garbage or an
illegal move): it loses that game, the reason goes to MatchResult.forfeits and the other games go
on. Colors alternate: A is Black in even games (counted from `game_offset`). Never imports torch
(evaluators come from the caller).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from fastgo.board import BLACK
from fastgo.game import RESIGN, Game
from fastgo.mcts import BatchedSearch
from fastgo.move_choice import choose_move
from fastgo.search_settings import SearchSettings
from fastgo.variants import PassRule, Search, check_pass_rule
from play.deferred_signals import hold
from play.equal_time import GameClock, empty_points, main_time_budget, visits_for, visits_grid
from play.players import MatchSide, Player
from rundata.match_stats import elo_from_score, wilson_interval


class Forfeit:
    """A side's answer instead of a move: it loses the game, for `reason` (one line)."""
    __slots__ = ("reason",)

    def __init__(self, reason):
        self.reason = str(reason)

    def __repr__(self):
        return f"Forfeit({self.reason!r})"


class SearchSide(MatchSide):
    """An evaluator with `visits` root visits per move under `settings` (a SearchSettings; None:
    SearchSettings.for_play(), no noise, AlphaZero planes), the most visited move (the first
    `opening_moves` moves of a game sampled by visit count, for variety). With settings.search
    'gumbel': Gumbel root search, the move its sequential halving picks; the opening moves get the
    Gumbel noise (gumbel_scale), later moves none. pass_rule (a PassRule or its name;
    fastgo.move_choice, with the winning pass): 'fill' (default) no pass while a legal point
    outside the own eyes is left, except one that ends a won game; 'free' the search's own
    choice.

    rate: its root visits a second on one thread (play.equal_time.one_thread_rate), which a
    game clock needs: each move then gets the visits its main_time_budget buys at that rate
    (rounded down to a grid of eight steps an octave, so games of equal visits search together),
    and its clock is charged their seconds at that rate.

    shape: what that speed depends on besides the search (play.network_player: the network's
    name, board size, encoding and backend); None for an evaluator that is no network.

    fixed_visits: a player defined by its visits (a reference player, ref:NAME): equal-time
    modes neither retime nor pace it."""

    def __init__(self, evaluator, visits, settings=None, *, name="net", opening_moves=0, seed=0,
                 pass_rule=PassRule.FILL, board_size=None, rate=None, shape=None,
                 fixed_visits=False):
        self.pass_rule = check_pass_rule(pass_rule)
        self.fixed_visits = bool(fixed_visits)   # equal-time modes leave its visits alone
        self.evaluator = evaluator
        self.shape = shape
        self.visits = int(visits)
        self.rate = None
        if rate is not None:
            self.set_speed(rate)
        self.name = name
        self.opening_moves = int(opening_moves)
        self.seed = seed
        self.settings = SearchSettings.for_play() if settings is None else settings
        self.board_size = board_size      # the one size a network plays (None: any)
        self.search = None
        self.prepared = 0              # chunks prepared: each gets its own random stream

    def set_speed(self, rate):
        """Its root visits a second on one thread (play.equal_time.one_thread_rate): what a
        game clock turns into visits."""
        if not 0 < float(rate) < float("inf"):
            raise ValueError(f"{self.name}: visits a second must be > 0, got {rate!r}")
        self.rate = float(rate)

    def prepare(self, games, size, komi):
        # A fresh stream per chunk: the same seed again would replay the same openings, so a
        # match of many chunks between two networks would repeat its first chunk's games.
        if self.game_clock is not None and self.rate is None:
            raise ValueError(f"{self.name}: a game clock needs the side's visits a second "
                             "(rate, play.equal_time.one_thread_rate)")
        seed = (int(self.seed) + self.prepared * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        self.prepared += 1
        self.search = BatchedSearch(games=games, size=size, komi=komi, settings=self.settings,
                                    seed=seed)

    def _clock_visits(self, g, game):
        """Root visits for the move of game `g` by the game clock: what its main_time_budget
        buys at `rate`, rounded down to visits_grid."""
        seconds = main_time_budget(self.game_clock.left(g, game.to_move),
                                   empty_points(game.board))
        return visits_grid(visits_for(seconds, self.rate))

    def moves(self, indices, games):
        search = self.search
        for g in indices:
            search.set_position(g, games[g])
        gumbel = search.settings.search == Search.GUMBEL
        visits, groups = [], {}
        for g in indices:
            game = games[g]
            v = self.visits if self.game_clock is None else self._clock_visits(g, game)
            visits.append(v)
            # Gumbel noise is the variety of the opening moves; later moves have none.
            opening = gumbel and len(game.moves) < self.opening_moves
            groups.setdefault((not opening, v), []).append(g)
        for (later, v), group in sorted(groups.items()):
            if gumbel:
                search.run(self.evaluator, v, games=group,
                           gumbel_scale=0.0 if later else search.settings.gumbel.scale)
            else:
                search.run(self.evaluator, v, games=group)
        self.last_visits = visits
        self.last_seconds = None if self.game_clock is None else [v / self.rate for v in visits]
        out = []
        for g in indices:
            temperature = 1.0 if len(games[g].moves) < self.opening_moves else 0.0
            out.append(choose_move(search, g, games[g], pass_rule=self.pass_rule,
                                   winning_pass=True, temperature=temperature, resign=False))
        return out


@dataclass
class MatchResult:
    name_a: str
    name_b: str
    games: int = 0
    wins_a: int = 0
    wins_b: int = 0
    draws: int = 0
    wins_a_black: int = 0        # A's wins with Black
    wins_a_white: int = 0
    games_a_black: int = 0
    wins_b_black: int = 0        # B's wins with Black (games where A is White)
    wins_b_white: int = 0
    records: list = field(default_factory=list)     # finished Game objects
    # one dict per game lost by forfeit: {"game", "player", "color" ('B'/'W'), "move" (number of
    # the move it failed to give, from 1), "reason"}; "game" counts from the match's first game
    forfeits: list = field(default_factory=list)
    a_black: list = field(default_factory=list)     # per game: A played Black
    numbers: list = field(default_factory=list)     # per game: its number, from the match's first
    # each side's moves, the wall seconds its calls took for them (a side that moves many games
    # in one call, as a batched search does, shares the call's time among them) and the root
    # visits of those moves (sides with a `visits` budget; 0 for the others)
    moves_a: int = 0
    seconds_a: float = 0.0
    visits_a: int = 0
    moves_b: int = 0
    seconds_b: float = 0.0
    visits_b: int = 0
    # under a game clock: the seconds charged to each side's clocks in all
    clock_a: float = 0.0
    clock_b: float = 0.0

    def add(self, other: MatchResult) -> MatchResult:
        """Adds the games of `other` (a later chunk of the same pairing) to this result."""
        for name in ("games", "wins_a", "wins_b", "draws", "wins_a_black", "wins_a_white",
                     "games_a_black", "wins_b_black", "wins_b_white", "moves_a", "seconds_a",
                     "visits_a", "moves_b", "seconds_b", "visits_b", "clock_a", "clock_b"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.records.extend(other.records)
        self.forfeits.extend(other.forfeits)
        self.a_black.extend(other.a_black)
        self.numbers.extend(other.numbers)
        return self

    @property
    def score_a(self) -> float:
        """A's score: wins + half the draws, over games."""
        return (self.wins_a + 0.5 * self.draws) / max(1, self.games)

    def wilson(self, z: float = 1.96):
        """95% Wilson interval of A's win rate (draws count half)."""
        return wilson_interval(self.wins_a + 0.5 * self.draws, self.games, z)

    def elo(self):
        """A's Elo difference from its score, with the interval from the Wilson bounds."""
        low, high = self.wilson()
        return elo_from_score(self.score_a), elo_from_score(low), elo_from_score(high)

    def per_move(self, which: str):
        """(mean seconds, mean root visits or None) per move of side 'a' or 'b'; (None, None)
        before it has moved."""
        moves, seconds, visits = (getattr(self, f"{key}_{which}")
                                  for key in ("moves", "seconds", "visits"))
        if moves <= 0:
            return None, None
        return seconds / moves, (visits / moves if visits else None)

    def clock_per_move(self, which: str):
        """Mean seconds a move of side 'a' or 'b' was charged to its game clock; None without
        a game clock or before it has moved."""
        moves, charged = getattr(self, f"moves_{which}"), getattr(self, f"clock_{which}")
        return charged / moves if moves > 0 and charged > 0 else None


class MatchInterrupted(KeyboardInterrupt):
    """The KeyboardInterrupt play_match lets go on up: the interrupt's own args and traceback,
    and `match_result`, the MatchResult of the games already over when it came."""

    def __init__(self, match_result: MatchResult, *args: object):
        super().__init__(*args)
        self.match_result = match_result

    def __reduce__(self):
        return type(self), (self.match_result, *self.args), self.__dict__


def play_match(a, b, games, *, size=9, komi=7.5, keep_records=False, game_offset=0,
               stop=None, clock=time.monotonic, game_seconds=None, signals=None,
               on_over=None) -> MatchResult:
    """Plays `games` games between sides a and b all at once; A is Black in the games whose
    number game_offset + g is even (so chunks of one match keep alternating colors).
    `stop`: a callable asked before each round of moves; once it returns True the match ends
    there and only the games already over are counted (a stopping role's bound on shutdown
    is one round of moves, not a whole batch of games). `clock`: seconds, monotonic, what each
    side's time per move is measured with (MatchResult.per_move). `game_seconds`: a game clock
    (play.equal_time.GameClock, sudden death): each side's moves of a game are charged to it
    (what the side says it spent, else its wall time) and a side past its time by more than
    the clock's margin loses that game on time (a forfeit). A KeyboardInterrupt (Ctrl-C, or the
    arena's SIGTERM) goes on up as a MatchInterrupted, the games already over counted in its
    `match_result` (a MatchResult, as `stop` would have given), so an interrupted match keeps
    its finished games. `signals`: the caller's play.deferred_signals.Interrupts, held from the
    end of the last round on (the caller releases it once the batch is counted): a signal after
    the last move is either the KeyboardInterrupt above or held, so the batch reaches the caller
    whole whatever its moment. `on_over(number, a_black, score_a)`: called once for each game as
    soon as it is over (its number from game_offset, whether A played Black, A's score: 1, 0 or
    0.5 for a draw), so a caller can keep each finished game before the batch ends."""
    for side in (a, b):
        if not isinstance(side, (MatchSide, Player)):
            raise TypeError(f"a match side is a play.players.MatchSide or Player, not "
                            f"{type(side).__name__}")
    result = MatchResult(a.name, b.name)
    boards = [Game(size, komi) for _ in range(games)]
    game_clock = None if game_seconds is None else GameClock(game_seconds, games)
    for side in (a, b):
        if isinstance(side, MatchSide):
            side.use_clock(game_clock)
            side.prepare(games, size, komi)
        else:
            side.reset()
    a_black = [(game_offset + g) % 2 == 0 for g in range(games)]
    try:
        _play_rounds(a, b, boards, a_black, result, game_clock, game_offset, stop, clock,
                     on_over)
        hold(signals)           # the games are over: from here the batch is handed back whole
    except KeyboardInterrupt as interrupt:
        tally = _tally(result, boards, a_black, keep_records, game_offset)
        raise MatchInterrupted(tally, *interrupt.args).with_traceback(
            interrupt.__traceback__) from None
    return _tally(result, boards, a_black, keep_records, game_offset)


def _play_rounds(a, b, boards, a_black, result, game_clock, game_offset, stop, clock,
                 on_over=None):
    """play_match's rounds of moves, A's then B's in each, until every game is over or `stop`;
    on_over as play_match's, for each game once it is over."""
    games = len(boards)
    reported = set()
    while True:
        live = [g for g in range(games) if not boards[g].is_over()]
        if on_over is not None and len(reported) + len(live) < games:
            for g in sorted(set(range(games)).difference(live, reported)):
                reported.add(g)
                winner = boards[g].winner
                on_over(game_offset + g, a_black[g], 0.5 if winner is None
                        else float((winner == BLACK) == a_black[g]))
        if not live or (stop is not None and stop()):
            break
        for side, is_a in ((a, True), (b, False)):
            turn = [g for g in live if not boards[g].is_over()
                    and (boards[g].to_move == BLACK) == (a_black[g] == is_a)]
            if not turn:
                continue
            began = clock()
            spent = visits = None
            if isinstance(side, MatchSide):
                chosen = side.moves(turn, boards)
                spent, visits = side.last_seconds, side.last_visits
            else:
                chosen, spent = [], []
                for g in turn:
                    if not boards[g].moves:
                        side.reset()
                    move_began = clock()
                    chosen.append(side.genmove(boards[g]))
                    spent.append(clock() - move_began)
            wall = clock() - began
            key = "a" if is_a else "b"
            budget = side.visits
            if visits is None and isinstance(budget, int) and not isinstance(budget, bool):
                visits = [budget] * len(turn)
            _count(result, key, len(turn), wall, None if visits is None else sum(visits))
            if game_clock is not None:
                if spent is None or len(spent) != len(turn):
                    spent = [wall / len(turn)] * len(turn)
                for g, seconds in zip(turn, spent):
                    game_clock.charge(g, boards[g].to_move, seconds)
                setattr(result, f"clock_{key}", getattr(result, f"clock_{key}")
                        + sum(max(0.0, float(x)) for x in spent))
            for g, move in zip(turn, chosen):
                game = boards[g]
                if game_clock is not None and game_clock.flagged(g, game.to_move) \
                        and not isinstance(move, Forfeit):
                    used = game_clock.seconds - game_clock.left(g, game.to_move)
                    move = Forfeit(f"lost on time: {used:.1f} s used of a {game_clock.seconds:g} s "
                                   f"game clock (+{game_clock.margin:g} s margin)")
                if isinstance(move, Forfeit):
                    result.forfeits.append({
                        "game": game_offset + g, "player": side.name,
                        "color": "B" if game.to_move == BLACK else "W",
                        "move": len(game.moves) + 1, "reason": move.reason})
                    game.resign(game.to_move)
                elif move == RESIGN:
                    game.resign(game.to_move)
                elif game.is_legal(int(move)):
                    game.play(int(move))
                else:                         # a side that answers an illegal move passes
                    game.play(game.board.pass_move)


def _tally(result, boards, a_black, keep_records, game_offset):
    """`result` with the games of `boards` that are over counted in it (wins, colours, numbers,
    records)."""
    for g, game in enumerate(boards):
        if not game.is_over():
            continue
        result.games += 1
        result.a_black.append(a_black[g])
        result.numbers.append(game_offset + g)
        if a_black[g]:
            result.games_a_black += 1
        winner = game.winner
        if winner is None:
            result.draws += 1
        elif (winner == BLACK) == a_black[g]:
            result.wins_a += 1
            if a_black[g]:
                result.wins_a_black += 1
            else:
                result.wins_a_white += 1
        else:
            result.wins_b += 1
            if a_black[g]:
                result.wins_b_white += 1
            else:
                result.wins_b_black += 1
        if keep_records:
            result.records.append(game)
    return result


def _count(result, key, moves, seconds, visits):
    """Adds `moves` moves of side `key` that took `seconds` in all, of `visits` root visits in
    all (None: a side without a visit budget) to the result's per-move figures."""
    setattr(result, f"moves_{key}", getattr(result, f"moves_{key}") + moves)
    setattr(result, f"seconds_{key}", getattr(result, f"seconds_{key}") + max(0.0, seconds))
    if visits is not None:
        setattr(result, f"visits_{key}", getattr(result, f"visits_{key}") + int(visits))
