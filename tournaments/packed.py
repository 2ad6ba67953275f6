"""Compressed JSON as game logs are stored: gzip, so a stored log can be served as it is.

``pack`` writes gzip with no timestamp in its header (the same value packs to the same bytes);
``unpack`` reads it back. ``public_meta`` turns a game's stored diagnostics into the per-play
latency and faults anyone may see, one list per round of the log.

A move request's ``history`` is the plays of its round so far, which the log already holds: it
is stored once, in the log. ``requests_without_history`` leaves it out of the stored
diagnostics (``null`` keeps its place) and ``requests_with_history`` puts it back from the log,
the very plays that were sent (``tests/leagues/test_game_diagnostics.py`` compares them with
what a bot received).
"""

from __future__ import annotations

import gzip
from typing import Any

import orjson

# gzip levels, measured in benchmarks/log_storage.py (docs/benchmarks.md): a log (~17 KB of JSON)
# is packed once and served many times, so it gets the smallest form; diagnostics (~400 KB with
# every request body) are packed by the match worker once per game and rarely read, so level 3,
# a third of level 6's CPU for a third more bytes.
LEVEL_LOG = 9
LEVEL_DIAGNOSTICS = 3
PUBLIC_KEYS = ("seat", "latency_ms", "fault", "detail")


def pack(value: Any, *, level: int = 6) -> bytes:
    """``value`` as gzip-compressed JSON."""
    return gzip.compress(orjson.dumps(value), compresslevel=level, mtime=0)


def unpack(data: bytes | memoryview) -> Any:
    """The JSON value of ``pack``'s bytes (PostgreSQL hands binary columns back as memoryview)."""
    return orjson.loads(gzip.decompress(bytes(data)))


EMPTY_LIST = pack([])


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


def requests_without_history(diagnostics: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The diagnostics as stored: each request's ``history`` left to the log."""
    return [
        {**row, "request": {**row["request"], "history": None}} if row.get("request") else row
        for row in diagnostics
    ]


def requests_with_history(
    diagnostics: list[dict[str, Any]], document: dict[str, Any]
) -> list[dict[str, Any]]:
    """The stored diagnostics with each request's ``history`` back from the log's plays."""
    rounds = document.get("rounds") or []
    restored = []
    for row in diagnostics:
        request = row.get("request")
        if request and request.get("history") is None and row["round"] <= len(rounds):
            plays = rounds[row["round"] - 1]["plays"][: row["play"] - 1]
            row = {**row, "request": {**request, "history": plays}}
        restored.append(row)
    return restored
