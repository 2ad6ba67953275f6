"""Compressed JSON as game logs are stored: gzip, so a stored log can be served as it is.

``pack`` writes gzip with no timestamp in its header (the same value packs to the same bytes),
by libdeflate (``deflate``), which packs a log in some two thirds of zlib's time for the same
bytes and the diagnostics in half of it; ``unpack`` reads any gzip back. ``public_meta`` turns a
game's stored diagnostics into the per-play latency and faults anyone may see, one list per round
of the log.

Each request body sent is kept whole for its bot's owner, but stored without what is kept
elsewhere: its ``history`` is the plays of its round so far, which the log holds, and its
``game`` block is the same for every call of a game. ``requests_stored`` leaves those out
(``null`` keeps their place in the body) and ``requests_restored`` puts them back, byte for
byte the values that were sent (``tests/leagues/test_game_diagnostics.py`` compares every
request with what the bot received).
"""

from __future__ import annotations

import gzip
from typing import Any

import deflate
import orjson

# libdeflate's levels (docs/benchmarks-journal.md, "Storing a game (2)"): a log (~20 KB of JSON)
# is packed once and served many times, so it gets the smallest form worth its CPU (level 8, the
# bytes of zlib's 9 in 0.35 ms instead of 0.54); diagnostics (~130 KB of JSON for a two-player
# game with its requests) are packed by the match worker once per game, at the bytes of zlib's 6.
LEVEL_LOG = 8
LEVEL_DIAGNOSTICS = 6
PUBLIC_KEYS = ("seat", "latency_ms", "fault", "detail")


def pack(value: Any, *, level: int = 6) -> bytes:
    """``value`` as gzip-compressed JSON (libdeflate writes no timestamp)."""
    return bytes(deflate.gzip_compress(orjson.dumps(value), level))


def unpack(data: bytes | memoryview) -> Any:
    """The JSON value of ``pack``'s bytes (PostgreSQL hands binary columns back as memoryview)."""
    return orjson.loads(gzip.decompress(bytes(data)))


_EMPTY_LIST = pack([])


def empty_list() -> bytes:
    """``pack([])``: a callable default, so that migrations name it instead of freezing bytes
    that depend on the compressor installed. Packed once: every new ``GameLog`` asks for it."""
    return _EMPTY_LIST


def public_meta(diagnostics: list[dict[str, Any]], *, rounds: int) -> list[list[dict[str, Any]]]:
    """``meta[r][p]`` for the play ``p`` of round ``r``: seat, latency and fault, nothing private.

    The call on which a seat forfeited made no play (its ``move`` is null), so it has no row.
    """
    meta: list[list[dict[str, Any]]] = [[] for _ in range(rounds)]
    for row in diagnostics:
        if row["move"] is None:
            continue
        meta[row["round"] - 1].append({key: row.get(key) for key in PUBLIC_KEYS})
    return meta


def requests_stored(diagnostics: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The diagnostics as stored: each request's ``history`` left to the log, and its ``game``
    (the same for every call of a game) kept only where it differs from the previous one's."""
    stored, game = [], None
    for row in diagnostics:
        request = row.get("request")
        if request:
            same = request.get("game") == game
            game = request.get("game")
            request = {**request, "history": None, "game": None if same else game}
            row = {**row, "request": request}
        stored.append(row)
    return stored


def requests_restored(
    diagnostics: list[dict[str, Any]], document: dict[str, Any]
) -> list[dict[str, Any]]:
    """The stored diagnostics with each request whole again: its ``history`` from the log's
    plays of its round, its ``game`` from the last request that kept one."""
    rounds = document.get("rounds") or []
    restored, game = [], None
    for row in diagnostics:
        request = row.get("request")
        if request:
            game = request["game"] if request.get("game") is not None else game
            history = request.get("history")
            if history is None and row["round"] <= len(rounds):
                history = rounds[row["round"] - 1]["plays"][: row["play"] - 1]
            row = {**row, "request": {**request, "game": game, "history": history}}
        restored.append(row)
    return restored
