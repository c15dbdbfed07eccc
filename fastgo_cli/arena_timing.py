"""Equal time in `fastgo arena` (and `fastgo compare`, which plays through it): each network
side's one-thread search speed is measured and becomes its pace, visits a move at
--move-seconds or the speed its game clock charges at --game-seconds (play.equal_time)."""
from __future__ import annotations

import sys

PROG = "fastgo arena"

TIMING_ROUNDS = 2      # each network side's speed is measured this many times, in turn


def time_network_sides(sides, seconds, size, komi, out=None):
    """Equal time: each network side's one-game, one-thread speed is measured (play.equal_time)
    TIMING_ROUNDS times, the sides in turn (A, B, A, B), and the fastest measurement kept as
    its `rate`: a load that comes and goes on the machine (another process sharing its caches
    and memory bandwidth) then slows neither side's figure more than the other's. Sides of one
    speed_key (two checkpoints of one run) search at one speed, so they share one rate, the
    fastest of all their measurements: what tells their figures apart is the machine's noise,
    not the network (one checkpoint measured 1,413 to 2,065 visits/s in four rounds on a
    2-core VM, and two of one run once got 1,908 and 1,414, which would have given one side 35%
    more visits). Its visits a move become what that speed fits in `seconds` (None: a game
    clock, where each move's visits follow the clock). sides: [(which, SearchSide)]."""
    from play.equal_time import one_thread_rate, speed_key

    best = {}
    for _ in range(TIMING_ROUNDS):
        for which, side in sides:
            rate = one_thread_rate(side.evaluator, side.settings, size, komi)
            key = speed_key(side)
            best[key] = max(best.get(key, 0.0), rate)
    for which, side in sides:
        set_network_pace(side, best[speed_key(side)], seconds, which, out)


def set_network_pace(side, rate, seconds, which, out=None):
    """The side's speed is `rate` visits a second; with `seconds` a move, its visits a move."""
    from play.equal_time import visits_for

    out = sys.stdout if out is None else out
    side.set_speed(rate)
    if seconds is None:            # a game clock: the visits of each move follow its clock
        print(f"{PROG}: {which} searches {rate:,.0f} visits/s on one thread", file=out,
              flush=True)
        return
    side.visits = visits_for(seconds, rate)
    print(f"{PROG}: {which} searches {rate:,.0f} visits/s on one thread: {side.visits:,} visits "
          f"a move in {seconds:g} s", file=out, flush=True)
