"""The status line and the closing summary of `fastgo cluster`, the same for both launchers, from
the trainer's heartbeat, the workers' moves/s, the server's counters and the evaluator's
ratings.json."""
from __future__ import annotations

import time

from evaluation.opponents import skipped_anchors
from fastgo import bounded_json
from fastgo.coords import json_number
from fastgo.diskfull import no_wait
from fastgo.files import atomic_write_text
from roles.registry import SUPERVISOR
from rundata.elo_fit import cgos_text
from rundata.rundir import player_step, status_path
from rundata.statefiles import MAX_ELO
from rundata.strength import read_strength

MAX_CORES = 1e6             # a CPU share or budget of the evaluator's status, in cores


def read_cgos(run_dir):
    """{name: (elo, low, high)} on CGOS's scale of a run directory's ratings table (its
    rundata.strength.Strength, refitted only when the file changed); {} without the
    stand-in."""
    return read_strength(run_dir.ratings_table).cgos


def current_ratings(ratings, run_dir):
    """ratings.json's content (`ratings`: {"latest", "ratings"}, or None) with every rating, the
    latest player's included, as the run's ratings table gives them now (read_strength): the
    evaluator writes ratings.json once per point, the table grows while it refines, and the
    status line, curve.png and the dashboard show the same number for the same table. A
    player the table does not rate keeps ratings.json's figures."""
    elo = read_strength(run_dir.ratings_table).elo
    if not isinstance(ratings, dict) or not elo:
        return ratings
    out = dict(ratings)
    latest = out.get("latest")
    if isinstance(latest, dict) and isinstance(latest.get("player"), str) \
            and latest["player"] in elo:
        value = elo[latest["player"]]
        out["latest"] = dict(latest, elo=value[0], elo_low=value[1], elo_high=value[2])
    if isinstance(out.get("ratings"), dict):
        out["ratings"] = {name: list(elo[name]) if isinstance(name, str) and name in elo else value
                          for name, value in out["ratings"].items()}
    return out


def write_cluster_status(run_dir, figures):
    """RUN/logs/cluster.status.json: the supervisor's own figures (the server's evals/s and
    batch fill, the workers' moves/s, restarts, the status line), which no role's status file
    holds, for readers of the run directory (fastgo dashboard). Written to a temporary name
    and renamed; a failed write (a full disk) is skipped, the next status line writes again."""
    try:
        with no_wait():
            atomic_write_text(status_path(run_dir, SUPERVISOR),
                              bounded_json.dumps(figures))
    except Exception:
        pass


def server_rates(stats, last, now=None):
    """(NN evals/s, mean batch fill) between the server stats `last` = (stats, monotonic time)
    and `stats` at monotonic time `now` (None: time.monotonic()); zeros without both."""
    if not stats or not last:
        return 0.0, 0.0
    prev, t_prev = last
    dt = max(1e-6, (time.monotonic() if now is None else now) - t_prev)
    dp = stats["positions"] - prev["positions"]
    db = stats["batches"] - prev["batches"]
    return dp / dt, dp / max(1, db) / max(1, stats["max_batch"])


def clock(seconds):
    """H:MM:SS."""
    seconds = int(seconds)
    return f"{seconds // 3600:d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def _restart_text(restarts):
    total = sum(restarts.values())
    return f"{total} (" + ", ".join(f"{role} {n}" for role, n in sorted(restarts.items())) + ")"


def _cpu_share(evaluator):
    """The evaluator's status file's CPU share and budget (cores) as finite numbers in
    0..MAX_CORES (the strict reader's range: 10**400 is refused, not an OverflowError), or
    None."""
    try:
        return (json_number(evaluator["cpu_share"], what="cpu_share", low=0, high=MAX_CORES),
                json_number(evaluator["cpu_budget"], what="cpu_budget", low=0, high=MAX_CORES))
    except (KeyError, TypeError, ValueError):
        return None


def _elo_text(value) -> str:
    """An Elo figure of ratings.json as status and summary print it: '-' unless a finite
    number within the ratings' range."""
    try:
        return f"{json_number(value, what='elo', low=-MAX_ELO, high=MAX_ELO):.0f}"
    except ValueError:
        return "-"


def skipped_text(evaluator) -> str:
    """'  skipped GNU Go x3 (apt-get install gnugo), KataGo x7 (fastgo katago fetch)': the
    anchors the evaluator skips on this machine and the command that adds each; ''
    without any."""
    groups = skipped_anchors(evaluator)
    if not groups:
        return ""
    return "  skipped " + ", ".join(f"{g['what']} x{len(g['anchors'])}"
                                    + (f" ({g['command']})" if g["command"] else "")
                                    for g in groups)


