"""Which opponents a checkpoint plays in the evaluator, and when a pairing has played enough.

A pairing is informative while the checkpoint's expected score against the opponent lies in
INFORMATIVE (15% to 85%): beyond it a few dozen games say little more than "stronger" or
"weaker". The opponents, from what the run knows:
- earlier evaluated checkpoints spaced geometrically in training steps: the previous one and the
  ones nearest to 1/2 and 1/4 of the checkpoint's step (so the fit chains gains large enough for
  a few dozen games to resolve); the previous one is always played, the others when the
  previous checkpoint's rating predicts an informative score;
- fixed anchors, listed in rising strength: at most `max_informative` a checkpoint. An anchor
  that a checkpoint won beyond the range is retired for later checkpoints; one lost beyond it,
  or predicted so, rules out itself and every stronger anchor for this checkpoint.
A pairing plays batches of games until its 95% interval of the Elo difference is narrow enough,
its result is one-sided, or it reaches its maximum (`pairing_verdict`). Pure functions: names,
numbers and ratings in, choices out.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from rundata.match_stats import elo_from_score, wilson_interval
from rundata.rundir import player_step

INFORMATIVE = (0.15, 0.85)        # expected scores at which a pairing is worth its games
FRACTIONS = (0.5, 0.25)           # earlier checkpoints nearest to these fractions of the step


def expected_score(elo_a: float, elo_b: float) -> float:
    """A's expected score against B under the logistic Elo model."""
    return 1.0 / (1.0 + 10.0 ** ((elo_b - elo_a) / 400.0))


def predictor(strength):
    """predict(a, b) for a rundata.strength.Strength: a's expected score against b as (low,
    expected, high) over the 95% interval of a's Elo minus b's (the pair's covariance included:
    a chain to random far away does not widen it), where both are rated in one connected
    group, else None."""
    ratings = strength.elo

    def predict(a, b):
        if not strength.connected(a, b):
            return None
        gain = strength.gain(a, b) or (0.0, 0.0)
        middle = ratings[a][0] - ratings[b][0]
        return tuple(expected_score(elo, 0.0) for elo in (gain[0], middle, gain[1]))
    return predict


def band(prediction):
    """(low, expected, high) of a prediction given as such a triple or as one score."""
    if isinstance(prediction, (tuple, list)):
        return tuple(float(v) for v in prediction)
    return (float(prediction),) * 3


def beyond(prediction, informative=INFORMATIVE) -> str | None:
    """Why a predicted score is beyond the informative range with confidence (its whole band
    above or below), else None."""
    low, mid, high = band(prediction)
    if low > informative[1]:
        return f"expected score {mid:.2f}" + (f", at least {low:.2f}" if low != mid else "")
    if high < informative[0]:
        return f"expected score {mid:.2f}" + (f", at most {high:.2f}" if high != mid else "")
    return None


def one_sided(wins: float, losses: float, draws: float = 0, informative=INFORMATIVE) -> int:
    """+1 when the score (draws half) lies above the informative range and its 95% interval
    excludes an even score, -1 when below and likewise, 0 otherwise (or without games)."""
    games = wins + losses + draws
    if games <= 0:
        return 0
    score = (wins + 0.5 * draws) / games
    low, high = wilson_interval(wins + 0.5 * draws, games)
    if score > informative[1] and low > 0.5:
        return 1
    if score < informative[0] and high < 0.5:
        return -1
    return 0


@dataclass(frozen=True)
class PairingRule:
    """When a pairing stops: after at least one batch of `batch` games, at `max_games`, when
    the 95% interval of its Elo difference is at most `elo_width` wide, or one-sided."""
    batch: int = 8
    max_games: int = 32
    elo_width: float = 300.0
    informative: tuple = INFORMATIVE

    def next_batch(self, played: int) -> int:
        """Games of the next batch after `played` (0 when the maximum is reached)."""
        return max(0, min(self.batch, self.max_games - played))


def pairing_verdict(wins: int, losses: int, draws: int, rule: PairingRule) -> str | None:
    """Why the pairing stops now ('one-sided', 'interval', 'max games'), or None to play on."""
    games = wins + losses + draws
    if games <= 0:
        return None
    if one_sided(wins, losses, draws, rule.informative):
        return "one-sided"
    if elo_interval_width(wins, losses, draws) <= rule.elo_width:
        return "interval"
    if games >= rule.max_games:
        return "max games"
    return None


