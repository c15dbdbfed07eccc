"""Equal time per move: both sides of a match get the same seconds a move on one thread each.

A network player turns seconds into root visits by its own speed, measured in this process on
one game at a time (one search, one thread: how `fastgo gtp` plays a game), so a larger, slower
network gets fewer visits in the same seconds. A GTP engine is told the time control
(`time_settings 0 S 1`: S seconds of byo-yomi for every move, then `time_left` before each
genmove) and loses the game when one move overruns S by more than overrun_margin(S).

A game clock (GameClock, `fastgo arena --game-seconds T`), as CGOS plays: each side has T
seconds for all of its moves of a game (sudden death) and loses the game on time once it has
used more than T + game_margin(T). Each side spreads its time by main_time_budget, the rule the
GTP engine (play.gtp.clock) follows too; a GTP engine is told `time_settings T 0 0` and its
`time_left` before each genmove, and is charged the wall time of each genmove; a network side is
charged the seconds its visits take at its own measured one-thread speed (its games are searched
in batches, so wall time would undercharge it).

pace_sides is the one pacing of network sides, for `fastgo arena` (and `fastgo compare`, which
plays through it) and the evaluator: each side's one-thread speed measured and turned into its
visits a move, or kept as the speed its game clock charges.
"""
from __future__ import annotations

import statistics
import time

import numpy as np

from fastgo.game import Game
from fastgo.mcts import BatchedSearch
from fastgo.variants import Search

MIN_BUDGET_S = 0.05        # the least a move is given by a clock
SAFETY_SHARE = 0.8         # share of a move's slice of the clock it may spend ...
SAFETY_S = 0.2             # ... less this margin for the answer to reach the other side
MAX_GAME_SECONDS = 86_400.0
MIN_SAMPLE_S = 0.05        # a timed search shorter than this says little: it is doubled
MAX_VISITS = 1 << 20       # the most visits one move gets (BatchedSearch's tree capacity)
OPENING_PLIES = (0, 6, 12, 20)   # the positions timed: after this many deterministic moves
TIMING_ROUNDS = 2          # each network side's speed is measured this many times, in turn


def overrun_margin(seconds: float) -> float:
    """Seconds a GTP engine may run past its `seconds` a move before it loses the game: at least
    one second (a process answering through pipes), a quarter of the time on long moves."""
    return max(1.0, 0.25 * float(seconds))


def game_margin(seconds: float) -> float:
    """Seconds past its game clock a side may run before it loses on time: one second (an
    answer through pipes) and 2% of the clock."""
    return 1.0 + 0.02 * float(seconds)


