"""A one-ply player that counts cards.

For every legal move it adds what the move takes now and subtracts what the next player can
expect to take from the table it leaves. The next player's hand is unknown, but the cards it may
hold are not: every card that is neither in our hand, on the table nor in this round's plays is in
another hand or in the deck, so the chance that the next player holds a card of each value
follows from counting them. That is what makes it avoid leaving 5-14 on the table (a sweep for
one card), keep the 7 of oros out of reach, prefer sweeps and trail safely.

The scoring lives in ``games.expert``, shared with the arena's rating baseline, which plays this
same bot in-process on every rated deal: what is tuned here moves the baseline too.
"""

from __future__ import annotations

from collections.abc import Callable

from games.engine import Move
from games.expert import (
    HAND_SIZE,
    Weights,
    best_move,
    best_takes,
    card_points,
    chance_of_value,
    expected_take,
    next_hand_size,
    score_move,
)

from ..state import BotState

# What `GET /` says of these bots (see `Bot.author`).
__author__ = "Escoba Arena examples"

__all__ = [
    "HAND_SIZE",
    "Weights",
    "best_takes",
    "card_points",
    "chance_of_value",
    "choose",
    "expected_take",
    "make_expert",
    "next_hand_size",
    "score_move",
]


def make_expert(weights: Weights | None = None, name: str = "expert") -> Callable[[BotState], Move]:
    """An expert bot with its own weights."""
    weights = weights or Weights()

    def choose(state: BotState) -> Move:
        return best_move(state, weights)

    choose.__name__ = name
    return choose


choose = make_expert()
