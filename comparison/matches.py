"""The matches of `fastgo compare` (comparison.compare), played through the arena in this
process: the ArenaPlan of one match (a run's last checkpoint as A on its run's backend, an
opponent or the other run's checkpoint as B, both played as the comparison's PlayerSettings
say, its games at its pace, the run's board size and komi, its JSON, no ratings table), and the
match played from it by play.arena.loop.run_arena, its lines in the match's log file and copied
under a prefix, with the signal that stopped it, if one did."""
from __future__ import annotations

import os

from fastgo.files import escaped
from play.arena.loop import run_arena
from play.arena.plan import PROG, ArenaError, ArenaPlan
from play.deferred_signals import Interrupts


def arena_plan(run, checkpoint: str, opponent, plan, seed: int, json_path: str,
               backend_b: str | None = None) -> ArenaPlan:
    """The ArenaPlan of one match: `checkpoint` (A, on the backend of `run`, a
    comparison.plan.RunPlan) against `opponent` (a comparison.plan.Opponent; B, on
    backend_b, else the plan's player's), each played as plan.player says (a
    comparison.plan.Plan), its games at its pace (visits 1 at equal time, where a side's
    measured speed sets them), on the run's board size and komi, its JSON at `json_path`, no
    ratings table; as `fastgo arena` plays a match by default otherwise."""
    timed = plan.move_seconds is not None or plan.game_seconds is not None
    visits = None if timed else plan.visits
    player = plan.player.replace(visits=1 if visits is None else visits)
    return ArenaPlan(a=checkpoint, b=opponent.spec, games=plan.games,
                     settings_a=player.replace(backend=run.backend),
                     settings_b=player.replace(backend=backend_b or player.backend),
                     seed=seed, size=run.size, komi=run.komi, visits=visits,
                     move_seconds=plan.move_seconds,
                     game_seconds=None if plan.move_seconds is not None else plan.game_seconds,
                     json_path=json_path, table=None)


def play_arena(arena: ArenaPlan, log_path, prefix, out) -> tuple:
    """Plays `arena` in this process (play.arena.loop.run_arena), its lines appended to
    `log_path` and copied to `out` under `prefix`: (exit status, the name of the signal that
    stopped it or None). A match that cannot be played is its line and status 2, one that
    fails while played its line and status 1."""
    os.makedirs(os.path.dirname(os.path.abspath(log_path)), exist_ok=True)
    signals = Interrupts()
    with open(log_path, "a", encoding="utf-8") as log:
        def say(line):
            log.write(line + "\n")
            log.flush()
            out(prefix + line)

        try:
            code = run_arena(arena, out=say, err=say, signals=signals)
        except ArenaError as err:
            say(f"{PROG}: {err}")
            code = 2
        except (OSError, RuntimeError, ValueError) as err:     # a side or a file that failed
            say(f"{PROG}: {escaped(err, 300, one_line=True)}")
            code = 1
    return code, None if signals.caught is None else signals.caught.name
