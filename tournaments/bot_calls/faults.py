"""Bot faults: their kinds and how users read them. The fault policy (what replaces a faulting
move, when a seat forfeits) is `games.faults`, shared with the SDK's local league.

A fault is anything a bot does wrong on a call: it never raises, it is recorded.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from games.faults import DEFAULT_MAX_FAULTS, fallback_move, forfeits

__all__ = [
    "DEFAULT_MAX_FAULTS",
    "FAULT_MESSAGES",
    "Fault",
    "FaultKind",
    "fallback_move",
    "forfeits",
]


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
