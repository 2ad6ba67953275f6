"""What a bot sees when it is asked for a move: `BotState`.

The wire format owns the parsing (`games.wire.parse_move_request` checks the body against the
`escoba/1` JSON Schema and builds engine `Card`s, `Move`s and `Play`s), so the SDK and the arena
can never disagree about a field. `BotState` adds what a bot author keeps asking of a position:
the captures and trails, whether a move sweeps, which cards are still unseen, who plays next.

What a request tells a bot and no more: its own hand and what every seat sees; `match_id` is the
game's own id, and in rated play the seats' names are `seat 0`, `seat 1`, ... until the end
notice (docs/bot-protocol.md, "What a bot sees, and what stays hidden").
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from games.engine import Card, Move
from games.expert import seen_cards, unseen_cards
from games.wire import MoveRequest, SeatInfo, parse_move_request


@dataclass(frozen=True)
class BotState(MoveRequest):
    """A parsed move request plus helpers; `raw` is the decoded JSON body as received.

    `received_at` is the `time.perf_counter()` at which the request reached this process: the
    SDK server stamps it as the request line arrives, so a bot that budgets its time counts
    what passed before `choose` was called too (waiting for a busy core, reading and parsing
    the body). A state built any other way is stamped when it is built.
    """

    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    received_at: float = field(default_factory=time.perf_counter, repr=False, compare=False)

    @classmethod
    def from_request(cls, body: Any, received_at: float | None = None) -> BotState:
        """Parse a decoded move request body; `games.wire.ProtocolError` names a wrong field."""
        request = parse_move_request(body)
        values = {item.name: getattr(request, item.name) for item in fields(MoveRequest)}
        if received_at is None:
            return cls(**values, raw=body)
        return cls(**values, raw=body, received_at=received_at)

    @property
    def options(self) -> Mapping[str, Any]:
        """The ruleset's option values (target, players, teams, capture, sevens, ...)."""
        return self.ruleset.get("options", {})

    @property
    def players(self) -> int:
        return len(self.seats)

    @property
    def next_seat(self) -> int:
        """The seat that plays after this one: turns go up the seat numbers and wrap around."""
        return (self.seat + 1) % max(self.players, 1)

    def seat_info(self, seat: int) -> SeatInfo:
        """The public facts about `seat` (hand size, cards captured, escobas)."""
        for info in self.seats:
            if info.seat == seat:
                return info
        raise KeyError(seat)

    @property
    def captures(self) -> tuple[Move, ...]:
        return tuple(move for move in self.legal_moves if move.capture)

    @property
    def trails(self) -> tuple[Move, ...]:
        return tuple(move for move in self.legal_moves if not move.capture)

    def is_sweep(self, move: Move) -> bool:
        """True when `move` takes every card on the table (an escoba)."""
        return bool(move.capture) and len(move.capture) == len(self.table)

    def table_after(self, move: Move) -> tuple[Card, ...]:
        """The table once `move` is played: captured cards gone, or the trailed card added."""
        if move.capture:
            return tuple(card for card in self.table if card not in move.capture)
        return (*self.table, move.card)

    def seen_cards(self) -> frozenset[Card]:
        """Cards known to be out of the unseen pool: own hand, the table, this round's plays
        and the cards the dealer took in the round's lucky deal."""
        return seen_cards(self)

    def unseen_cards(self) -> list[Card]:
        """Cards that may still be in another hand or in the deck, in the engine's card order."""
        return unseen_cards(self)
