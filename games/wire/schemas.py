"""The `escoba/1` JSON Schemas, compiled once by `fastjsonschema`, and errors in our own words.

The schemas below are the single source of truth for the wire format: the parsers check bodies
against them, and `docs/schemas/*.json` are these dicts written out (a test keeps them in step).
`fastjsonschema` turns each into Python code at import, so checking a body costs about what
hand-written checks would; its errors are translated here into one short reason naming the
field (`capture[1]: expected string, got boolean`), the text bots see in faults and 400s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import fastjsonschema

from ..engine import ALL_CARDS

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
    "properties": {
        "card": _CARD,
        "capture": {**_CARDS, "type": ["array", "null"]},
        # Private to the bot's owner; longer than DEBUG_MAX_BYTES is cut, never a fault.
        "debug": {"type": ["string", "null"]},
    },
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
}, cards=True)  # fmt: skip

MOVE_REPLY_SCHEMA = _schema(
    "move-reply", "escoba/1 move reply (answer to POST U/move)", _MOVE_REPLY, cards=True
)

INFO_REPLY_SCHEMA = _schema("info-reply", "escoba/1 info reply (answer to GET U)", {
    "type": "object",
    "required": ["protocol", "name", "author", "version"],
    "properties": {
        "protocol": _PROTOCOL_FIELD, "name": _TEXT, "author": _TEXT, "version": _TEXT,
    },
})  # fmt: skip

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
})  # fmt: skip

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
})  # fmt: skip

SCHEMAS: dict[str, dict[str, Any]] = {
    "move-request": MOVE_REQUEST_SCHEMA,
    "move-reply": MOVE_REPLY_SCHEMA,
    "info-reply": INFO_REPLY_SCHEMA,
    "start-notice": START_NOTICE_SCHEMA,
    "end-notice": END_NOTICE_SCHEMA,
}


# --- validation ------------------------------------------------------------------------------

Validator = Callable[[Any], Any]
Invalid = fastjsonschema.JsonSchemaValueException


def _no_remote(uri: str) -> Any:
    raise fastjsonschema.JsonSchemaDefinitionException(f"remote schema {uri} not allowed")


# Exactly the card names the `card` definition's enum allows, checked as a custom format: one
# set lookup per card, where fastjsonschema turns a 40-name enum into 40 comparisons.
_CARD_FORMAT = {"card": frozenset(_CARD_DEF["enum"]).__contains__}
_CARD_CHECK = {"type": "string", "format": "card"}


def _for_compiler(node: Any) -> Any:
    """`node` as fastjsonschema compiles it fastest, accepting exactly the same values: each
    `{"$ref": "#/$defs/card"}` inlined as `_CARD_CHECK` (a referenced definition becomes a
    function called per card, with its field name formatted on every call), `$defs` and `$id`
    left out (so no reference can point outside the schema)."""
    if node == _CARD:
        return _CARD_CHECK
    if isinstance(node, dict):
        return {k: _for_compiler(v) for k, v in node.items() if k not in ("$defs", "$id")}
    if isinstance(node, list):
        return [_for_compiler(item) for item in node]
    return node


def compile_schema(schema: Mapping[str, Any]) -> Validator:
    """A fast validator for `schema`; it raises `Invalid` (fastjsonschema's error) at the first
    place the value breaks it. Any reference left is refused rather than fetched over the
    network."""
    return fastjsonschema.compile(
        _for_compiler(schema),
        handlers={"http": _no_remote, "https": _no_remote},
        formats=_CARD_FORMAT,
    )


# Compiled at import, once per process: bots check a request on every move.
_COMPILED: dict[int, Validator] = {
    id(schema): compile_schema(schema) for schema in SCHEMAS.values()
}

validate_move_request = _COMPILED[id(MOVE_REQUEST_SCHEMA)]
validate_move_reply = _COMPILED[id(MOVE_REPLY_SCHEMA)]
validate_info_reply = _COMPILED[id(INFO_REPLY_SCHEMA)]


def check(value: Any, schema: Mapping[str, Any]) -> None:
    """Raise `ProtocolError` naming the first place where `value` breaks `schema`.

    Unknown properties are allowed everywhere, so that a later protocol version can add fields.
    """
    validate = _COMPILED.get(id(schema))
    if validate is None:
        validate = _COMPILED[id(schema)] = compile_schema(schema)
    try:
        validate(value)
    except Invalid as error:
        raise protocol_error(error) from None


def protocol_error(error: Invalid) -> ProtocolError:
    """fastjsonschema's error as ours: `<field>: <reason>`, the field `body` for the whole body."""
    path = error.name.removeprefix("data").removeprefix(".") or "body"
    return ProtocolError(f"{path}: {_reason(error)}")


def _reason(error: Invalid) -> str:
    rule, limit, value = error.rule, error.rule_definition, error.value
    if rule == "type":
        names = [limit] if isinstance(limit, str) else list(limit)
        return f"expected {' or '.join(names)}, got {kind(value)}"
    if rule == "required":
        missing = next((key for key in limit if key not in value), limit[0])
        return f"missing {missing!r}"
    if rule == "const":
        return f"expected {limit!r}, got {short(value)}"
    if rule in ("enum", "format"):
        return f"{short(value)} is not allowed here"
    if rule == "minimum":
        return f"{value} is below {limit}"
    if rule == "maxLength":
        return f"longer than {limit} characters"
    if rule == "maxItems":
        return f"more than {limit} items"
    return f"breaks the {rule} rule"


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


def kind(value: Any) -> str:
    """The JSON type of a decoded value, as an error message names it."""
    for name, python_types in _JSON_TYPES.items():
        if type(value) in python_types:
            return name
    return type(value).__name__


def short(value: Any) -> str:
    """`repr(value)`, cut to 40 characters: bots choose what they send us."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
