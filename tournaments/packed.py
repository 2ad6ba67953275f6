"""Compressed JSON as game logs are stored: gzip, so a stored log can be served as it is.

``pack`` writes gzip with no timestamp in its header (the same value packs to the same bytes);
``unpack`` reads it back. ``public_meta`` turns a game's stored diagnostics into the per-play
latency and faults anyone may see, one list per round of the log.
"""

from __future__ import annotations

import gzip
from typing import Any

import orjson

LEVEL = 6  # measured in benchmarks/log_storage.py: level 9 saves little and costs more CPU
PUBLIC_KEYS = ("seat", "latency_ms", "fault", "detail")


def pack(value: Any) -> bytes:
    """``value`` as gzip-compressed JSON."""
    return gzip.compress(orjson.dumps(value), compresslevel=LEVEL, mtime=0)


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
