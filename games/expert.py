"""The expert policy's scoring: a one-ply player that counts cards. Pure.

For every legal move it adds what the move takes now and subtracts what the next player can
expect to take from the table it leaves. The next player's hand is unknown, but the cards it may
hold are not: every card that is neither in our hand, on the table nor in this round's plays is in
another hand or in the deck, so the chance that the next player holds a card of each value
follows from counting them. That is what makes it avoid leaving 5-14 on the table (a sweep for
one card), keep the 7 of oros out of reach, prefer sweeps and trail safely.

One copy of the logic serves two players: the SDK's example bot (``bots_sdk.examples.expert``,
on the ``BotState`` of a move request) and the rating baseline (``games.ratings.baseline``,
``expert_move`` on the engine's own ``Game``, no request built or parsed). Both read a
``Position``: what one seat may know, which a ``GameView`` and a move request both carry.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from math import comb
from typing import Protocol

from games.engine import ALL_CARDS, Card, Game, Move, Ruleset
from games.engine.views import LuckyDeal, Play

HAND_SIZE = 3


class SeatFacts(Protocol):
    """A seat's public facts, as ``SeatPublic`` and the wire's ``SeatInfo`` carry them."""

    @property
    def seat(self) -> int: ...
    @property
    def team(self) -> int: ...
    @property
    def hand_size(self) -> int: ...


class Position(Protocol):
    """What the expert reads of a position: one seat's view (``GameView``, ``MoveRequest``)."""

    @property
    def seat(self) -> int: ...
    @property
    def team(self) -> int: ...
    @property
    def hand(self) -> Sequence[Card]: ...
    @property
    def table(self) -> Sequence[Card]: ...
    @property
    def deck_remaining(self) -> int: ...
    @property
    def seats(self) -> Sequence[SeatFacts]: ...
    @property
    def history(self) -> Sequence[Play]: ...
    @property
    def legal_moves(self) -> Sequence[Move]: ...
    @property
    def lucky_deal(self) -> LuckyDeal | None: ...


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


DEFAULT_WEIGHTS = Weights()


def card_points(card: Card, weights: Weights) -> float:
    points = weights.card
    if card.suit == "o":
        points += weights.oros
    if card.value == 7:
        points += weights.seven
        if card.suit == "o":
            points += weights.seven_of_oros
    return points


def best_takes(table: Sequence[Card], weights: Weights) -> dict[int, float]:
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


def chance_of_value(unseen: Sequence[Card], hand_size: int) -> dict[int, float]:
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


def seen_cards(state: Position) -> frozenset[Card]:
    """Cards known to be out of the unseen pool: own hand, the table, this round's plays and
    the cards the dealer took in the round's lucky deal."""
    seen = set(state.hand) | set(state.table)
    for play in state.history:
        seen.add(play.card)
        seen.update(play.capture)
    if state.lucky_deal is not None:
        seen.update(state.lucky_deal.cards)
    return frozenset(seen)


def unseen_cards(state: Position) -> list[Card]:
    """Cards that may still be in another hand or in the deck, in the engine's card order."""
    seen = seen_cards(state)
    return [card for card in ALL_CARDS if card not in seen]


def _last_capturer(state: Position) -> int | None:
    for play in reversed(state.history):
        if play.capture:
            return play.seat
    # A lucky deal is the round's first capture: the dealer took the table.
    return state.lucky_deal.seat if state.lucky_deal is not None else None


def score_move(state: Position, move: Move, weights: Weights, chances: dict[int, float]) -> float:
    """Points this move gains now minus what it hands the next player (or the round's leftovers)."""
    taken = (move.card, *move.capture) if move.capture else ()
    gain = _sum_points(taken, weights)
    if taken and len(move.capture) == len(state.table):
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


def next_hand_size(state: Position) -> int:
    """Cards the next player will hold on its turn (a fresh deal when every hand is empty)."""
    seats = state.seats
    next_seat = seats[(state.seat + 1) % max(len(seats), 1)] if seats else None
    size = next_seat.hand_size if next_seat else 0
    if size == 0 and state.deck_remaining > 0:
        return HAND_SIZE
    return size


def best_move(state: Position, weights: Weights = DEFAULT_WEIGHTS) -> Move:
    """The expert's move: the legal move scoring most (``score_move``), the first of equals."""
    moves = state.legal_moves
    if len(moves) == 1:
        return moves[0]
    chances = chance_of_value(unseen_cards(state), next_hand_size(state))
    return max(moves, key=lambda move: score_move(state, move, weights, chances))


def expert_move(game: Game, weights: Weights = DEFAULT_WEIGHTS) -> Move:
    """The expert's move for the seat to play in ``game``, from that seat's view only."""
    seat = game.current_seat
    if seat is None:
        raise ValueError("the game is over: no seat to play")
    return best_move(game.view(seat), weights)


def expert_totals(ruleset: Ruleset, seed: int) -> list[int]:
    """The game points per team when the expert plays every seat of deal ``seed``."""
    game = Game.new(ruleset, seed)
    while not game.is_over:
        game.apply(expert_move(game))
    return list(game.result.totals)
