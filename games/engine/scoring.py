"""Scoring one round from the cards each side captured.

Works on bit masks of card indices (see ``cards``), so a round is scored with a handful of
popcounts and table lookups. "Most" always means strictly more than every other side; a tie
scores nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .cards import NAMES, OROS_MASK, SEVEN_OF_OROS, SEVENS_MASK

CATEGORIES = ("cards", "oros", "seven_of_oros", "sevens", "escobas")

# Primera values by capture value; their order is also A's setenta ranking (7, 6, A, 5 ... faces).
PRIMERA_VALUES = {7: 21, 6: 18, 1: 16, 5: 15, 4: 14, 3: 13, 2: 12, 8: 10, 9: 10, 10: 10}

# A suit's cards sit on every 4th bit of a pile mask (value-major card order), so
# ``mask >> suit & _SUIT_BITS`` lines up any suit the same way. _BEST maps each of those 1024
# patterns to the primera value of its best card (0 when the suit is missing).
_SUIT_BITS = sum(1 << 4 * (value - 1) for value in range(1, 11))


def _best_by_pattern() -> dict[int, int]:
    # A function rather than a module-level comprehension: Cython (3.1 to 3.3) miscounts
    # references in a module-level comprehension nested in another, which crashes the compiled
    # build at exit.
    best = {}
    for pattern in range(1024):
        values = [value for value in range(1, 11) if pattern >> (value - 1) & 1]
        key = sum([1 << 4 * (value - 1) for value in values])
        best[key] = max([PRIMERA_VALUES[value] for value in values], default=0)
    return best


_BEST = _best_by_pattern()

# A's setenta ranking as base-8 digit weights: a missing suit (0) < faces (10) < 2 < ... < 7.
_WEIGHT = {value: 8**rank for rank, value in enumerate((0, 10, 12, 13, 14, 15, 16, 18, 21))}

# The same weight of a suit's best card, by pattern (as _BEST): a side's setenta key is four
# lookups (_setenta_key).
_SETENTA_WEIGHT = {pattern: _WEIGHT[best] for pattern, best in _BEST.items()}

_DECK_MASK = (1 << 40) - 1


def best_cards(mask: int) -> list[int]:
    """The primera value of the best card of each suit held in ``mask`` (0 for a missing suit)."""
    return [_BEST[mask & _SUIT_BITS], _BEST[mask >> 1 & _SUIT_BITS],
            _BEST[mask >> 2 & _SUIT_BITS], _BEST[mask >> 3 & _SUIT_BITS]]  # fmt: skip


def strict_winner(values: Sequence[Any]) -> int | None:
    """The index whose value is strictly greater than every other one, or None on a tie."""
    winner = _strict_index(list(values))
    return None if winner < 0 else winner


def round_totals(
    options: Mapping[str, Any], captured: list[int], escobas: Sequence[int]
) -> list[int]:
    """Each side's points in a round: the totals of ``score_round`` without its dicts.

    This is what playing on needs when a round ends (the game's totals and whether it is over);
    the game keeps ``captured`` and ``escobas`` and builds the full score only when a log asks,
    so that neither a game nor a search's rollout pays for dicts nobody reads.
    """
    card_points, oros_points, sevens_points = _category_points(options, captured)
    seven_of_oros = options["seven_of_oros"]
    totals = []
    for side in range(len(captured)):
        total = card_points[side] + oros_points[side] + sevens_points[side] + escobas[side]
        if captured[side] >> SEVEN_OF_OROS & 1:
            total += seven_of_oros
        totals.append(total)
    return totals


def score_round(
    options: Mapping[str, Any], captured: list[int], escobas: Sequence[int]
) -> list[dict[str, Any]]:
    """Score a round: one entry per side, with the counts, the points by category and the total.

    ``captured`` holds each side's captured cards as a bit mask, ``escobas`` its sweeps (lucky
    deals included). The totals are ``round_totals``'s.
    """
    card_points, oros_points, sevens_points = _category_points(options, captured)
    seven_of_oros = options["seven_of_oros"]
    scores = []
    for side, mask in enumerate(captured):
        won_seven_of_oros = mask >> SEVEN_OF_OROS & 1 == 1
        points = {
            "cards": card_points[side],
            "oros": oros_points[side],
            "seven_of_oros": seven_of_oros if won_seven_of_oros else 0,
            "sevens": sevens_points[side],
            "escobas": escobas[side],
        }
        scores.append(
            {
                "cards": mask.bit_count(),
                "oros": (mask & OROS_MASK).bit_count(),
                "seven_of_oros": won_seven_of_oros,
                "sevens": (mask & SEVENS_MASK).bit_count(),
                "primera": sum(best_cards(mask)),
                "escobas": escobas[side],
                "points": points,
                "total": sum(points.values()),
            }
        )
    return scores


def _category_points(
    options: Mapping[str, Any], captured: list[int]
) -> tuple[list[int], list[int], list[int]]:
    """Each side's points for cards, oros and sevens (the categories sides compete for).

    Plain loops over ints rather than comprehensions: every round's end runs this, in games and
    in a search's rollouts, and the compiled build (``scoring.pxd``) turns them into C."""
    sides = len(captured)
    big_wins = options["big_wins"]
    over_half = options["count_rule"] == "over_half"
    card_points = [0] * sides
    card_winner = _most(captured, _DECK_MASK, 20 if over_half else -1)
    if card_winner >= 0:
        big = big_wins and captured[card_winner].bit_count() >= 30
        for side in range(sides):
            if side != card_winner and captured[side].bit_count() >= 10:
                big = False
        card_points[card_winner] = 2 if big else 1
    oros_points = [0] * sides
    oros_winner = _most(captured, OROS_MASK, 5 if over_half else -1)
    if oros_winner >= 0:
        every_oro = (captured[oros_winner] & OROS_MASK) == OROS_MASK
        oros_points[oros_winner] = 2 if every_oro and (big_wins or options["all_oros"]) else 1

    category = options["sevens"]
    sevens_points = [0] * sides
    sevens_winner = -1
    if category == "setenta":
        sevens_winner = _strict_index([_setenta_key(mask) for mask in captured])
    elif category == "most":
        sevens_winner = _most(captured, SEVENS_MASK, -1)
    elif category == "primera":
        bests = [best_cards(mask) for mask in captured]
        complete = [sum(best) if all(best) else -1 for best in bests]
        sevens_winner = _strict_index(complete)
        if sevens_winner >= 0 and complete[sevens_winner] < 0:
            sevens_winner = -1
    elif category == "per_suit":
        sevens_points = [(mask & SEVENS_MASK).bit_count() for mask in captured]
    if sevens_winner >= 0:
        every_seven = (captured[sevens_winner] & SEVENS_MASK) == SEVENS_MASK
        every_seven = every_seven and (big_wins or options["all_sevens"])
        sevens_points[sevens_winner] = 2 if every_seven else 1
    return card_points, oros_points, sevens_points


