"""The `escoba/1` wire format: the bodies we send to bots and the replies we accept from them.

This module is pure (standard library and the engine only, relative import) because the bots SDK
ships this very file. The JSON Schemas below are the single source of truth: the parsers check
replies against them with a small validator that understands exactly the keywords used here, and
`docs/schemas/*.json` are these dicts written out (a test keeps them in step).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .engine import ALL_CARDS, Card, EscobaError, Game, GameView, Move, Play, Result, Ruleset

PROTOCOL = "escoba/1"

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_BASE = "https://escoba-arena.invalid/schemas/"

# Longest text field we accept from a bot; longer is a schema fault, not a truncation.
MAX_TEXT = 200


class ProtocolError(ValueError):
    """A body that breaks `escoba/1`; `str(error)` is a short reason naming the field."""


class WrongProtocolError(ProtocolError):
    """The bot answered, but speaks another protocol (or no protocol field at all)."""


# --- schemas ---------------------------------------------------------------------------------

_CARD_DEF = {"type": "string", "enum": [str(card) for card in ALL_CARDS]}
_CARD = {"$ref": "#/$defs/card"}
_CARDS = {"type": "array", "items": _CARD, "maxItems": len(ALL_CARDS)}
_COUNT = {"type": "integer", "minimum": 0}
_TEXT = {"type": "string", "maxLength": MAX_TEXT}
_MOVE = {
    "type": "object",
    "required": ["card", "capture"],
    "properties": {"card": _CARD, "capture": _CARDS},
}
# Replies may leave `capture` out or send null (as Go does for an empty slice): both are a trail.
_MOVE_REPLY = {
    "type": "object",
    "required": ["card"],
    "properties": {"card": _CARD, "capture": {**_CARDS, "type": ["array", "null"]}},
}
_RULESET = {
    "type": "object",
    "required": ["name", "version", "options"],
    "properties": {"name": {"type": "string"}, "version": _COUNT, "options": {"type": "object"}},
}
_GAME = {
    "type": "object",
    "required": ["id", "match_id", "ruleset", "timeout_ms"],
    "properties": {
        "id": {"type": "string"},
        "match_id": {"type": "string"},
        "ruleset": _RULESET,
        "timeout_ms": _COUNT,
    },
}
_SEAT_NAME = {
    "type": "object",
    "required": ["seat", "team", "name"],
    "properties": {"seat": _COUNT, "team": _COUNT, "name": {"type": "string"}},
}
_YOU = {
    "type": "object",
    "required": ["seat", "team"],
    "properties": {"seat": _COUNT, "team": _COUNT},
}
_PROTOCOL_FIELD = {"type": "string", "const": PROTOCOL}
# The round's lucky deal, as `escoba-log/1` records it: the dealer took the whole first table.
_LUCKY_DEAL = {
    "type": ["object", "null"],
    "required": ["seat", "cards", "escobas"],
    "properties": {"seat": _COUNT, "cards": _CARDS, "escobas": {"type": "integer", "minimum": 1}},
}


def _schema(name: str, title: str, body: dict[str, Any], cards: bool = False) -> dict[str, Any]:
    schema = {"$schema": SCHEMA_DIALECT, "$id": f"{SCHEMA_BASE}{name}.json", "title": title}
    schema.update(body)
    if cards:
        schema["$defs"] = {"card": _CARD_DEF}
    return schema


MOVE_REQUEST_SCHEMA = _schema("move-request", "escoba/1 move request (POST U/move)", {
    "type": "object",
    "required": [
        "protocol", "game", "round", "you", "table", "dealer", "deck_remaining", "seats",
        "scores", "history", "legal_moves", "latency_ms", "time_bank_ms",
    ],
    "properties": {
        "protocol": _PROTOCOL_FIELD,
        "game": _GAME,
        "round": {"type": "integer", "minimum": 1},
        "you": {
            "type": "object",
            "required": ["seat", "team", "hand"],
            "properties": {"seat": _COUNT, "team": _COUNT, "hand": _CARDS},
        },
        "table": _CARDS,
        "dealer": _COUNT,
        "deck_remaining": _COUNT,
        "seats": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["seat", "team", "name", "hand_size", "captured", "escobas"],
                "properties": {
                    "seat": _COUNT, "team": _COUNT, "name": {"type": "string"},
                    "hand_size": _COUNT, "captured": _COUNT, "escobas": _COUNT,
                },
            },
        },
        "scores": {"type": "array", "items": {"type": "integer"}},
        "history": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["seat", "card", "capture", "escoba"],
                "properties": {
                    "seat": _COUNT, "card": _CARD, "capture": _CARDS,
                    "escoba": {"type": "boolean"},
                },
            },
        },
        "legal_moves": {"type": "array", "items": _MOVE},
        "latency_ms": {"type": ["number", "null"], "minimum": 0},
        "time_bank_ms": _COUNT,
        "lucky_deal": _LUCKY_DEAL,
    },
}, cards=True)

MOVE_REPLY_SCHEMA = _schema(
    "move-reply", "escoba/1 move reply (answer to POST U/move)", _MOVE_REPLY, cards=True
)

INFO_REPLY_SCHEMA = _schema("info-reply", "escoba/1 info reply (answer to GET U)", {
    "type": "object",
    "required": ["protocol", "name", "author", "version"],
    "properties": {
        "protocol": _PROTOCOL_FIELD, "name": _TEXT, "author": _TEXT, "version": _TEXT,
    },
})

_NOTICE_PROPERTIES = {
    "protocol": _PROTOCOL_FIELD,
    "game": _GAME,
    "you": _YOU,
    "seats": {"type": "array", "items": _SEAT_NAME},
}

START_NOTICE_SCHEMA = _schema("start-notice", "escoba/1 start notice (POST U/start)", {
    "type": "object",
    "required": ["protocol", "game", "you", "seats"],
    "properties": _NOTICE_PROPERTIES,
})

END_NOTICE_SCHEMA = _schema("end-notice", "escoba/1 end notice (POST U/end)", {
    "type": "object",
    "required": ["protocol", "game", "you", "seats", "result", "log_url"],
    "properties": {
        **_NOTICE_PROPERTIES,
        "result": {
            "type": "object",
            "required": ["winner", "totals", "reason"],
            "properties": {
                "winner": {"type": ["integer", "null"], "minimum": 0},
                "totals": {"type": "array", "items": {"type": "integer"}},
                "reason": {"type": "string"},
            },
        },
        "log_url": {"type": ["string", "null"]},
    },
})

SCHEMAS: dict[str, dict[str, Any]] = {
    "move-request": MOVE_REQUEST_SCHEMA,
    "move-reply": MOVE_REPLY_SCHEMA,
    "info-reply": INFO_REPLY_SCHEMA,
    "start-notice": START_NOTICE_SCHEMA,
    "end-notice": END_NOTICE_SCHEMA,
}


# --- a validator for exactly the keywords above ----------------------------------------------
#
# Each schema is compiled once into nested closures, because bots parse a request on every move
# and walking the schema dicts each time costs more than the HTTP round trip.

Validator = Callable[[Any], None]

# Python types of decoded JSON values; bool is an int in Python, never in JSON.
_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


class _Invalid(Exception):
    """Raised inside compiled validators; the path is filled in on the way out."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.path: list[str | int] = []