def _nearest(rows, target):
    return min(rows, key=lambda e: (abs(e["step"] - target), -e["step"]))


def checkpoint_opponents(step, evaluations, predict=None, informative=INFORMATIVE):
    """(names to play in order, {name: why skipped}) among the earlier evaluated checkpoints
    (`evaluations`: rows with 'player' and 'step'): the previous one, then the ones nearest to
    FRACTIONS of `step`, each once. predict(a, b): a's expected score against b (one score or
    a (low, expected, high) band), or None where the ratings do not tell; a non-previous
    checkpoint is skipped when the previous one's predicted score against it is beyond
    `informative` (`beyond`; the new one is expected at least as strong)."""
    earlier = [e for e in evaluations if e["step"] < step]
    if not earlier:
        return [], {}
    previous = max(earlier, key=lambda e: e["step"])["player"]
    picked, skipped = [previous], {}
    for fraction in FRACTIONS:
        name = _nearest(earlier, step * fraction)["player"]
        if name in picked or name in skipped:
            continue
        p = predict(previous, name) if predict is not None else None
        why = beyond(p, informative) if p is not None else None
        if why is not None:
            skipped[name] = f"{previous}'s {why} against it"
            continue
        picked.append(name)
    return picked, skipped


def retired_anchors(rows, anchors, informative=INFORMATIVE) -> dict:
    """{anchor: why} for the anchors an evaluated checkpoint won beyond the informative range,
    from the ratings table's rows (a checkpoint's games against one anchor summed over rows)."""
    totals: dict[tuple[str, str], list[int]] = {}
    anchors = set(anchors)
    for row in rows:
        a, b = row["a"], row["b"]
        if b not in anchors or player_step(a) is None:
            continue
        pair = totals.setdefault((a, b), [0, 0, 0])
        pair[0] += row["wins_a"]
        pair[1] += row["wins_b"]
        pair[2] += row.get("draws", 0)
    out = {}
    for (player, anchor), (wins, losses, draws) in totals.items():
        if anchor not in out and one_sided(wins, losses, draws, informative) > 0:
            out[anchor] = f"{player} won {wins}-{losses}" + (f" ({draws} draws)" if draws else "")
    return out


def next_anchor(anchors, *, retired, played, predicted, max_informative=2,
                informative=INFORMATIVE):
    """(the anchor to play next or None, {anchor: why skipped}).

    anchors: names in rising strength; retired: {name: why} (retired_anchors); played: {name:
    one_sided verdict} of the anchors already played by this checkpoint; predicted: {name: the
    checkpoint's expected score, one score or a (low, expected, high) band} where the fit rates
    both. Once `max_informative` anchors were played within the range, none more. An anchor
    predicted beyond the range with confidence (`beyond`) is skipped; one lost beyond the range
    (or predicted so) rules out the stronger ones; among the rest, the rated one whose expected
    score is nearest to even comes first, else the weakest one not rated yet."""
    if sum(1 for verdict in played.values() if verdict == 0) >= max_informative:
        return None, {}
    ceiling = len(anchors)
    for i, name in enumerate(anchors):
        if played.get(name, 0) < 0 or (name not in played and name in predicted
                                       and band(predicted[name])[2] < informative[0]):
            ceiling = min(ceiling, i)
    skipped, best, best_key = {}, None, None
    for i, name in enumerate(anchors):
        if name in played:
            continue
        if name in retired:
            skipped[name] = f"retired: {retired[name]}"
            continue
        p = predicted.get(name)
        why = beyond(p, informative) if p is not None else None
        if why is not None:
            skipped[name] = why
            continue
        if i > ceiling:
            skipped[name] = f"stronger than {anchors[ceiling]}"
            continue
        key = (0, abs(band(p)[1] - 0.5), i) if p is not None else (1, 0.0, i)
        if best_key is None or key < best_key:
            best, best_key = name, key
    return best, skipped


def elo_interval_width(wins, losses, draws=0) -> float:
    """Width in Elo of the 95% interval of a pairing's result (inf without games)."""
    games = wins + losses + draws
    if games <= 0:
        return math.inf
    low, high = wilson_interval(wins + 0.5 * draws, games)
    return elo_from_score(high) - elo_from_score(low)
