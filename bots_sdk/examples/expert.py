"""A one-ply player that counts cards.

For every legal move it adds what the move takes now and subtracts what the next player can
expect to take from the table it leaves. The next player's hand is unknown, but the cards it may
hold are not: every card that is neither in our hand, on the table nor in this round's plays is in
another hand or in the deck, so the chance that the next player holds a card of each value
follows from counting them. That is what makes it avoid leaving 5-14 on the table (a sweep for
one card), keep the 7 of oros out of reach, prefer sweeps and trail safely.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from math import comb

from games.engine import Card, Move

from ..state import BotState

# What `GET /` says of these bots (see `Bot.author`).
__author__ = "Escoba Arena examples"

HAND_SIZE = 3


@dataclass(frozen=True)
class Weights:
    """What a point of each kind is worth to this bot; variants re-tune these."""

    card: float = 1.0
    oros: float = 0.6
    seven: float = 1.0
    seven_of_oros: float = 3.0
    escoba: float = 6.0
    # How much of the next player's expected take is counted against a move.
    risk: float = 1.0


def card_points(card: Card, weights: Weights) -> float:
    points = weights.card
    if card.suit == "o":
        points += weights.oros
    if card.value == 7:
        points += weights.seven
        if card.suit == "o":
            points += weights.seven_of_oros
    return points


def best_takes(table: tuple[Card, ...], weights: Weights) -> dict[int, float]:
    """For each card value 1-10, the most one card of that value can take from `table`."""
    best: dict[int, float] = {}
    size = len(table)
    points = [card_points(card, weights) for card in table]
    for subset in range(1, 1 << size):
        total = 0
        taken = 0.0
        for i in range(size):
            if subset >> i & 1:
                total += table[i].value
                taken += points[i]
        value = 15 - total
        if 1 <= value <= 10:
            if subset == (1 << size) - 1:
                taken += weights.escoba
            # The capturing card's own points are the same whatever it takes, so leave them out.
            best[value] = max(best.get(value, 0.0), taken + weights.card)
    return best


def chance_of_value(unseen: list[Card], hand_size: int) -> dict[int, float]:
    """Chance that a hand of `hand_size` cards drawn from `unseen` holds a card of each value."""
    pool = len(unseen)
    if pool == 0 or hand_size <= 0:
        return {}
    draw = min(hand_size, pool)
    total = comb(pool, draw)
    counts: dict[int, int] = {}
    for card in unseen:
        counts[card.value] = counts.get(card.value, 0) + 1
    return {value: 1 - comb(pool - count, draw) / total for value, count in counts.items()}


def expected_take(takes: dict[int, float], chances: dict[int, float]) -> float:
    """What the next player can expect to take: its best available capture, values independent."""
    expected = 0.0
    none_better = 1.0
    for value, taken in sorted(takes.items(), key=lambda item: -item[1]):
        chance = chances.get(value, 0.0)
        expected += none_better * chance * taken
        none_better *= 1 - chance
    return expected


def _sum_points(cards: Iterable[Card], weights: Weights) -> float:
    return sum(card_points(card, weights) for card in cards)


def _last_capturer(state: BotState) -> int | None:
    for play in reversed(state.history):
        if play.capture:
            return play.seat
    # A lucky deal is the round's first capture: the dealer took the table.
    return state.lucky_deal.seat if state.lucky_deal is not None else None


def score_move(state: BotState, move: Move, weights: Weights, chances: dict[int, float]) -> float:
    """Points this move gains now minus what it hands the next player (or the round's leftovers)."""
    taken = (move.card, *move.capture) if move.capture else ()
    gain = _sum_points(taken, weights)
    if taken and state.is_sweep(move):
        gain += weights.escoba
    if move.capture:
        left = tuple(card for card in state.table if card not in move.capture)
    else:
        left = (*state.table, move.card)

    cards_in_hands = sum(seat.hand_size for seat in state.seats)
    if cards_in_hands <= 1 and state.deck_remaining == 0:
        # The round's last play: the table goes to whoever captured last.
        last = state.seat if move.capture else _last_capturer(state)
        teams = {seat.seat: seat.team for seat in state.seats}
        leftovers = _sum_points(left, weights)
        if last is not None and teams.get(last) == state.team:
            return gain + leftovers
        return gain - leftovers

    risk = expected_take(best_takes(left, weights), chances)
    return gain - weights.risk * risk


def next_hand_size(state: BotState) -> int:
    """Cards the next player will hold on its turn (a fresh deal when every hand is empty)."""
    next_seat = state.seats[state.next_seat] if state.seats else None
    size = next_seat.hand_size if next_seat else 0
    if size == 0 and state.deck_remaining > 0:
        return HAND_SIZE
    return size


def make_expert(weights: Weights | None = None, name: str = "expert") -> Callable[[BotState], Move]:
    """An expert bot with its own weights."""
    weights = weights or Weights()

    def choose(state: BotState) -> Move:
        if len(state.legal_moves) == 1:
            return state.legal_moves[0]
        chances = chance_of_value(state.unseen_cards(), next_hand_size(state))
        return max(state.legal_moves, key=lambda move: score_move(state, move, weights, chances))

    choose.__name__ = name
    return choose


choose = make_expert()
