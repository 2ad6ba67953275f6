"""How a fit becomes a published ranking: each player's figures, who is provisional, the order.

One rule for the arena's rankings (``tournaments.services.rating_fits``) and the SDK's local league
(``python -m bots_sdk league``), so a local league ranks its bots as the server would.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the fit needs numpy; the settings read this module's constants without it
    from .fit import Fit

# The rating pool shown when none is named: a ruleset's name and a table size.
DEFAULT_POOL = "classic/2p"
# A rating whose 95 % half-interval is wider than this is provisional (the arena's
# ESCOBA_PROVISIONAL_HALF_WIDTH defaults to it).
DEFAULT_PROVISIONAL_HALF_WIDTH = 100.0


@dataclass(frozen=True)
class Rated:
    """One player's published figures: the rating, its 95 % interval, and whether the interval
    is still too wide for the rating to count as established."""

    rating: float
    low: float
    high: float
    provisional: bool


def rated(
    fit: Fit, player: int, *, provisional_half_width: float = DEFAULT_PROVISIONAL_HALF_WIDTH
) -> Rated:
    """`player`'s figures in `fit`: provisional while its 95 % half-interval is wider than
    `provisional_half_width` (the arena's `ESCOBA_PROVISIONAL_HALF_WIDTH`)."""
    rating, half = fit.rating_of(player), fit.half_width(player)
    return Rated(rating, rating - half, rating + half, half > provisional_half_width)


def ranking_key(provisional: bool, rating: float, name: str) -> tuple[bool, float, str]:
    """The published order, as a sort key: established ratings first, provisional ones after
    them, each group best first, then by name (case apart)."""
    return (provisional, -rating, name.lower())
