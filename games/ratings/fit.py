"""The published rating: a Bradley-Terry fit on the Elo scale, with intervals. Pure numpy.

Model. Player i has a rating r_i; in one result against j it is expected to score

    p_ij = 1 / (1 + 10 ** ((r_j - r_i) / 400))

(the Elo curve, as computer-chess rating lists use it). A result is a score s in [0, 1] (a win 1,
a draw 1/2, a loss 0; here one duplicate set); its log-likelihood is s log p + (1 - s) log(1 - p),
so only each pair's number of results n and total score w matter, which makes the fit independent
of the order the results arrived in.

Prior. Every rating has the same weak Gaussian prior N(1500, PRIOR_SD^2), PRIOR_SD = 2 / c with
c = ln 10 / 400 (about 347 Elo): exactly as much information as one drawn result against a player
rated 1500. It keeps a perfect record finite (maximum likelihood alone would send it to infinity)
and places a group of players that never met the others (a disconnected component) around 1500
instead of leaving it undefined. Its weight fades as results accumulate.

Anchor. The likelihood depends on rating differences only, so its gradient sums to zero; at the
maximum of the posterior the prior's gradient must then sum to zero too: the ratings of every
connected component average exactly 1500. That is the anchor, with nothing else to choose.

Fit. Newton's method on the log-posterior (concave, so one maximum), with step halving when a step
would lower it, from 1500 for everyone, until no step moves a rating by TOLERANCE (10^-8) Elo.
Each step solves one dense n x n system (n players): about n^3/3 operations, under a second for
a thousand players (see benchmarks/rating_fit.py).

Intervals. The posterior covariance is the inverse of the negative Hessian at the maximum (the
observed Fisher information plus the prior's). It still holds the prior's doubt about where a
whole component sits (variance PRIOR_SD^2 / size along the all-ones direction of the component,
which no result can reduce); a rating is published relative to the anchor, so that direction is
projected out: a rating's 95 % interval is r +- 1.96 sd with sd from the projected covariance.
Differences within a component do not see that direction at all; between two components they
do, so the likelihood of superiority of i over j, Phi((r_i - r_j) / sd(r_i - r_j)), adds it back
for players of different components.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

# Who is provisional is the ranking's rule; named here too for the modules that import it here.

MEAN = 1500.0
SCALE = math.log(10) / 400  # c: natural-log odds per Elo point
PRIOR_SD = 2 / SCALE
Z_95 = 1.959963984540054
TOLERANCE = 1e-8
MAX_ITERATIONS = 100
SMALL_STEP = 1e-2  # Elo points: below this a Newton step is taken without a line search


@dataclass(frozen=True)
class PairTable:
    """Every pair's results, summed: the sufficient statistics of the fit.

    ``players`` are the player ids in ascending order; ``first[k]`` and ``second[k]`` index into
    it (first < second); ``count[k]`` results between them, ``score[k]`` the first's total score.
    """

    players: np.ndarray
    first: np.ndarray
    second: np.ndarray
    count: np.ndarray
    score: np.ndarray

    @classmethod
    def from_results(
        cls, results: Iterable[tuple[int, int, float]], players: Iterable[int] = ()
    ) -> PairTable:
        """Sum (a, b, a's score) results per pair; ``players`` adds players without results.

        Scores are summed as exact fractions, so any order of the same results gives the same
        table, to the last bit.
        """
        totals: dict[tuple[int, int], list] = {}
        for a, b, s in results:
            if a == b:
                raise ValueError("a player cannot meet itself")
            share = Fraction(s).limit_denominator(1000)
            key, mine = ((a, b), share) if a < b else ((b, a), 1 - share)
            cell = totals.setdefault(key, [0, Fraction(0)])
            cell[0] += 1
            cell[1] += mine
        rows = [(a, b, count, float(score)) for (a, b), (count, score) in totals.items()]
        return cls.from_sums(rows, players)

    @classmethod
    def from_sums(
        cls, rows: Sequence[tuple[int, int, int, float]], players: Iterable[int] = ()
    ) -> PairTable:
        """From rows already summed per pair: (a, b, results, a's total score), a < b."""
        ids = sorted({*players, *(r[0] for r in rows), *(r[1] for r in rows)})
        index = {player: i for i, player in enumerate(ids)}
        rows = sorted(rows)
        return cls(
            players=np.array(ids, dtype=np.int64),
            first=np.array([index[r[0]] for r in rows], dtype=np.int64),
            second=np.array([index[r[1]] for r in rows], dtype=np.int64),
            count=np.array([r[2] for r in rows], dtype=np.float64),
            score=np.array([r[3] for r in rows], dtype=np.float64),
        )


@dataclass(frozen=True)
class Fit:
    """Ratings, their covariance relative to the anchor and how the fit went; look players up
    by id. ``component[i]`` numbers player i's connected component, ``location_variance[i]``
    is the prior's variance of that component's position (see the module docstring)."""

    players: np.ndarray
    ratings: np.ndarray
    covariance: np.ndarray
    iterations: int
    component: np.ndarray
    location_variance: np.ndarray

    def _index(self, player: int) -> int:
        i = int(np.searchsorted(self.players, player))
        if i >= len(self.players) or self.players[i] != player:
            raise KeyError(player)
        return i

    def rating_of(self, player: int) -> float:
        return float(self.ratings[self._index(player)])

    def sd_of(self, player: int) -> float:
        i = self._index(player)
        return math.sqrt(float(self.covariance[i, i]))

    def half_width(self, player: int) -> float:
        """Half the 95 % interval."""
        return Z_95 * self.sd_of(player)

    def los(self, player: int, other: int) -> float:
        """Likelihood of superiority: the probability that ``player`` is the stronger."""
        i, j = self._index(player), self._index(other)
        variance = self.covariance[i, i] + self.covariance[j, j] - 2 * self.covariance[i, j]
        if self.component[i] != self.component[j]:
            variance += self.location_variance[i] + self.location_variance[j]
        difference = float(self.ratings[i] - self.ratings[j])
        if variance <= 0:
            return 0.5 if difference == 0 else float(difference > 0)
        return 0.5 * (1 + math.erf(difference / math.sqrt(2 * float(variance))))


def _objective(table: PairTable, ratings: np.ndarray, mean: float, prior_sd: float) -> float:
    d = SCALE * (ratings[table.first] - ratings[table.second])
    # log p = -log(1 + e^-d), log(1 - p) = -log(1 + e^d), both computed without overflow
    log_p = -np.logaddexp(0.0, -d)
    log_q = -np.logaddexp(0.0, d)
    likelihood = float(np.sum(table.score * log_p + (table.count - table.score) * log_q))
    return likelihood - float(np.sum((ratings - mean) ** 2)) / (2 * prior_sd**2)


def _gradient_and_information(
    table: PairTable, ratings: np.ndarray, mean: float, prior_sd: float
) -> tuple[np.ndarray, np.ndarray]:
    """The log-posterior's gradient and its negative Hessian (the information matrix)."""
    n = len(table.players)
    d = SCALE * (ratings[table.first] - ratings[table.second])
    p = 1.0 / (1.0 + np.exp(-d))
    residual = SCALE * (table.score - table.count * p)
    gradient = np.bincount(table.first, residual, n) - np.bincount(table.second, residual, n)
    gradient -= (ratings - mean) / prior_sd**2
    weight = SCALE**2 * table.count * p * (1.0 - p)
    flat = np.bincount(table.first * n + table.second, weight, n * n)
    information = -(flat.reshape(n, n))
    information += information.T
    diagonal = np.bincount(table.first, weight, n) + np.bincount(table.second, weight, n)
    information[np.diag_indices(n)] = diagonal + 1.0 / prior_sd**2
    return gradient, information


def components(table: PairTable) -> np.ndarray:
    """A component number per player (the smallest player index in it): players linked by
    results share one. Label propagation with pointer jumping, all in numpy."""
    label = np.arange(len(table.players))
    while True:
        linked = np.minimum(label[table.first], label[table.second])
        new = label.copy()
        np.minimum.at(new, table.first, linked)
        np.minimum.at(new, table.second, linked)
        new = new[new]
        if np.array_equal(new, label):
            return label
        label = new


def fit_table(table: PairTable, *, mean: float = MEAN, prior_sd: float = PRIOR_SD) -> Fit:
    """The maximum of the posterior (see the module docstring) and its covariance."""
    n = len(table.players)
    ratings = np.full(n, mean)
    if n == 0:
        empty = np.zeros(0)
        return Fit(table.players, ratings, np.zeros((0, 0)), 0, empty, empty)
    value = _objective(table, ratings, mean, prior_sd)
    iterations = 0
    information = np.eye(n)
    while iterations < MAX_ITERATIONS:
        iterations += 1
        gradient, information = _gradient_and_information(table, ratings, mean, prior_sd)
        step = np.linalg.solve(information, gradient)
        scale = 1.0
        while True:
            candidate = ratings + scale * step
            new_value = _objective(table, candidate, mean, prior_sd)
            # Near the maximum a Newton step is right and the posterior's change (about the
            # step squared times the information) is below the last digit of its value, so
            # comparing values there measures rounding: the step is taken whole. Far from it,
            # halve until the posterior rises.
            if new_value >= value or scale < 1e-6 or float(np.max(np.abs(step))) < SMALL_STEP:
                break
            scale /= 2
        ratings, value = candidate, new_value
        if float(np.max(np.abs(scale * step))) < TOLERANCE:
            break
    # The information at the last step's start: the step moved no rating by TOLERANCE, so it
    # is the information at the maximum to far better than any published digit.
    covariance = np.linalg.inv(information)
    component = components(table)
    sizes = np.bincount(component, minlength=n)[component]
    location_variance = prior_sd**2 / sizes
    # Project out each component's location (a lone player keeps its prior: nothing anchors it).
    same = (component[:, None] == component[None, :]) & (sizes[:, None] > 1)
    covariance -= np.where(same, location_variance[:, None], 0.0)
    location_variance = np.where(sizes > 1, location_variance, 0.0)
    return Fit(table.players, ratings, covariance, iterations, component, location_variance)


def fit_ratings(
    results: Iterable[tuple[int, int, float]],
    players: Iterable[int] = (),
    *,
    mean: float = MEAN,
    prior_sd: float = PRIOR_SD,
) -> Fit:
    """Fit (a, b, a's score) results: the convenient form for tests and benchmarks."""
    return fit_table(PairTable.from_results(results, players), mean=mean, prior_sd=prior_sd)
