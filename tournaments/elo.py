"""Elo arithmetic: pure functions, no database.

Ratings and deltas are ``Decimal`` values with two places ("centi-Elo"). Every pairwise delta is
rounded once, then added to one player and subtracted from the other, so the deltas of a game
sum to exactly zero and replaying the same games in the same order reproduces the same ratings
to the last digit — something float sums cannot promise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal

INITIAL_RATING = Decimal("1500.00")
DEFAULT_K = Decimal("32")
CENT = Decimal("0.01")
Z_95 = 1.959964


def expected_score(rating: Decimal, opponent: Decimal) -> float:
    """The share of points a player rated ``rating`` is expected to take from ``opponent``."""
    return 1.0 / (1.0 + 10.0 ** (float(opponent - rating) / 400.0))


def pairwise_score(mine: tuple, theirs: tuple) -> float:
    """1, ½ or 0: compare two players' standing keys (higher is better)."""
    if mine > theirs:
        return 1.0
    if mine < theirs:
        return 0.0
    return 0.5


def pair_delta(rating: Decimal, opponent: Decimal, score: float, k: Decimal) -> Decimal:
    """What the first player gains (and the second loses) from one pairwise result."""
    raw = float(k) * (score - expected_score(rating, opponent))
    return Decimal(repr(raw)).quantize(CENT, rounding=ROUND_HALF_EVEN)


def game_deltas(
    ratings: Sequence[Decimal], standings: Sequence[tuple], k: Decimal
) -> list[Decimal]:
    """Each player's rating change from one game.

    ``standings`` holds one comparable key per player (higher is better: see
    ``standing_key``). A game of n players counts as every pair playing each other with
    K shared out as K / (n - 1), so a player's change stays within K as in a two-player game.
    """
    count = len(ratings)
    if count != len(standings) or count < 2:
        raise ValueError("one rating and one standing per player, at least two players")
    share = k / (count - 1)
    deltas = [Decimal("0.00")] * count
    for i in range(count):
        for j in range(i + 1, count):
            delta = pair_delta(
                ratings[i], ratings[j], pairwise_score(standings[i], standings[j]), share
            )
            deltas[i] += delta
            deltas[j] -= delta
    return deltas


def standing_key(*, won: bool, forfeited: bool, total: int) -> tuple[int, int, int]:
    """How one player finished a game, for pairwise comparison.

    A forfeit ranks below everything, the winner above the other players, and the rest by the
    game points they made. Equal keys are a draw (e.g. a game without a winner).
    """
    return (0 if forfeited else 1, 1 if won else 0, total)


@dataclass(frozen=True)
class PerformanceEstimate:
    """An Elo estimate with its 95% confidence interval."""

    elo: float
    low: float
    high: float

    @property
    def margin(self) -> float:
        return (self.high - self.low) / 2


def score_to_elo(score: float) -> float:
    """The Elo difference at which ``score`` (a share of points, 0 < score < 1) is expected."""
    return -400.0 * math.log10(1.0 / score - 1.0)


def performance(
    *, wins: int, draws: int, losses: int, base: float = float(INITIAL_RATING)
) -> PerformanceEstimate | None:
    """Elo from pairwise results against the field, with a 95% interval.

    The interval is Wilson's score interval on the share of points (a draw is half a point),
    which stays honest at the edges: a perfect record over few games gets a wide interval, not
    the narrow one a normal approximation would give it. The Elo of a share of exactly 0 or 1 is
    infinite, so the estimate keeps the share half a game away from them, and the bounds a
    quarter of a game; with no results there is nothing to estimate and the answer is None.
    """
    games = wins + draws + losses
    if games == 0:
        return None
    share = (wins + draws / 2) / games
    z2 = Z_95**2
    centre = (share + z2 / (2 * games)) / (1 + z2 / games)
    half = Z_95 * math.sqrt(share * (1 - share) / games + z2 / (4 * games**2)) / (1 + z2 / games)

    def clamp(value: float, edge: float) -> float:
        return min(max(value, edge), 1 - edge)

    return PerformanceEstimate(
        elo=round(base + score_to_elo(clamp(share, 0.5 / games)), 1),
        low=round(base + score_to_elo(clamp(centre - half, 0.25 / games)), 1),
        high=round(base + score_to_elo(clamp(centre + half, 0.25 / games)), 1),
    )
