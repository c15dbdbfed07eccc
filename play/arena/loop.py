"""The arena's match (play.arena.plan.ArenaPlan) and run_arena, the whole program: the two
sides made (play.arena.sides), the games played in batches of games_at_once (play.match), each
batch counted and its SGFs written as one step, the sequential probability ratio test after
each batch (Leela Zero's gating), the report, the --json file and the ratings table's row
(play.arena.report), the engines ended.

SIGINT or SIGTERM (also while a GTP engine does not answer) ends the match, whatever its
moment (play.deferred_signals.Interrupts): the games finished so far are counted and written
(a batch whose last game is over is handed back whole: play_match holds the signals from its
last round until the batch is counted), reported and appended to the table, the engines are
ended, a second signal is quiet, and the status is 130. A signal once the report has begun
(or while the engines are ended) lets both finish and says so."""
from __future__ import annotations

import os
import sys
import time

from play import match
from play.arena.plan import PROG, SPRT_ALPHA, SPRT_BETA, ArenaPlan
from play.arena.report import report, write_sgfs
from play.arena.sides import make_sides
from play.deferred_signals import Interrupts
from play.players import MatchSide, Player
from rundata.match_stats import sprt_bounds, sprt_decision, sprt_llr


def printer(stream):
    """A function that writes one line to `stream` (None: sys.stdout, looked up when called)
    and flushes it."""
    def say(line):
        print(line, file=sys.stdout if stream is None else stream, flush=True)
    return say


def run_arena(plan: ArenaPlan, out=None, err=None, signals=None) -> int:
    """Plays the plan's match (see the module); its exit status: 0, 130 when interrupted, 1
    when the ratings table could not be appended to. out(line), err(line): where its lines go
    (default stdout and stderr). `signals`: the Interrupts it runs under (a caller that wants to
    know which signal ended it, in its `caught`); by default a fresh one that leaves both
    signals ignored once interrupted, as a command that ends. ArenaError (nothing played) for a
    player that cannot play."""
    out = printer(None) if out is None else out
    err = (lambda line: print(line, file=sys.stderr, flush=True)) if err is None else err
    opened: list[MatchSide | Player] = []
    games = [0]
    with Interrupts(quiet_after=True) if signals is None else signals as signals:
        try:
            status = _match(plan, signals, opened, games, out, err)
        except KeyboardInterrupt:      # before the first game (e.g. an engine starting)
            signals.quiet()
            err(f"{PROG}: interrupted before the match started")
            status = 130
        finally:
            signals.hold()             # the engines are ended whole
            for side in opened:
                side.close()
        if signals.signum is not None:     # held once the match was over: the report is whole
            err(f"{PROG}: interrupted after {games[0]} games (all reported)")
            status = status or 130
    return status


def _match(plan, signals, opened, games, out, err):
    a, b, size = make_sides(plan, opened, out)
    total, sprt, interrupted = play_games(plan, a, b, size, signals, out, err)
    games[0] = total.games                  # signals held or quiet from here on
    return report(plan, a, b, size, total, sprt, interrupted, out, err)


def play_games(plan: ArenaPlan, a, b, size, signals, out, err):
    """(MatchResult of every game counted, the SPRT state or None, interrupted): the plan's
    games in batches, each counted and written before a signal can cut it; `signals` (an
    entered Interrupts) is held or quiet when this returns."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    if plan.sgf_dir is not None:
        os.makedirs(plan.sgf_dir, exist_ok=True)
    sprt = None
    if plan.sprt is not None:
        lower, upper = sprt_bounds(SPRT_ALPHA, SPRT_BETA)
        sprt = {"elo0": plan.sprt[0], "elo1": plan.sprt[1], "alpha": SPRT_ALPHA,
                "beta": SPRT_BETA, "lower": lower, "upper": upper, "llr": 0.0,
                "accepted": None}
    pace = (f", {plan.move_seconds:g} s a move" if plan.move_seconds is not None else
            f", {plan.game_seconds:g} s a game each" if plan.game_seconds is not None else "")
    out(f"{PROG}: A {a.name} vs B {b.name}, {size}x{size} komi {plan.komi:g}{pace}, "
        f"{'at most ' if sprt else ''}{plan.games} games, {plan.at_once} at once")
    total = match.MatchResult(a.name, b.name)
    interrupted = False
    started = time.monotonic()
    try:
        while total.games < plan.games:
            n = min(plan.games_at_once, plan.games - total.games)
            chunk = match.play_match(a, b, n, size=size, komi=plan.komi,
                                     keep_records=plan.sgf_dir is not None,
                                     game_offset=total.games, game_seconds=plan.game_seconds,
                                     signals=signals)
            _settle(total, chunk, plan.sgf_dir, stamp)   # held since the batch's last round
            signals.release()                            # a signal held meanwhile: now
            line = (f"  {total.games} games, {time.monotonic() - started:.0f} s: "
                    f"A {total.wins_a}, B {total.wins_b}")
            if total.draws:
                line += f", draws {total.draws}"
            if sprt is not None:
                sprt["llr"] = sprt_llr(total.wins_a, total.wins_b, total.draws,
                                       sprt["elo0"], sprt["elo1"])
                sprt["accepted"] = sprt_decision(sprt["llr"], SPRT_ALPHA, SPRT_BETA)
                line += f", LLR {sprt['llr']:+.3f}"
            if total.games < plan.games or sprt is not None:
                out(line)
            if sprt is not None and sprt["accepted"] is not None:
                break
        signals.hold()                       # the match is over: the report is never cut
    except KeyboardInterrupt as interrupt:
        signals.quiet()                      # a second signal while it ends is ignored
        interrupted = True
        # the games over in the batch play_match was playing (not yet counted)
        if isinstance(interrupt, match.MatchInterrupted) and interrupt.match_result.games:
            _settle(total, interrupt.match_result, plan.sgf_dir, stamp)
        err(f"{PROG}: interrupted after {total.games} games")
    return total, sprt, interrupted


def _settle(total, chunk, sgf_dir, stamp):
    """Counts a finished batch into `total` and writes its SGFs (records then dropped)."""
    total.add(chunk)
    if sgf_dir is not None:
        write_sgfs(chunk, sgf_dir, stamp)
    total.records = []
    chunk.records = []