def check(value: Any, schema: Mapping[str, Any]) -> None:
    """Raise `ProtocolError` naming the first place where `value` breaks `schema`.

    Unknown properties are allowed everywhere, so that a later protocol version can add fields.
    """
    validate = _COMPILED.get(id(schema)) or _compile(schema, schema)
    try:
        validate(value)
    except _Invalid as error:
        raise ProtocolError(f"{_path(error.path)}: {error.message}") from None


def _path(parts: list[str | int]) -> str:
    text = "body"
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text = part if text == "body" else f"{text}.{part}"
    return text


def _compile(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Validator:
    if "$ref" in schema:
        schema = root["$defs"][schema["$ref"].removeprefix("#/$defs/")]
    checks: list[Validator] = []
    if "type" in schema:
        checks.append(_type_check(schema["type"]))
    if "const" in schema:
        checks.append(_const_check(schema["const"]))
    if "enum" in schema:
        checks.append(_enum_check(frozenset(schema["enum"])))
    if "minimum" in schema:
        checks.append(_minimum_check(schema["minimum"]))
    if "maxLength" in schema:
        checks.append(_max_length_check(schema["maxLength"]))
    if "maxItems" in schema or "items" in schema:
        items = _compile(schema["items"], root) if "items" in schema else None
        checks.append(_array_check(schema.get("maxItems"), items))
    if "required" in schema or "properties" in schema:
        properties = [
            (key, _compile(sub, root)) for key, sub in schema.get("properties", {}).items()
        ]
        checks.append(_object_check(tuple(schema.get("required", ())), properties))
    if len(checks) == 1:
        return checks[0]

    def validate(value: Any) -> None:
        for check_one in checks:
            check_one(value)

    return validate


def _type_check(types: str | list[str]) -> Validator:
    names = [types] if isinstance(types, str) else list(types)
    allowed = frozenset(python for name in names for python in _JSON_TYPES[name])
    expected = " or ".join(names)

    def validate(value: Any) -> None:
        if type(value) not in allowed:
            raise _Invalid(f"expected {expected}, got {_kind(value)}")

    return validate


def _const_check(const: Any) -> Validator:
    def validate(value: Any) -> None:
        if value != const:
            raise _Invalid(f"expected {const!r}, got {_short(value)}")

    return validate


def _enum_check(allowed: frozenset) -> Validator:
    def validate(value: Any) -> None:
        if type(value) not in (str, int, float, bool, type(None)) or value not in allowed:
            raise _Invalid(f"{_short(value)} is not allowed here")

    return validate


def _minimum_check(minimum: float) -> Validator:
    def validate(value: Any) -> None:
        if type(value) in (int, float) and value < minimum:
            raise _Invalid(f"{value} is below {minimum}")

    return validate


def _max_length_check(limit: int) -> Validator:
    def validate(value: Any) -> None:
        if type(value) is str and len(value) > limit:
            raise _Invalid(f"longer than {limit} characters")

    return validate


def _array_check(max_items: int | None, items: Validator | None) -> Validator:
    def validate(value: Any) -> None:
        if type(value) is not list:
            return
        if max_items is not None and len(value) > max_items:
            raise _Invalid(f"more than {max_items} items")
        if items is not None:
            for index, item in enumerate(value):
                try:
                    items(item)
                except _Invalid as error:
                    error.path.insert(0, index)
                    raise

    return validate


def _object_check(required: tuple[str, ...], properties: list[tuple[str, Validator]]) -> Validator:
    def validate(value: Any) -> None:
        if type(value) is not dict:
            return
        for key in required:
            if key not in value:
                raise _Invalid(f"missing {key!r}")
        for key, check_one in properties:
            if key in value:
                try:
                    check_one(value[key])
                except _Invalid as error:
                    error.path.insert(0, key)
                    raise

    return validate


def _kind(value: Any) -> str:
    for name, python_types in _JSON_TYPES.items():
        if type(value) in python_types:
            return name
    return type(value).__name__


_COMPILED: dict[int, Validator] = {
    id(schema): _compile(schema, schema) for schema in SCHEMAS.values()
}


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# --- what we send ----------------------------------------------------------------------------


# Card names by card: cards are interned, so this is a lookup by identity, done in C by `map`.
_NAMES: dict[Card, str] = {card: str(card) for card in ALL_CARDS}


def _cards(cards: Sequence[Card]) -> list[str]:
    return list(map(_NAMES.__getitem__, cards))


def _game(ruleset: Ruleset, game_id: str | int, match_id: str | int, timeout_ms: int) -> dict:
    return {
        "id": str(game_id),
        "match_id": str(match_id),
        "ruleset": ruleset.to_dict(),
        "timeout_ms": int(timeout_ms),
    }


def wire_play(play: Play) -> dict[str, Any]:
    """One play of the round's history as the move request carries it."""
    return {
        "seat": play.seat,
        "card": _NAMES[play.card],
        "capture": _cards(play.capture),
        "escoba": bool(play.escoba),
    }


class WireHistory:
    """The wire form of one game's current round, for a caller sending many move requests.

    A round's history only grows, so each play is encoded once, when it first appears, instead
    of once for every later move of the round (a two-player round has 36 plays). Use one per
    game: `move_request(view, ..., history=wire_history.of(view))`.
    """

    def __init__(self) -> None:
        self._round = 0
        self._plays: list[dict[str, Any]] = []

    def of(self, view: GameView) -> list[dict[str, Any]]:
        """`[wire_play(play) for play in view.history]`, encoding only the plays not seen yet.

        The dicts are shared between the lists returned for one round: read them, do not
        change them.
        """
        plays = self._plays
        if view.round != self._round or len(view.history) < len(plays):
            self._round, plays = view.round, []
            self._plays = plays
        plays.extend(map(wire_play, view.history[len(plays):]))
        return list(plays)


def round_lucky_deal(game: Game) -> dict[str, Any] | None:
    """The lucky deal of the round being played ({seat, cards, escobas}), or None.

    The cards the dealer took in a lucky deal are public but are not plays, so a seat's view
    does not show them; they come from the game's log, which costs about a tenth of a
    millisecond and grows with the game: call this once per round, not once per move. A round
    in which nobody has taken a card before its first play had no lucky deal, which the view
    tells without building the log.
    """
    if game.is_over:
        return None
    assert game.current_seat is not None
    view = game.view(game.current_seat)
    if not view.history and not any(seat.captured for seat in view.seats):
        return None
    return game.log()["rounds"][-1]["lucky_deal"]


def move_request(
    view: GameView,
    *,
    game_id: str | int,
    match_id: str | int,
    timeout_ms: int,
    seat_names: Sequence[str],
    latency_ms: float | None,
    time_bank_ms: int,
    lucky_deal: Mapping[str, Any] | None = None,
    history: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The body of `POST U/move` for the seat that `view` belongs to.

    Everything comes from the seat's own view, so the body cannot leak another seat's hand.
    `lucky_deal` is `round_lucky_deal(game)` for the view's round (None when there was none).
    `history` is the view's history already in wire form (`WireHistory.of(view)`), for callers
    that send every move of a round; without it the history is encoded here.
    """
    return {
        "protocol": PROTOCOL,
        "game": _game(view.ruleset, game_id, match_id, timeout_ms),
        "round": view.round,
        "you": {"seat": view.seat, "team": view.team, "hand": _cards(view.hand)},
        "table": _cards(view.table),
        "dealer": view.dealer,
        "deck_remaining": view.deck_remaining,
        "seats": [
            {
                "seat": seat.seat,
                "team": seat.team,
                "name": seat_names[seat.seat],
                "hand_size": seat.hand_size,
                "captured": seat.captured,
                "escobas": seat.escobas,
            }
            for seat in view.seats
        ],
        "scores": list(view.scores),
        "history": list(map(wire_play, view.history)) if history is None else history,
        "legal_moves": [move.to_wire() for move in view.legal_moves],
        "latency_ms": None if latency_ms is None else round(float(latency_ms), 2),
        "time_bank_ms": int(time_bank_ms),
        "lucky_deal": None if lucky_deal is None else {
            "seat": lucky_deal["seat"],
            "cards": [str(card) for card in lucky_deal["cards"]],
            "escobas": lucky_deal["escobas"],
        },
    }


def start_notice(
    *,
    ruleset: Ruleset,
    game_id: str | int,
    match_id: str | int,
    timeout_ms: int,
    seat: int,
    seat_names: Sequence[str],
) -> dict[str, Any]:
    """The body of `POST U/start`, sent to each seat before its game's first move."""
    return {
        "protocol": PROTOCOL,
        "game": _game(ruleset, game_id, match_id, timeout_ms),
        "you": {"seat": seat, "team": ruleset.team_of(seat)},
        "seats": [
            {"seat": index, "team": ruleset.team_of(index), "name": name}
            for index, name in enumerate(seat_names)
        ],
    }


def end_notice(
    *,
    ruleset: Ruleset,
    game_id: str | int,
    match_id: str | int,
    timeout_ms: int,
    seat: int,
    seat_names: Sequence[str],
    result: Result,
    log_url: str | None,
) -> dict[str, Any]:
    """The body of `POST U/end`: the start notice plus the result and where the log lives."""
    notice = start_notice(
        ruleset=ruleset, game_id=game_id, match_id=match_id, timeout_ms=timeout_ms,
        seat=seat, seat_names=seat_names,
    )
    notice["result"] = {
        "winner": result.winner,
        "totals": list(result.totals),
        "reason": result.reason,
    }
    notice["log_url"] = log_url
    return notice


def info_reply(name: str, author: str, version: str) -> dict[str, str]:
    """The body a bot answers to `GET U` with."""
    return {"protocol": PROTOCOL, "name": name, "author": author, "version": version}


# --- what we accept --------------------------------------------------------------------------


@dataclass(frozen=True)
class BotInfo:
    name: str
    author: str
    version: str


def parse_info_reply(obj: Any) -> BotInfo:
    """Check a `GET U` reply; `WrongProtocolError` when it is not `escoba/1`."""
    if not isinstance(obj, dict):
        raise ProtocolError(f"body: expected object, got {_kind(obj)}")
    if obj.get("protocol") != PROTOCOL:
        raise WrongProtocolError(
            f"protocol: expected {PROTOCOL!r}, got {_short(obj.get('protocol'))}"
        )
    check(obj, INFO_REPLY_SCHEMA)
    return BotInfo(name=obj["name"], author=obj["author"], version=obj["version"])


def parse_move_reply(obj: Any) -> Move:
    """Turn a `POST U/move` reply into a `Move`; legality is the engine's business, not ours."""
    check(obj, MOVE_REPLY_SCHEMA)
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
class LuckyDeal:
    """The round began with the table worth 15 or 30: the dealer took it, scoring escobas."""

    seat: int
    cards: tuple[Card, ...]
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
        raise WrongProtocolError(f"protocol: expected {PROTOCOL!r}, got {_short(obj['protocol'])}")
    check(obj, MOVE_REQUEST_SCHEMA)
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
        )
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
