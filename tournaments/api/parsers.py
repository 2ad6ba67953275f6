"""The API's JSON parser: orjson, a nesting limit, and errors in our own words.

Python's ``json`` module recurses once per nesting level, so a body of a thousand ``[`` raised
``RecursionError`` (a 500) before any view ran; orjson does not recurse that way, and what it
parses is then refused when it nests deeper than any of our bodies ever needs
(``MAX_JSON_DEPTH``). Syntax errors say where the body went wrong, never the library's message.
How large a body may be is Django's ``DATA_UPLOAD_MAX_MEMORY_SIZE``: DRF reads the body through
``request.body``, which refuses a larger one (a 413, see ``tournaments.api.errors``).
"""

from __future__ import annotations

from typing import IO, Any

import orjson
from rest_framework import parsers
from rest_framework.exceptions import ParseError

from tournaments import messages

# Our deepest body (a league's ruleset options) nests three levels; 32 leaves room to grow.
MAX_JSON_DEPTH = 32
# What orjson says past its own limit (1,024 levels), which it checks before ours can.
ORJSON_TOO_DEEP = "depth limit exceeded"


def json_depth_exceeds(data: Any, limit: int) -> bool:
    """True when ``data`` nests lists and objects more than ``limit`` levels deep.

    Iterative, so a hostile body cannot exhaust the stack here either.
    """
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


class JSONParser(parsers.JSONParser):
    """``application/json`` bodies, parsed by orjson and refused past ``MAX_JSON_DEPTH`` levels."""

    def parse(
        self, stream: IO[bytes], media_type: str | None = None, parser_context: dict | None = None
    ) -> Any:
        raw = stream.read()
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as error:
            if error.msg == ORJSON_TOO_DEEP:
                raise ParseError(messages.JSON_TOO_DEEP.format(depth=MAX_JSON_DEPTH)) from None
            where = {"line": error.lineno, "column": error.colno}
            raise ParseError(messages.JSON_INVALID.format(**where)) from None
        if json_depth_exceeds(data, MAX_JSON_DEPTH):
            raise ParseError(messages.JSON_TOO_DEEP.format(depth=MAX_JSON_DEPTH))
        return data
