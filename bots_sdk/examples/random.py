"""Plays a random legal move, seeded from the position so a replayed game replays its moves."""

from __future__ import annotations

import random as _random
from collections.abc import Callable

from games.engine import Move

from ..state import BotState

# What `GET /` says of these bots (see `Bot.author`).
__author__ = "Escoba Arena examples"


def make_random(seed: int | str = 0) -> Callable[[BotState], Move]:
    """A random bot; bots built with different seeds play differently in the same position."""

    def choose(state: BotState) -> Move:
        hand = ",".join(str(card) for card in state.hand)
        key = f"{seed}|{state.game_id}|{state.round}|{state.seat}|{len(state.history)}|{hand}"
        return _random.Random(key).choice(state.legal_moves)

    choose.__name__ = f"random_{seed}" if seed else "random"
    return choose


choose = make_random()
