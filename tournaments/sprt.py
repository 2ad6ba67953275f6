"""The sequential probability ratio test of version tests: pure maths, no database.

**What is counted.** A version test plays duplicate sets of two games: the same deal twice with
the seats swapped. Each game gives the candidate 1, ½ or 0 against the baseline, so a set gives
it 0, ¼, ½, ¾ or 1: five outcomes, the *pentanomial* model fishtest uses for its game pairs.
Counting sets rather than games is what the duplicate deal is for: the two games of a set are
correlated (a lucky deal helps whoever holds it in each game), and a test that treated them as
independent would under-estimate the variance and stop too early, with more errors than
``alpha`` and ``beta`` promise. The set's outcome distribution carries that correlation, and
keeping all five outcomes (not just won/drawn/lost sets, the trinomial) keeps the information
of the split sets (¼ and ¾).

**The test.** H0: the candidate's Elo advantage is ``elo0``; H1: it is ``elo1`` (``elo0 <
elo1``), on the logistic scale: an advantage of ``e`` means an expected score of ``1 / (1 +
10^(-e/400))`` per game, hence per set. As in fishtest, the log-likelihood ratio is the
generalized SPRT (GSPRT) approximation: the outcome distribution under each hypothesis is the
maximum-likelihood distribution *with that expected score*, found from the observed frequencies
(a one-dimensional root: ``p_i = f_i / (1 + λ (a_i - s))``), and the LLR is the observed sets'
log-likelihood under H1's distribution minus that under H0's. It needs no model of draws or of
the deal's luck. The test accepts H1 when the LLR reaches ``log((1 - beta) / alpha)``, H0 when it
falls to ``log(beta / (1 - alpha))`` (Wald's bounds).

**The estimate.** The Elo difference is the logistic Elo of the mean set score; its 95 %
interval comes from the normal approximation of that mean (the set scores' own variance over
the number of sets), mapped through the same curve (see ``estimate`` for the edges).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
# A version test's hypotheses, error rates and length when the user leaves them out (the API's
# defaults and the page form's first values; docs/ladder.md).
DEFAULTS: dict[str, float] = {
    "elo0": 0.0,
    "elo1": 50.0,
    "alpha": 0.05,
    "beta": 0.05,
    "max_sets": 1000,
}
Z_95 = 1.959964
# Zero counts are replaced by this much before a distribution is fitted (fishtest does the
# same), so that an outcome not yet seen does not get probability zero under either hypothesis.
REGULARIZE = 1e-3
# The Elo reported for a mean score of exactly 0 or 1 is kept within this much of them.
SCORE_EDGE = 1e-3


def elo_to_score(elo: float) -> float:
    """The expected score of a player ``elo`` points better (logistic Elo)."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def score_to_elo(score: float) -> float:
    """The logistic Elo difference at which ``score`` is expected (clamped inside (0, 1))."""
    score = min(max(score, SCORE_EDGE), 1 - SCORE_EDGE)
    return -400.0 * math.log10(1.0 / score - 1.0)


def bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's LLR bounds: (accept H0 at or below, accept H1 at or above)."""
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


def outcome_index(score: float) -> int:
    """The pentanomial cell of a set score (0, 0.25, ... 1)."""
    index = round(score * 4)
    if not 0 <= index <= 4 or abs(index / 4 - score) > 1e-9:
        raise ValueError(f"a two-game set scores a multiple of 1/4, not {score}")
    return index


def _constrained_mle(freqs: Sequence[float], values: Sequence[float], score: float) -> list[float]:
    """The distribution nearest ``freqs`` (maximum likelihood) whose mean is ``score``.

    ``p_i = f_i / (1 + λ (v_i - score))`` with λ the root of ``g(λ) = Σ f_i (v_i - s) / (1 + λ
    (v_i - s))``, which decreases on the interval where every ``1 + λ (v_i - s)`` is positive.
    Newton's steps from λ = 0, kept inside a shrinking bracket of that interval (a step that
    would leave it bisects instead), reach float precision in a handful of steps.
    """
    shifts = [v - score for v in values]
    high = min((-1.0 / d for d in shifts if d < 0), default=math.inf)
    low = max((-1.0 / d for d in shifts if d > 0), default=-math.inf)
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError("the score must lie strictly between the lowest and highest outcome")
    pairs = list(zip(freqs, shifts, strict=True))
    lam = 0.0
    for _ in range(100):
        terms = [(f, d, 1 + lam * d) for f, d in pairs]
        slope = sum(f * d / q for f, d, q in terms)
        if abs(slope) < 1e-13:
            break
        if slope > 0:
            low = lam
        else:
            high = lam
        step = lam + slope / sum(f * d * d / (q * q) for f, d, q in terms)
        lam = step if low < step < high else (low + high) / 2
    return [f / (1 + lam * d) for f, d in pairs]


def llr(counts: Sequence[int], elo0: float, elo1: float) -> float:
    """The GSPRT log-likelihood ratio of H1 (``elo1``) over H0 (``elo0``) for these counts."""
    total = sum(counts)
    if total == 0:
        return 0.0
    regularized = [c if c > 0 else REGULARIZE for c in counts]
    mass = sum(regularized)
    freqs = [c / mass for c in regularized]
    p0 = _constrained_mle(freqs, SCORES, elo_to_score(elo0))
    p1 = _constrained_mle(freqs, SCORES, elo_to_score(elo1))
    return total * sum(f * math.log(a / b) for f, a, b in zip(freqs, p1, p0, strict=True))


@dataclass(frozen=True)
class Estimate:
    elo: float
    low: float
    high: float


def estimate(counts: Sequence[int]) -> Estimate | None:
    """The candidate's Elo advantage with a 95 % interval; None before the first set.

    A mean score of exactly 0 or 1 has an infinite Elo, so the estimate keeps the mean half a
    set away from them (as ``elo.performance`` does with games); and a run of identical sets has
    no spread at all, so the variance is never taken below a quarter of a won/lost coin's at
    that mean: a perfect record over few sets gets a wide interval, not an empty one.
    """
    total = sum(counts)
    if total == 0:
        return None
    mean = sum(c * v for c, v in zip(counts, SCORES, strict=True)) / total
    mean = min(max(mean, 0.5 / total), 1 - 0.5 / total)
    variance = sum(c * (v - mean) ** 2 for c, v in zip(counts, SCORES, strict=True)) / total
    variance = max(variance, mean * (1 - mean) / 4)
    margin = Z_95 * math.sqrt(variance / total)
    return Estimate(
        elo=score_to_elo(mean), low=score_to_elo(mean - margin), high=score_to_elo(mean + margin)
    )


@dataclass(frozen=True)
class Decision:
    status: str  # "running", "accepted", "rejected" or "inconclusive"
    llr: float
    lower: float
    upper: float


def decide(
    counts: Sequence[int], *, elo0: float, elo1: float, alpha: float, beta: float, max_sets: int
) -> Decision:
    """Where the test stands after ``counts``: H1 accepted, H0 accepted ("rejected": the
    candidate is not ``elo1`` better), out of sets, or go on."""
    lower, upper = bounds(alpha, beta)
    value = llr(counts, elo0, elo1)
    if value >= upper:
        status = "accepted"
    elif value <= lower:
        status = "rejected"
    elif sum(counts) >= max_sets:
        status = "inconclusive"
    else:
        status = "running"
    return Decision(status=status, llr=value, lower=lower, upper=upper)
