"""The learning curve (`curve.png`: Elo against wall time and against games played, with 95%
intervals and the anchors as labelled horizontal lines where they were measured) and the loss
plot (`loss.png`, from metrics.csv). Written atomically; matplotlib with the Agg backend (no
display needed)."""
from __future__ import annotations

import os

from evaluation.evaluations import read_evaluations
from fastgo.files import atomic_write, escaped
from rundata.elo_fit import CGOS_STAND_IN, cgos_text
from rundata.ratings_table import read_table
from rundata.rundir import RunDir
from rundata.strength import strength_of
from trainer.metrics import read_metrics


def _save(fig, path):
    atomic_write(path, lambda handle: fig.savefig(handle, format="png", dpi=100), suffix=".png")


def anchor_spans(evaluations, anchors, key, rows=()):
    """{anchor: (first x, last x)} over the evaluations that played it (x = the evaluation's
    `key`): those whose 'opponents' name it and those the ratings table's `rows` pair with it;
    an anchor no evaluation played is left out."""
    played = {}
    for row in rows:
        played.setdefault(row["a"], set()).add(row["b"])
        played.setdefault(row["b"], set()).add(row["a"])
    spans = {}
    for e in evaluations:
        for name in set(e.get("opponents") or ()) | played.get(e["player"], set()):
            if name in anchors:
                low, high = spans.get(name, (e[key], e[key]))
                spans[name] = (min(low, e[key]), max(high, e[key]))
    return spans


def curve_limits(values, margin=150.0):
    """(low, high) of the Elo axis: the ratings drawn and `margin` around them; the intervals
    of one-sided results (thousands of Elo wide) are cut at the axis, not drawn whole."""
    values = [v for v in values if v == v]
    if not values:
        return -margin, margin
    return min(values) - margin, max(values) + margin


def label_lifts(values, limits, points=9.0, axis_points=330.0):
    """Upward offsets in points for labels at `values` (Elo) so that labels closer than
    `points` on an axis `axis_points` tall showing `limits` do not overlap."""
    per_elo = axis_points / max(1e-9, limits[1] - limits[0])
    lifts, placed = [0.0] * len(values), []
    for k in sorted(range(len(values)), key=lambda k: values[k]):
        y = values[k] * per_elo
        if placed and y < placed[-1] + points:
            lifts[k] = placed[-1] + points - y
            y = placed[-1] + points
        placed.append(y)
    return lifts


def cgos_shift(cgos, ratings):
    """CGOS's scale minus Elo over random (one constant: both fits are one maximum, anchored at
    different players), from any player rated in both; None when none is."""
    for name, value in cgos.items():
        if name in ratings:
            return value[0] - ratings[name][0]
    return None


