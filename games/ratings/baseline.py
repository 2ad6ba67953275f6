"""Taking the luck of the deal out of a result with a baseline: a control variate. Pure.

Rated sets are dealt afresh, game by game (``games.scheduling``), so the cards no longer cancel
out within a set as they did on duplicate deals. What a deal gives each seat is measured instead
by a baseline (Davidson, Archibald & Bowling 2013, "Baseline: Practical Control Variates for
Agent Evaluation in Zero-Sum Domains"): the arena's own policy plays the deal, all seats, some
number of times (``deal_values``), and the mean game points each team made, less the mean over
the teams, is that deal's value for the team. The deal is independent of who plays it, so a
seat's value, less its expected value over all deals, has mean zero whoever sits there; any
fixed multiple of it can be taken from a result without moving its expectation:

    corrected = raw - beta * (value_for_seat - expected_value_for_seat)

For a pair (a, b) of one set the control is the mean, over the set's games, of a's team's value
less b's (``pair_controls``), weighted by how much luck can move the pair's score
(``pair_weight``, from the ratings before the set); a's corrected set score is its score less
beta times that (``corrected_score``). Every bot of a set plays every seat once, so the
expected values cancel within the set: the control needs no estimate of them (``seat_means``
may still be given).

Any beta keeps the score unbiased; the one that removes most variance is Cov(score, control) /
Var(control), fitted on past sets (``beta_fit``) and frozen for a pool and a period, so a set's
own result never chooses its coefficient. With correlation rho between score and control the
variance left is (1 - rho^2) of the raw one. ``beta_fit`` sums with ``math.fsum`` (correctly
rounded), so the same sets in any order give the same beta to the last bit.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from games.engine import Game, Ruleset

# Corrections are stored as whole millionths of a set, so sums of them are exact in any order.
CORRECTION_UNIT = 1_000_000
# The baseline policy: uniformly random legal moves, played by the engine (``Game.play_random``:
# in the compiled build the whole game is C). benchmarks/ranking_quality.py ``baseline`` measured
# it against the SDK's greedy and expert playing the deal: see docs/ratings.md.
POLICY = "random"
# Plays per deal: chosen for the variance removed per CPU second (docs/ratings.md).
DEFAULT_PLAYS = 64
# Sets fewer than this and a coefficient is not fitted: DEFAULT_BETA is used.
MIN_SAMPLES = 200
# The coefficient used before a pool has MIN_SAMPLES corrected sets: measured on classic/2p
# (benchmarks/ranking_quality.py baseline), in score per game point of control.
DEFAULT_BETA = 0.03


def deal_values(ruleset: Ruleset, seed: int, plays: int = DEFAULT_PLAYS) -> tuple[float, ...]:
    """What deal ``seed`` gives each team, by the baseline policy: the mean game points the team
    made over ``plays`` games of that deal, less the mean over teams (so they sum to zero).

    The random moves come from a generator seeded by the deal and the play's number, so the same
    deal always gets the same values.
    """
    if plays < 1:
        raise ValueError("plays must be at least 1")
    sums: list[float] = []
    for k in range(plays):
        game = Game.new(ruleset, seed)
        game.play_random(random.Random(f"baseline/{seed}/{k}"), -1, True)
        totals = game.result.totals
        if not sums:
            sums = [0.0] * len(totals)
        for team, points in enumerate(totals):
            sums[team] += points
    means = [total / plays for total in sums]
    centre = math.fsum(means) / len(means)
    return tuple(value - centre for value in means)


@dataclass(frozen=True)
class DealGame:
    """One game of a set as the correction sees it: who played on which team (``participants``,
    (player, team) as ``games.ratings.sets.GameFacts`` has them) and the deal's value for each
    team (``deal_values``)."""

    participants: tuple[tuple[int, int], ...]
    values: tuple[float, ...]


def pair_controls(
    games: Sequence[DealGame], seat_means: Sequence[float] | None = None
) -> dict[tuple[int, int], float]:
    """(a, b) with a < b → the pair's control over one set: the mean over its games of a's
    team's value less b's, each less its team's expected value (``seat_means``, zero when not
    given: a set that puts every player in every seat cancels them)."""
    sums: dict[tuple[int, int], list[float]] = {}
    for game in games:
        means = seat_means or (0.0,) * len(game.values)
        value = {p: game.values[t] - means[t] for p, t in game.participants}
        for a, b in itertools.combinations(sorted(value), 2):
            sums.setdefault((a, b), []).append(value[a] - value[b])
    return {pair: math.fsum(found) / len(games) for pair, found in sums.items()}


def pair_weight(expected: float) -> float:
    """How much of a deal's luck reaches a pair's score, 4 p (1 - p) for a pair expected to
    score p: a deal moves the odds (the logit) alike, and the score by p (1 - p) times that, so
    a lopsided pair's score hardly moves with the cards. 1 for an even pair. ``expected`` must
    come from results before the set (the ratings published when it is corrected), never from
    its own deals, so the weighted control keeps mean zero."""
    return 4.0 * expected * (1.0 - expected)


def corrected_score(raw: float, control: float, beta: float) -> float:
    """A pair's corrected set score: ``raw - beta * control`` (see the module docstring). It can
    leave [0, 1] for one set; a pool's sums are kept in range by ``corrected_sum``."""
    return raw - beta * control


def corrected_sum(score: float, count: float) -> float:
    """A pair's summed score, corrected, kept within [0, count] for the fit (a pair far from
    even over very few sets could otherwise step outside it)."""
    return min(max(score, 0.0), count)


@dataclass(frozen=True)
class BetaFit:
    """A fitted coefficient: ``beta``, the sets it was fitted on, and the share of the raw
    score's variance the correction removes on them (rho squared)."""

    beta: float
    samples: int
    variance_removed: float


def beta_fit(samples: Iterable[tuple[float, float]], default: float = DEFAULT_BETA) -> BetaFit:
    """Cov(score, control) / Var(control) over (score, control) samples, or ``default`` when
    there are fewer than ``MIN_SAMPLES`` or the control never varies. Independent of order."""
    rows = list(samples)
    n = len(rows)
    if n < MIN_SAMPLES:
        return BetaFit(default, n, 0.0)
    mean_s = math.fsum(s for s, _ in rows) / n
    mean_c = math.fsum(c for _, c in rows) / n
    cov = math.fsum((s - mean_s) * (c - mean_c) for s, c in rows)
    var_c = math.fsum((c - mean_c) ** 2 for _, c in rows)
    var_s = math.fsum((s - mean_s) ** 2 for s, _ in rows)
    if var_c <= 0.0:
        return BetaFit(default, n, 0.0)
    beta = cov / var_c
    removed = cov * cov / (var_c * var_s) if var_s > 0 else 0.0
    return BetaFit(beta, n, removed)