def status_line(elapsed, train, moves, evals, fill, ratings, restarts, evaluator=None, cgos=None):
    """One status line: train is the trainer's status, ratings the evaluator's ratings.json
    (or None), restarts {role: count}, evaluator the evaluator's status (its CPU share of a
    core on average over the run and its budget: 'eval cpu 0.18/0.2'; the anchors it skips
    here with the command that adds each: skipped_text), or None; cgos: the players' ratings
    on CGOS's scale (read_cgos), shown for the latest rated checkpoint as
    'CGOS 1650 (1580..1720)' after its Elo over random."""
    elo = "-"
    try:
        latest = ratings["latest"]
        elo = f"{_elo_text(latest['elo'])} ({str(latest['player'])[:100]})"
        if cgos and latest["player"] in cgos:
            elo += "  " + cgos_text(cgos[latest["player"]])
    except (KeyError, TypeError, ValueError):
        pass
    loss = train.get("loss")
    latest = train.get("latest")
    cpu = _cpu_share(evaluator)
    return (f"{clock(elapsed)}  games {train.get('games', 0)}  moves/s {moves:.0f}  "
            f"evals/s {evals:.0f}  fill {fill:.2f}  step {train.get('step', 0)}  "
            f"loss {loss if loss is not None else '-'}  ckpt {'-' if latest is None else latest}  "
            + endings_text(train.get("endings")) + f"Elo {elo}"
            + (f"  eval cpu {cpu[0]:.2f}/{cpu[1]:g}" if cpu else "")
            + skipped_text(evaluator)
            + (f"  restarts {_restart_text(restarts)}" if restarts else ""))


def endings_text(endings) -> str:
    """'ends 88/4/8% margin 9.5  ': the shares of the trainer's recent self-play games that
    ended by passes / at the move cap / by resignation and their median final margin
    (rundata.ending_stats); '' before any game or for a status without them."""
    try:
        if not endings["games"]:
            return ""
        shares = "/".join(f"{100 * float(endings[k]):.0f}" for k in ("passes", "move_cap", "resign"))
        margin = endings.get("median_margin")
        return f"ends {shares}% margin {'-' if margin is None else f'{float(margin):g}'}  "
    except (KeyError, TypeError, ValueError, AttributeError):
        return ""


def summary_text(elapsed, stop_reason, train, restarts, ratings, run_dir, evaluator=None,
                 final=None, cgos=None):
    """The lines printed when the cluster has stopped; evaluator: its status (status_line);
    final: what became of the final rating (rated, skipped and why), or None; cgos: as
    status_line takes it."""
    lines = [f"fastgo cluster: stopped after {clock(elapsed)}"
             + (f" ({stop_reason})" if stop_reason else ""),
             f"  self-play games {train.get('games', 0)}, training steps {train.get('step', 0)}, "
             f"restarts {_restart_text(restarts) if restarts else 0}"]
    try:
        latest = ratings["latest"]
        lines.append(f"  {str(latest['player'])[:100]}: Elo {_elo_text(latest['elo'])} "
                     f"({_elo_text(latest['elo_low'])}..{_elo_text(latest['elo_high'])})"
                     + (f", {cgos_text(cgos[latest['player']])}" if cgos and latest["player"] in cgos
                        else "") + "; last results: " + ", ".join(latest["results"]))
        for name, value in sorted(ratings["ratings"].items(), key=lambda kv: -kv[1][0]):
            if player_step(name) is None:
                lines.append(f"  anchor {name}: Elo {_elo_text(value[0])}")
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        lines.append("  no evaluation yet")
    if final:
        lines.append(f"  {final}")
    cpu = _cpu_share(evaluator)
    if cpu:
        lines.append(f"  evaluator CPU: {cpu[0]:.3f} of a core on average (budget {cpu[1]:g})")
    for group in skipped_anchors(evaluator):
        names = group["anchors"]
        lines.append(f"  skipped {', '.join(names)}: {group['why']}"
                     + (f"; `{group['command']}` adds {'them' if len(names) > 1 else 'it'}"
                        if group["command"] else ""))
    lines.append(f"  curve {run_dir.curve}, SGFs {run_dir.sgf}, "
                 f"checkpoint {run_dir.latest}")
    return "\n".join(lines)
