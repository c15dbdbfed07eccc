"""The evaluator of a run and its ratings: checkpoints rated as they come against earlier ones
and anchors, its schedule, budget, pairings, evaluations.jsonl and the curves."""