def _most(captured: list[int], cards: int, half: int) -> int:
    """The side holding the most of ``cards`` strictly, or with ``half`` >= 0 the first side
    holding more than ``half`` of them; -1 when no side does."""
    best = -1
    top = -1
    tied = False
    for side in range(len(captured)):
        count = (captured[side] & cards).bit_count()
        if half >= 0:
            if count > half:
                return side
        elif count > top:
            best, top, tied = side, count, False
        elif count == top:
            tied = True
    return -1 if tied or half >= 0 else best


def _strict_index(values: list[Any]) -> int:
    """``strict_winner`` with -1 for a tie or no values: a loop the compiled build makes C."""
    if not values:
        return -1
    best = 0
    tied = False
    for index in range(1, len(values)):
        if values[index] > values[best]:
            best, tied = index, False
        elif values[index] == values[best]:
            tied = True
    return -1 if tied else best


def _setenta_key(mask: int) -> int:
    """A number that orders sides as A's setenta does: the best cards of ``mask``'s suits
    compared best against best.

    Comparing the four best cards sorted from best to worst is the same as comparing how many
    sevens each side has, then how many sixes, and so on down A's ranking; with at most four
    cards per rank, those counts are the base-8 digits of this number, highest rank first.
    """
    return (
        _SETENTA_WEIGHT[mask & _SUIT_BITS]
        + _SETENTA_WEIGHT[mask >> 1 & _SUIT_BITS]
        + _SETENTA_WEIGHT[mask >> 2 & _SUIT_BITS]
        + _SETENTA_WEIGHT[mask >> 3 & _SUIT_BITS]
    )


