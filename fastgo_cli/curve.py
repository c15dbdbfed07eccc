"""The learning curve (`curve.png`: Elo against wall time and against games played, with 95%
intervals and the reference players as horizontal lines) and the loss plot (`loss.png`, from
metrics.csv). Written atomically; matplotlib with the Agg backend (no display needed)."""
from __future__ import annotations

import csv


def _save(fig, path):
    from fastgo.atomic import atomic_write
    atomic_write(path, lambda handle: fig.savefig(handle, format="png", dpi=100), suffix=".png")


def draw_curve(path, evaluations, ratings, references):
    """evaluations: [{'player', 'wall_s', 'games'}] in order; ratings: name -> (elo, low, high);
    references: names drawn as horizontal lines."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = [e for e in evaluations if e["player"] in ratings]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, key, label in ((axes[0], "wall_s", "wall time (minutes)"), (axes[1], "games", "self-play games")):
        xs = [e[key] / 60.0 if key == "wall_s" else e[key] for e in points]
        elo = [ratings[e["player"]][0] for e in points]
        low = [ratings[e["player"]][0] - ratings[e["player"]][1] for e in points]
        high = [ratings[e["player"]][2] - ratings[e["player"]][0] for e in points]
        if points:
            ax.errorbar(xs, elo, yerr=[low, high], marker="o", ms=3, capsize=2, label="checkpoints")
        for i, name in enumerate(references):
            if name in ratings:
                ax.axhline(ratings[name][0], ls="--", lw=1, color=f"C{i + 1}", label=name)
        ax.set_xlabel(label)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("Elo (random = 0), 95% intervals")
    axes[0].legend(loc="best", fontsize=8)
    fig.suptitle("fastgo learning curve")
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)


def draw_losses(path, metrics_csv):
    """loss.png: each loss term and the policy accuracy against the training step."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    try:
        with open(metrics_csv, newline="") as handle:
            rows = list(csv.DictReader(handle))
    except OSError:
        return False
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
