"""The output of `fastgo compare` (comparison.compare): the Markdown table of both runs, their
matches and the head-to-head, and the figure of both evaluator curves."""
from __future__ import annotations

from evaluation.plots import draw_comparison

RUNS = ("a", "b")


def _cell_match(entry):
    if entry is None:
        return "-"
    low, high = entry["interval"]
    draws = f" +{entry['draws']}d" if entry["draws"] else ""
    return f"{entry['wins']}{draws}/{entry['games']} ({low:.2f}..{high:.2f})"


def markdown_table(data) -> str:
    """One row per run: config, self-play games, training steps, the last evaluator Elo, and
    each opponent's wins/games with the 95% interval of the win rate; then one line of the
    head-to-head match when the two last checkpoints played each other."""
    opponents = data.get("opponents", [])
    head = ["run", "config", "games", "steps", "last Elo", *opponents]
    lines = ["| " + " | ".join(head) + " |",
             "|" + "|".join(["---", "---", "---:", "---:", "---:"] + ["---"] * len(opponents)) + "|"]
    for name in RUNS:
        run = data[name]
        elo = "-" if run.get("last_elo") is None else f"{run['last_elo']:+.0f}"
        cells = [name, run_label(data, name).split(": ", 1)[1], str(run["games"]),
                 str(run["steps"]), elo]
        cells += [_cell_match(run["matches"].get(label)) for label in opponents]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    match = data.get("a_vs_b")
    if match:
        elo, low, high = match["elo"]
        lines += ["", f"a against b (the last checkpoints): {_cell_match(match)}, Elo a - b "
                      f"{elo:+.0f} ({low:+.0f}..{high:+.0f})"]
    return "\n".join(lines)


def run_label(data, name) -> str:
    """'NAME: CONFIG' and the overrides of that run the other run lacks ('a: quickstart',
    'b: quickstart trainer.compile=true'): what tells two runs of one config apart."""
    other = data[RUNS[1 - RUNS.index(name)]]
    own = [item for item in data[name].get("overrides", []) if item not in other.get("overrides", [])]
    return " ".join([f"{name}: {data[name]['config']}", *own])


def draw(path, data, curves, anchors=()) -> bool:
    """compare.png: both runs' Elo against wall time (evaluation.plots.draw_comparison); False
    (nothing drawn) when neither run has a rated checkpoint."""
    if not any(c["evaluations"] for c in curves):
        return False
    labels = [run_label(data, name) for name in RUNS]
    draw_comparison(path, curves, labels, tuple(a for a in anchors if a != "random"))
    return True