# --- the breakdown a log shows ---------------------------------------------------------------
#
# What decided a round's points beyond the counts: the best card of each suit (what setenta and
# primera compare) and how much of a category's points a bonus gave. Kept apart from
# ``score_round`` so that scoring itself stays a handful of popcounts.

# The keys ``add_score_breakdown`` adds to each side of a round's score (logs written before they
# existed lack all three, and still replay).
BREAKDOWN_KEYS = ("best_cards", "setenta_cards", "bonus")

# Values from the best card of a suit to the worst: A's setenta ranking (``PRIMERA_VALUES``'s
# order), the face cards, which all count 10, from the rey down.
_RANKED_VALUES = (7, 6, 1, 5, 4, 3, 2, 10, 9, 8)


# The best card of a suit by its pattern (as for _BEST) in each suit: (rank, suit, name), the
# rank in _RANKED_VALUES; None for a missing suit.
_BEST_OF_SUIT = tuple(
    {
        sum(1 << 4 * (value - 1) for value in range(1, 11) if pattern >> (value - 1) & 1): next(
            (
                (rank, suit, NAMES[4 * (value - 1) + suit])
                for rank, value in enumerate(_RANKED_VALUES)
                if pattern >> (value - 1) & 1
            ),
            None,
        )
        for pattern in range(1024)
    }
    for suit in range(4)
)


def add_score_breakdown(
    options: Mapping[str, Any], captured: Sequence[int], score: Sequence[dict[str, Any]]
) -> None:
    """Add to each side of ``score`` (from ``score_round``) what decided its points.

    - ``best_cards``: the best card of each suit, in the order oros, copas, espadas, bastos,
      None for a suit the side has none of (primera needs all four); the best is the highest
      primera value, and among the face cards, which all count 10, the highest face;
    - ``setenta_cards``: the same cards best first, as the setenta compares them;
    - ``bonus``: for cards, oros and sevens, the part of ``points`` a bonus gave (a category won
      is worth 1; a second point in it only comes from a bonus). ``per_suit`` sevens are a point
      per seven, never a bonus.
    """
    per_suit = options["sevens"] == "per_suit"
    oros_table, copas_table, espadas_table, bastos_table = _BEST_OF_SUIT
    for mask, side in zip(captured, score, strict=True):
        best = [
            oros_table[mask & _SUIT_BITS],
            copas_table[mask >> 1 & _SUIT_BITS],
            espadas_table[mask >> 2 & _SUIT_BITS],
            bastos_table[mask >> 3 & _SUIT_BITS],
        ]
        side["best_cards"] = [None if card is None else card[2] for card in best]
        side["setenta_cards"] = [card[2] for card in sorted(c for c in best if c is not None)]
        points = side["points"]
        cards, oros, sevens = points["cards"], points["oros"], points["sevens"]
        side["bonus"] = {
            "cards": cards - 1 if cards > 1 else 0,
            "oros": oros - 1 if oros > 1 else 0,
            "sevens": sevens - 1 if sevens > 1 and not per_suit else 0,
        }


def score_log(score: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """A fresh copy of a round's score for a log, so that no caller can change the game's own."""
    copies = []
    for side in score:
        copies.append(
            dict(
                side,
                points=dict(side["points"]),
                best_cards=list(side["best_cards"]),
                setenta_cards=list(side["setenta_cards"]),
                bonus=dict(side["bonus"]),
            )
        )
    return copies
