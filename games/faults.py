"""Bot faults: their kinds, how users read them, and the fault policy, one copy for the arena's
runner and the SDK's local league and duel (all refereed by `games.referee`).

A fault is anything a bot does wrong on a call: no answer in time, an error, a reply that is not
a move, an illegal move. It never raises; it is recorded. The policy:

- a faulting move is replaced by a fallback legal move: trail the lowest card when trailing is
  legal, otherwise the first legal capture in the engine's order;
- a seat with more than `max_faults` faults in one game forfeits that game.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from .engine import Move

DEFAULT_MAX_FAULTS = 5
# How long a bot has to answer one call (a move, a check's request) unless a league says
# otherwise: the default of leagues, rated play, the protocol check and the SDK's league and duel.
DEFAULT_TIMEOUT_MS = 1000


class FaultKind(StrEnum):
    TIMEOUT = "timeout"
    CONNECT = "connect"
    HTTP_STATUS = "http_status"
    BAD_JSON = "bad_json"
    BAD_SCHEMA = "bad_schema"
    ILLEGAL_MOVE = "illegal_move"
    TOO_LARGE = "too_large"
    REDIRECT = "redirect"
    # The URL or one of its DNS answers is not an address we may call.
    ADDRESS = "address"
    # Only from `GET U`: the bot answered, but not with `escoba/1`.
    WRONG_PROTOCOL = "wrong_protocol"


# What users see (registration errors, bot pages), one sentence start per kind.
FAULT_MESSAGES: dict[FaultKind, str] = {
    FaultKind.TIMEOUT: "The bot did not answer in time",
    FaultKind.CONNECT: "The bot is unreachable",
    FaultKind.HTTP_STATUS: "The bot answered with an HTTP error",
    FaultKind.BAD_JSON: "The bot's answer is not JSON",
    FaultKind.BAD_SCHEMA: "The bot's answer does not follow the escoba/1 protocol",
    FaultKind.ILLEGAL_MOVE: "The bot played an illegal move",
    FaultKind.TOO_LARGE: "The bot's answer is too large",
    FaultKind.REDIRECT: "The bot answered with a redirect, which is not followed",
    FaultKind.ADDRESS: "The bot's address is not allowed",
    FaultKind.WRONG_PROTOCOL: "The bot does not speak escoba/1",
}


@dataclass(frozen=True)
class Fault:
    kind: FaultKind
    detail: str

    @property
    def message(self) -> str:
        """A full sentence for users, e.g. "The bot is unreachable: connection refused"."""
        return f"{FAULT_MESSAGES[self.kind]}: {self.detail}"

    def to_dict(self) -> dict[str, str]:
        return {"kind": str(self.kind), "detail": self.detail}


def fallback_move(legal_moves: Sequence[Move]) -> Move:
    """The move played for a seat whose own move faulted.

    Deterministic and cheap, so a faulting bot gains nothing from it: the lowest card is trailed
    when any trail is legal, otherwise the first legal capture is taken.
    """
    if not legal_moves:
        raise ValueError("no legal moves: it is not this seat's turn")
    trails = [move for move in legal_moves if not move.capture]
    if trails:
        return min(trails, key=lambda move: move.card)
    return legal_moves[0]


def forfeits(fault_count: int, max_faults: int) -> bool:
    """A seat forfeits on its fault number `max_faults + 1`."""
    return fault_count > max_faults
