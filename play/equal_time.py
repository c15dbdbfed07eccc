"""Equal time per move: both sides of a match get the same seconds a move on one thread each.

A network player turns seconds into root visits by its own speed, measured in this process on
one game at a time (one search, one thread: how `fastgo gtp` plays a game), so a larger, slower
network gets fewer visits in the same seconds. A GTP engine is told the time control
(`time_settings 0 S 1`: S seconds of byo-yomi for every move, then `time_left` before each
genmove) and loses the game when one move overruns S by more than overrun_margin(S).
"""
from __future__ import annotations

import statistics
import time

from fastgo.game import Game
from fastgo.mcts import BatchedSearch

MIN_SAMPLE_S = 0.05        # a timed search shorter than this says little: it is doubled
MAX_VISITS = 1 << 20       # the most visits one move gets (BatchedSearch's tree capacity)
OPENING_PLIES = (0, 6, 12, 20)   # the positions timed: after this many deterministic moves


def overrun_margin(seconds: float) -> float:
    """Seconds a GTP engine may run past its `seconds` a move before it loses the game: at least
    one second (a process answering through pipes), a quarter of the time on long moves."""
    return max(1.0, 0.25 * float(seconds))


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


def one_thread_rate(evaluator, settings, size, komi, *, budget_s=1.5, clock=time.monotonic):
    """Root visits per second of a one-game search with `evaluator` (the side's own, as it
    runs: one thread) under `settings`, the median over timed searches of about `budget_s`
    seconds in all. Each search's visits double until it takes MIN_SAMPLE_S; one untimed search
    first (a backend's first call builds its kernels)."""
    search = BatchedSearch(games=1, size=size, komi=komi, settings=settings, seed=1)
    gumbel = search.search == "gumbel"
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


def visits_for(seconds: float, rate: float) -> int:
    """The root visits that `seconds` buy at `rate` visits a second, in 1..MAX_VISITS."""
    return max(1, min(MAX_VISITS, int(float(seconds) * float(rate))))