def moves_left(empties: int) -> int:
    """The moves a side likely has left with `empties` points of the board empty: a third of
    them, at least 10."""
    return max(10, int(empties) // 3)


def safe_budget(slice_s: float) -> float:
    """What a move may spend of its slice of the clock: SAFETY_SHARE of it less SAFETY_S, at
    least MIN_BUDGET_S."""
    return max(MIN_BUDGET_S, SAFETY_SHARE * float(slice_s) - SAFETY_S)


def empty_points(board) -> int:
    """How many points of `board` (a fastgo.board.Board) are empty: what moves_left reads."""
    return int((board.stones() == 0).sum())


def main_time_budget(seconds_left: float, empties: int) -> float:
    """Seconds a move may use of `seconds_left` main time with `empties` points of the board
    empty: safe_budget of the time over moves_left."""
    return safe_budget(max(0.0, float(seconds_left)) / moves_left(empties))


def check_game_seconds(seconds) -> float:
    """A game clock as float seconds in (0, MAX_GAME_SECONDS]; ValueError otherwise (nan too)."""
    value = float(seconds)
    if not 0 < value <= MAX_GAME_SECONDS:
        raise ValueError(f"game seconds must be in (0, {MAX_GAME_SECONDS:g}], got {seconds!r}")
    return value


class GameClock:
    """Sudden death for `games` games: each side (color) of each game has `seconds` for all of
    its moves. charge() adds a move's seconds; flagged() says the side has run past its time by
    more than game_margin. Colors are fastgo.board's BLACK and WHITE (1 and 2)."""

    def __init__(self, seconds, games):
        self.seconds = check_game_seconds(seconds)
        self.margin = game_margin(self.seconds)
        self.used = np.zeros((int(games), 3), dtype=np.float64)    # [game, color]

    def left(self, game, color) -> float:
        """Seconds `color` has left in `game` (negative once past its time)."""
        return self.seconds - float(self.used[game, color])

    def charge(self, game, color, seconds):
        self.used[game, color] += max(0.0, float(seconds))

    def flagged(self, game, color) -> bool:
        return self.used[game, color] > self.seconds + self.margin


def _positions(size, komi):
    """Games after OPENING_PLIES moves, each the first legal point in a fixed stride: a spread
    of move counts without randomness, so two runs time the same positions."""
    out = []
    for plies in OPENING_PLIES:
        game = Game(size, komi)
        for k in range(plies):
            legal = [int(m) for m in game.legal_moves().nonzero()[0] if m != game.pass_move]
            if not legal:
                break
            game.play(legal[(7 * k + 3) % len(legal)])
        out.append(game)
    return out


def speed_key(side):
    """What a network side's one-thread speed depends on, the key of the speeds `fastgo arena`
    and the evaluator measure: its network's shape (SearchSide.shape: name, board size,
    encoding, backend) and its search settings. The side itself where it has no shape (an
    evaluator that is no network)."""
    if side.shape is None:
        return side
    return (*side.shape, side.settings)


def one_thread_rate(evaluator, settings, size, komi, *, budget_s=1.5, clock=time.monotonic):
    """Root visits per second of a one-game search with `evaluator` (the side's own, as it
    runs: one thread) under `settings`, the median over timed searches of about `budget_s`
    seconds in all. Each search's visits double until it takes MIN_SAMPLE_S; one untimed search
    first (a backend's first call builds its kernels)."""
    search = BatchedSearch(games=1, size=size, komi=komi, settings=settings, seed=1)
    gumbel = search.settings.search == Search.GUMBEL
    positions = _positions(size, komi)

    def timed(game, visits):
        search.set_position(0, game)
        began = clock()
        if gumbel:
            search.run(evaluator, visits, gumbel_scale=0.0)
        else:
            search.run(evaluator, visits)
        return clock() - began, int(search.root_visits(0).sum())

    timed(positions[0], 16)
    visits, rates, spent, k = 16, [], 0.0, 0
    while not (spent >= budget_s and len(rates) >= 3) and spent < 4 * budget_s:
        seconds, done = timed(positions[k % len(positions)], visits)
        spent += seconds
        if seconds < MIN_SAMPLE_S and visits < MAX_VISITS:
            visits *= 2
            continue
        if done > 0 and seconds > 0:
            rates.append(done / seconds)
        k += 1
    if not rates:
        raise ValueError(f"the search made no visits in {spent:.1f} s: cannot time it")
    return statistics.median(rates)


def visits_grid(visits: int) -> int:
    """`visits` rounded down to a grid of eight steps an octave (every count to 15, then 16,
    18, .., 30, 32, 36, ..), less than an eighth fewer: moves of nearly equal visits get equal
    ones, so a batched search plays them together."""
    visits = max(1, int(visits))
    if visits <= 8:
        return visits
    step = 1 << (visits.bit_length() - 4)        # an eighth of the octave's base
    return visits - visits % step


def visits_for(seconds: float, rate: float) -> int:
    """The root visits that `seconds` buy at `rate` visits a second, in 1..MAX_VISITS."""
    return max(1, min(MAX_VISITS, int(float(seconds) * float(rate))))


def pace_sides(sides, seconds, size, komi, *, rates=None, rounds=TIMING_ROUNDS, report=None):
    """Equal time: each network side's one-game, one-thread speed is measured (one_thread_rate)
    `rounds` times, the sides in turn (A, B, A, B), and the fastest measurement kept as its
    `rate`: a load that comes and goes on the machine (another process sharing its caches and
    memory bandwidth) then slows neither side's figure more than the other's. Sides of one
    speed_key (two checkpoints of one run) search at one speed, so they share one rate, the
    fastest of all their measurements: what tells their figures apart is the machine's noise,
    not the network (one checkpoint measured 1,413 to 2,065 visits/s in four rounds on a 2-core
    VM, and two of one run once got 1,908 and 1,414, which would have given one side 35% more
    visits). Its visits a move become what that speed fits in `seconds` (None: a game clock,
    where each move's visits follow the clock).

    sides: [(which, SearchSide)]. rates: {speed_key: visits a second} kept between calls (a
    process that paces many matches measures each speed once; a key already there is not
    measured again). report(which, rate, visits or None): called for each side measured here."""
    rates = {} if rates is None else rates
    fresh = {}
    for _ in range(max(1, int(rounds))):
        for _, side in sides:
            key = speed_key(side)
            if key in rates and key not in fresh:
                continue
            rate = one_thread_rate(side.evaluator, side.settings, size, komi)
            fresh[key] = max(fresh.get(key, 0.0), rate)
    rates.update(fresh)
    for which, side in sides:
        rate = rates[speed_key(side)]
        side.set_speed(rate)
        visits = None
        if seconds is not None:
            side.visits = visits = visits_for(seconds, rate)
        if report is not None and speed_key(side) in fresh:
            report(which, rate, visits)