def draw_curve(path, evaluations, ratings, anchors, rows=None, strength=None):
    """curve.png: each evaluated checkpoint's Elo (random = 0) with its 95% interval, against
    wall time and against self-play games. evaluations: [{'player', 'wall_s', 'games',
    'opponents'?}] in order; ratings: name -> (elo, low, high); anchors: fixed opponents in
    rising strength, each drawn as a labelled horizontal line at its Elo over the checkpoints
    that played it (over the whole plot when the rows do not say). rows: the ratings table's
    results; given, each point also gets a thick bar, the 95% interval of its gain over the
    point before it (rundata.elo_fit.gain_intervals), placed on that point's Elo: what the
    games say about each step of the curve, which the intervals against `random` (a chain of
    one-sided results, often thousands of Elo wide) cannot show. strength: the
    rundata.strength.Strength of those rows, when the caller has it. With rows that rate the
    stand-in of CGOS's anchor, the right axis is CGOS's 9x9 scale and the title gives the newest
    point on it with its interval."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt


    points = thin_points([e for e in evaluations if e["player"] in ratings])
    measured = [a for a in anchors if a in ratings]
    gains, cgos = {}, {}
    if strength is None and rows is not None:
        strength = strength_of(rows)
    if strength is not None:
        rows, cgos = strength.rows, strength.cgos
        gains = {e["player"]: gain for before, e in zip(points, points[1:])
                 if (gain := strength.gain(e["player"], before["player"])) is not None}
    shift = cgos_shift(cgos, ratings)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6), sharey=True)
    limits = curve_limits([ratings[e["player"]][0] for e in points] +
                          [ratings[a][0] for a in measured])
    for ax, key, label in ((axes[0], "wall_s", "wall time (minutes)"),
                           (axes[1], "games", "self-play games")):
        scale = 60.0 if key == "wall_s" else 1.0
        xs = [e[key] / scale for e in points]
        elo = [ratings[e["player"]][0] for e in points]
        low = [ratings[e["player"]][0] - ratings[e["player"]][1] for e in points]
        high = [ratings[e["player"]][2] - ratings[e["player"]][0] for e in points]
        if points:
            ax.errorbar(xs, elo, yerr=[low, high], marker="o", ms=3, capsize=2, color="C0",
                        label="checkpoints (95% intervals)")
        before = {e["player"]: points[k - 1]["player"] for k, e in enumerate(points) if k}
        bars = [(x, ratings[before[e["player"]]][0] + gains[e["player"]][0],
                 ratings[before[e["player"]]][0] + gains[e["player"]][1])
                for x, e in zip(xs, points) if e["player"] in gains]
        if bars:
            ax.vlines([b[0] for b in bars], [b[1] for b in bars], [b[2] for b in bars], lw=5,
                      alpha=0.35, color="C0", label="gain over the point before (95%)")
        spans = anchor_spans(points, measured, key, rows or ())
        lifts = label_lifts([ratings[name][0] for name in measured], limits)
        for i, name in enumerate(measured):
            colour = f"C{i + 1}"
            value = ratings[name][0]
            if name in spans:
                start, end = (x / scale for x in spans[name])
                if end == start:
                    ax.plot([start], [value], marker="_", ms=14, color=colour)
                ax.hlines(value, start, end, linestyles="--", lw=1.2, color=colour)
                ax.annotate(f"{escaped(name)} {round(value) + 0:+d}", (end, value),
                            textcoords="offset points", xytext=(4, 2 + lifts[i]), fontsize=7,
                            color=colour)
            else:
                ax.axhline(value, ls="--", lw=1, color=colour)
                ax.annotate(f"{escaped(name)} {round(value) + 0:+d}", (0.0, value),
                            xycoords=("axes fraction", "data"),
                            textcoords="offset points", xytext=(4, 2 + lifts[i]), fontsize=7,
                            color=colour)
        ax.set_xlabel(label)
        ax.grid(alpha=0.3)
    axes[0].set_ylim(*limits)
    axes[0].set_ylabel("Elo (random = 0)")
    if shift is not None:           # the same axis on CGOS's 9x9 scale
        right = axes[1].secondary_yaxis("right", functions=(lambda y: y + shift,
                                                            lambda y: y - shift))
        right.set_ylabel(f"CGOS 9x9 scale ({CGOS_STAND_IN} = 1800)")
    axes[0].legend(loc="upper left", fontsize=8)
    title = "fastgo learning curve: checkpoints and the anchors they played"
    if points and points[-1]["player"] in cgos:
        title += f"; {escaped(points[-1]['player'])} {cgos_text(cgos[points[-1]['player']])}"
    fig.suptitle(title)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)
    return True


def draw_losses(path, metrics_csv):
    """loss.png: each loss term and the policy accuracy against the training step."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt


    _, rows = read_metrics(metrics_csv, max_rows=MAX_CURVE_POINTS)
    if not rows:
        return False

    def column(name):
        out = []
        for row in rows:
            try:
                out.append(float(row.get(name, "nan")))
            except (TypeError, ValueError):
                out.append(float("nan"))
        return out

    steps = column("step")
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for name in ("loss", "policy_loss", "value_loss", "ownership_loss"):
        left.plot(steps, column(name), label=name)
    left.set_xlabel("training step")
    left.legend(fontsize=8)
    left.grid(alpha=0.3)
    right.plot(steps, column("policy_acc"), label="policy top-1 accuracy")
    right.set_xlabel("training step")
    right.legend(fontsize=8)
    right.grid(alpha=0.3)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)
    return True


