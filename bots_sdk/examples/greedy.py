"""Takes the biggest capture now and never looks ahead: sweeps first, then the most cards, the 7
of oros, sevens and oros. With nothing to take it trails its least useful card."""

from __future__ import annotations

from games.engine import Card, Move

from ..state import BotState

# What `GET /` says of these bots (see `Bot.author`).
__author__ = "Escoba Arena examples"


def card_worth(card: Card) -> int:
    """How much a card helps the round's points: the 7 of oros, then sevens, then oros."""
    return (card.suit == "o") + 2 * (card.value == 7) + 4 * (card.suit == "o" and card.value == 7)


def capture_key(state: BotState, move: Move) -> tuple[int, ...]:
    taken = (move.card, *move.capture)
    return (
        state.is_sweep(move),
        len(taken),
        any(card.value == 7 and card.suit == "o" for card in taken),
        sum(card.value == 7 for card in taken),
        sum(card.suit == "o" for card in taken),
    )


def choose(state: BotState) -> Move:
    if state.captures:
        return max(state.captures, key=lambda move: capture_key(state, move))
    # A low card left alone on the table cannot be swept (it needs a card worth more than 10).
    return min(state.trails, key=lambda move: (card_worth(move.card), move.card.value))
