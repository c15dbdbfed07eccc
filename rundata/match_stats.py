"""One match's statistics: the Wilson interval of a score, the Elo difference a score means
under the logistic model, and Wald's sequential probability ratio test (SPRT) between two Elo
hypotheses. Stdlib only; the arena, the evaluator's pairings, `fastgo compare` and the match
runner read them here."""
from __future__ import annotations

import math

__all__ = ["wilson_interval", "elo_from_score", "sprt_llr", "sprt_bounds", "sprt_decision"]


def wilson_interval(successes: float, n: float, z: float = 1.96):
    """The 95% (z = 1.96) Wilson score interval of `successes` in `n` games, (0, 1) for none."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def elo_from_score(score: float) -> float:
    """The Elo difference a score means, the score clamped to 1e-4..1 - 1e-4."""
    score = min(max(score, 1e-4), 1 - 1e-4)
    return -400.0 * math.log10(1.0 / score - 1.0)


def sprt_llr(wins: float, losses: float, draws: float, elo0: float, elo1: float) -> float:
    """Log-likelihood ratio of H1 (A is elo1 stronger than B) against H0 (elo0) for A's
    wins, losses and draws (a draw is half a win and half a loss), under the logistic model."""
    p0 = 1.0 / (1.0 + 10.0 ** (-elo0 / 400.0))
    p1 = 1.0 / (1.0 + 10.0 ** (-elo1 / 400.0))
    won = wins + 0.5 * draws
    lost = losses + 0.5 * draws
    return won * math.log(p1 / p0) + lost * math.log((1.0 - p1) / (1.0 - p0))


def sprt_bounds(alpha: float = 0.05, beta: float = 0.05):
    """Wald's (lower, upper) LLR bounds: H0 accepted at or below lower, H1 at or above upper."""
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def sprt_decision(llr: float, alpha: float = 0.05, beta: float = 0.05):
    """'H1', 'H0', or None while the test has not decided."""
    lower, upper = sprt_bounds(alpha, beta)
    if llr >= upper:
        return "H1"
    if llr <= lower:
        return "H0"
    return None