# ----------------------------------------------------------------------------------------------
# Several runs in one plot (`fastgo curve`)

MAX_CURVE_POINTS = 1000              # points drawn per run; more are thinned evenly


class RunCurveError(ValueError):
    """A run directory whose curve cannot be drawn; the message names the directory."""


def thin_points(points) -> list:
    """At most MAX_CURVE_POINTS of `points`, evenly spaced, the first and the last kept."""
    if len(points) <= MAX_CURVE_POINTS:
        return list(points)
    last = len(points) - 1
    return [points[last * k // (MAX_CURVE_POINTS - 1)] for k in range(MAX_CURVE_POINTS)]


def run_algorithm(run_root) -> str:
    """The trainer's algorithm as its metrics.csv says: a REINFORCE trainer's rows carry the
    pool size and the learner's win rate; "alphazero" otherwise; "" without metrics."""
    header, _ = read_metrics(RunDir(run_root).metrics, max_rows=2)
    if "pool" in header and "win_rate" in header:
        return "reinforce"
    return "alphazero" if header else ""


def read_run(run_root) -> dict:
    """{'evaluations', 'ratings', 'algorithm'} of a run directory: the evaluator's evaluations
    and every player's Elo from its ratings table (rundata.strength, anchor random = 0), as
    the evaluator has them. RunCurveError when the directory has no ratings or no rated
    checkpoint."""
    if not os.path.isdir(run_root):
        raise RunCurveError(f"{run_root}: not a directory")
    table = RunDir(run_root).ratings_table
    if not os.path.isfile(table):
        raise RunCurveError(f"{run_root}: no ratings (ratings.jsonl): run the evaluator on it first")
    try:
        strength = strength_of(read_table(table))
    except OSError as err:
        raise RunCurveError(f"{table}: cannot read: {err.strerror or err}") from None
    if strength.error:
        raise RunCurveError(f"{table}: {strength.error}")
    ratings = strength.elo
    evaluations = [e for e in read_evaluations(RunDir(run_root).evaluations)
                   if e["player"] in ratings]
    if not evaluations:
        raise RunCurveError(f"{run_root}: no rated checkpoint in evaluations.jsonl")
    evaluations = thin_points(evaluations)
    return {"evaluations": evaluations, "ratings": ratings, "algorithm": run_algorithm(run_root)}


_DASHES = ((0, (5, 2)), (0, (1, 1.5)), (0, (6, 2, 1, 2)), (0, (2, 3)), (0, (8, 2, 1, 2, 1, 2)))


def draw_comparison(path, runs, labels, references=("mcts:100",)):
    """Elo against wall time of several runs (read_run's dicts) in one plot, 95% intervals as
    error bars, one colour per run; each run's reference players (other than the random anchor)
    as dashed lines of its colour."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 4.8))
    for i, (run, label) in enumerate(zip(runs, labels)):
        ratings, points = run["ratings"], run["evaluations"]
        colour = f"C{i}"
        xs = [e["wall_s"] / 60.0 for e in points]
        elo = [ratings[e["player"]][0] for e in points]
        low = [ratings[e["player"]][0] - ratings[e["player"]][1] for e in points]
        high = [ratings[e["player"]][2] - ratings[e["player"]][0] for e in points]
        ax.errorbar(xs, elo, yerr=[low, high], marker="o", ms=3, capsize=2, color=colour,
                    label=label)
        for j, name in enumerate(references):   # one dash pattern per reference, as in the legend
            if name in ratings:
                ax.axhline(ratings[name][0], ls=_DASHES[j % len(_DASHES)], lw=1, color=colour,
                           alpha=0.6, label=f"{name} ({label})")
    ax.axhline(0.0, ls=":", lw=1, color="grey", label="random (0)")
    ax.set_xlabel("wall time (minutes)")
    ax.set_ylabel("Elo (random = 0), 95% intervals")
    ax.grid(alpha=0.3)
    # beside the axes, not on them: "best" still covered the curves' ends, where runs differ
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, borderaxespad=0.0)
    ax.set_title("fastgo: learning curves")
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)
