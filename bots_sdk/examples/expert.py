"""The expert example: a one-ply player that counts cards (``games.expert`` says how it scores
a move: what it takes now, less what the next player can expect to take from the table left).

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
