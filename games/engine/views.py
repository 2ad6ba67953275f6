"""Read-only value types handed out by a game: a seat's view, the public plays, the result."""

from __future__ import annotations

from dataclasses import dataclass

from .cards import ALL_CARDS, Card
from .moves import Move
from .rulesets import Ruleset


@dataclass(frozen=True)
class Play:
    """One play of the current round, as every seat saw it."""

    seat: int
    card: Card
    capture: tuple[Card, ...]
    escoba: bool


@dataclass(frozen=True)
class SeatPublic:
    """What everyone knows about a seat: hand size, cards captured and escobas this round."""

    seat: int
    team: int
    hand_size: int
    captured: int
    escobas: int


@dataclass(frozen=True)
class Result:
    """How a game ended.

    ``winner`` is a team, or None for a draw or a shared win. ``reason`` is one of ``target``,
    ``shared``, ``max_rounds`` or ``forfeit``; on a forfeit, ``forfeit`` is the losing team and
    ``forfeit_seat`` the seat that caused it.
    """

    winner: int | None
    totals: list[int]
    reason: str
    forfeit: int | None = None
    forfeit_seat: int | None = None


@dataclass(frozen=True)
class LuckyDeal:
    """The round began with the table worth 15 or 30: the dealer took it, scoring escobas.

    Public, yet not a play, so a seat's history does not show it: the view carries it instead.
    """

    seat: int
    cards: tuple[Card, ...]
    escobas: int


def lucky_deal_of(lucky: tuple[int, list[int], int] | None) -> LuckyDeal | None:
    """The lucky deal of a round as the game records it (seat, card indices, escobas), typed."""
    if lucky is None:
        return None
    seat, cards, escobas = lucky
    return LuckyDeal(seat, tuple([ALL_CARDS[card] for card in cards]), escobas)


@dataclass(frozen=True)
class GameView:
    """Everything one seat may know, and nothing more: never another hand or the deck."""

    seat: int
    team: int
    hand: list[Card]
    table: list[Card]
    round: int
    dealer: int
    deck_remaining: int
    seats: list[SeatPublic]
    scores: list[int]
    history: list[Play]
    legal_moves: list[Move]
    ruleset: Ruleset
    # The round's lucky deal (None when there was none): the cards it took are public.
    lucky_deal: LuckyDeal | None = None
