"""What the wire accepts: bots' replies (checked by the arena) and move requests (checked by bots).

A reply is checked against its schema first, then turned into engine values; whether a move is
legal is the engine's business, not the wire format's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..engine import Card, EscobaError, LuckyDeal, Move, Play
from .schemas import (
    PROTOCOL,
    Invalid,
    ProtocolError,
    WrongProtocolError,
    kind,
    protocol_error,
    short,
    validate_info_reply,
    validate_move_reply,
    validate_move_request,
)


@dataclass(frozen=True)
class BotInfo:
    name: str
    author: str
    version: str


def parse_info_reply(obj: Any) -> BotInfo:
    """Check a `GET U` reply; `WrongProtocolError` when it is not `escoba/1`."""
    if not isinstance(obj, dict):
        raise ProtocolError(f"body: expected object, got {kind(obj)}")
    if obj.get("protocol") != PROTOCOL:
        raise WrongProtocolError(
            f"protocol: expected {PROTOCOL!r}, got {short(obj.get('protocol'))}"
        )
    try:
        validate_info_reply(obj)
    except Invalid as error:
        raise protocol_error(error) from None
    return BotInfo(name=obj["name"], author=obj["author"], version=obj["version"])


DEBUG_MAX_BYTES = 2048


@dataclass(frozen=True)
class Debug:
    """A move reply's private `debug` text, cut to `DEBUG_MAX_BYTES` of UTF-8 when longer."""

    text: str
    truncated: bool = False


def move_reply_debug(obj: Any) -> Debug | None:
    """The `debug` string of a move reply, if it has one, whatever became of its move.

    A debug text never costs the bot its move: one longer than `DEBUG_MAX_BYTES` is cut on a
    character boundary and marked `truncated`. Anything but a string is left out here (the
    schema check of `parse_move_reply` says what is wrong with it).
    """
    text = obj.get("debug") if isinstance(obj, dict) else None
    if not isinstance(text, str):
        return None
    encoded = text.encode("utf-8", "replace")  # a lone surrogate becomes "?"
    if len(encoded) <= DEBUG_MAX_BYTES:
        return Debug(encoded.decode("utf-8"))
    return Debug(encoded[:DEBUG_MAX_BYTES].decode("utf-8", "ignore"), truncated=True)


def parse_move_reply(obj: Any) -> Move:
    """Turn a `POST U/move` reply into a `Move`; legality is the engine's business, not ours."""
    try:
        validate_move_reply(obj)
    except Invalid as error:
        raise protocol_error(error) from None
    capture = obj.get("capture") or []
    if len(set(capture)) != len(capture):
        raise ProtocolError("capture: a card is listed twice")
    try:
        return Move.from_wire({"card": obj["card"], "capture": capture})
    except EscobaError as error:
        raise ProtocolError(f"move: {error}") from error


@dataclass(frozen=True)
class SeatInfo:
    seat: int
    team: int
    name: str
    hand_size: int
    captured: int
    escobas: int


@dataclass(frozen=True)
class MoveRequest:
    """A move request as typed data, for bots (the SDK) and for tests."""

    game_id: str
    match_id: str
    ruleset: dict[str, Any]
    timeout_ms: int
    round: int
    seat: int
    team: int
    hand: tuple[Card, ...]
    table: tuple[Card, ...]
    dealer: int
    deck_remaining: int
    seats: tuple[SeatInfo, ...]
    scores: tuple[int, ...]
    history: tuple[Play, ...]
    legal_moves: tuple[Move, ...]
    latency_ms: float | None
    time_bank_ms: int
    lucky_deal: LuckyDeal | None = None


_SEAT_KEYS = ("seat", "team", "name", "hand_size", "captured", "escobas")


def parse_move_request(obj: Any) -> MoveRequest:
    """Check a `POST U/move` body and return it as typed data; `ProtocolError` otherwise."""
    if isinstance(obj, dict) and "protocol" in obj and obj["protocol"] != PROTOCOL:
        raise WrongProtocolError(f"protocol: expected {PROTOCOL!r}, got {short(obj['protocol'])}")
    try:
        validate_move_request(obj)
    except Invalid as error:
        raise protocol_error(error) from None
    try:
        history = tuple(
            Play(
                seat=play["seat"],
                card=Card.from_str(play["card"]),
                capture=tuple(Card.from_str(card) for card in play["capture"]),
                escoba=play["escoba"],
            )
            for play in obj["history"]
        )
        legal_moves = tuple(Move.from_wire(move) for move in obj["legal_moves"])
        lucky = obj.get("lucky_deal")
        lucky_deal = None if lucky is None else LuckyDeal(
            seat=lucky["seat"],
            cards=tuple(Card.from_str(card) for card in lucky["cards"]),
            escobas=lucky["escobas"],
        )  # fmt: skip
    except EscobaError as error:
        raise ProtocolError(f"body: {error}") from error
    game, you = obj["game"], obj["you"]
    return MoveRequest(
        game_id=game["id"],
        match_id=game["match_id"],
        ruleset=game["ruleset"],
        timeout_ms=game["timeout_ms"],
        round=obj["round"],
        seat=you["seat"],
        team=you["team"],
        hand=tuple(Card.from_str(card) for card in you["hand"]),
        table=tuple(Card.from_str(card) for card in obj["table"]),
        dealer=obj["dealer"],
        deck_remaining=obj["deck_remaining"],
        seats=tuple(SeatInfo(**{key: seat[key] for key in _SEAT_KEYS}) for seat in obj["seats"]),
        scores=tuple(obj["scores"]),
        history=history,
        legal_moves=legal_moves,
        latency_ms=obj["latency_ms"],
        time_bank_ms=obj["time_bank_ms"],
        lucky_deal=lucky_deal,
    )
