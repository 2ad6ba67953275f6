"""Bytes a finished game takes in the log table, before and after compact logs (issue 15, item 2).

Run from the repository root (a PostgreSQL URL makes it measure what PostgreSQL stores, TOAST
compression included; without one it reports the encoded sizes only):

    ESCOBA_PG_DIR=/tmp/pg-bench scripts/postgres.sh start     # prints DATABASE_URL=...
    DATABASE_URL=postgres://... .venv/bin/python -m benchmarks.log_storage [--games 40]

Real games: the SDK's greedy and random bots served on loopback, played through the arena's own
runner (`tournaments.bot_calls.runner.play_game`), two-player classic and four-player
partnerships. For each game the script builds what the log table held before (the
`escoba-log/1` document and the per-play `meta` as JSON, i.e. `jsonb`) and what it holds now
(`tournaments.packed.pack` of the document and of the per-request diagnostics, which also keep
every request body sent, less what the log holds, and any debug text, as `bytea`), plus the
faults list both keep as JSON.
It also times packing a game's log and diagnostics (once, when the game finishes) and unpacking
the document (a client that does not accept gzip), per game, on this machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
from typing import Any

import orjson

from bots_sdk.examples import greedy
from bots_sdk.examples import random as random_bot
from bots_sdk.server import serve_in_thread
from games.engine import Ruleset
from tournaments import packed
from tournaments.bot_calls.runner import BotEndpoint, play_game_sync

TABLES = {
    "2p classic": ({}, 2),
    "4p partnerships": ({"players": 4, "teams": True}, 4),
}


def play(games: int, options: dict[str, Any], seats: int, urls: list[str]) -> list[Any]:
    ruleset = Ruleset.from_preset("classic", options)
    records = []
    for number in range(games):
        bots = [BotEndpoint(urls[(number + seat) % 2], name=f"b{seat}") for seat in range(seats)]
        records.append(
            play_game_sync(
                allow_private=True, ruleset=ruleset, seed=1000 + number, bots=bots,
                game_id=number, timeout_ms=2000,
            )
        )  # fmt: skip
    return records


def stored_diagnostics(record: Any) -> bytes:
    """The diagnostics as ``GameLog`` stores them (``packed.requests_stored``)."""
    stored = packed.requests_stored(record.diagnostics)
    return packed.pack(stored, level=packed.LEVEL_DIAGNOSTICS)


def without_requests(record: Any) -> list[dict[str, Any]]:
    """The diagnostics less the request bodies: the same facts the old ``meta`` kept."""
    return [{**row, "request": None} for row in record.diagnostics]


def encoded_sizes(record: Any) -> dict[str, int]:
    """Bytes of each stored value as the application writes it."""
    return {
        "before_document": len(orjson.dumps(record.log)),
        "before_meta": len(orjson.dumps(record.meta)),
        "after_document": len(packed.pack(record.log, level=packed.LEVEL_LOG)),
        "after_diagnostics": len(stored_diagnostics(record)),
        "after_slim": len(packed.pack(without_requests(record), level=packed.LEVEL_DIAGNOSTICS)),
        "faults": len(orjson.dumps(record.faults)),
    }


def stored_sizes(url: str, records: list[Any]) -> list[dict[str, int]]:
    """Bytes PostgreSQL keeps for each value in a table row (``pg_column_size``: after TOAST's
    own compression of large values, which ``jsonb`` got before compact logs)."""
    import psycopg

    rows = []
    with psycopg.connect(url) as connection, connection.cursor() as cursor:
        cursor.execute(
            "CREATE TEMP TABLE sizes (document jsonb, meta jsonb, faults jsonb,"
            " document_gzip bytea, diagnostics_gzip bytea, slim bytea)"
        )
        for record in records:
            cursor.execute(
                "INSERT INTO sizes VALUES (%s, %s, %s, %s, %s, %s)",
                [
                    orjson.dumps(record.log).decode(),
                    orjson.dumps(record.meta).decode(),
                    orjson.dumps(record.faults).decode(),
                    packed.pack(record.log, level=packed.LEVEL_LOG),
                    stored_diagnostics(record),
                    packed.pack(without_requests(record), level=packed.LEVEL_DIAGNOSTICS),
                ],
            )
        # read back from the table: what is stored, after TOAST compression
        cursor.execute(
            "SELECT pg_column_size(document), pg_column_size(meta), pg_column_size(faults),"
            " pg_column_size(document_gzip), pg_column_size(diagnostics_gzip),"
            " pg_column_size(slim) FROM sizes"
        )
        for document, meta, faults, document_gzip, diagnostics, slim in cursor.fetchall():
            rows.append(
                {
                    "before_document": document,
                    "before_meta": meta,
                    "after_document": document_gzip,
                    "after_diagnostics": diagnostics,
                    "after_slim": slim,
                    "faults": faults,
                }
            )
    return rows


def timings(records: list[Any]) -> dict[str, float]:
    """Median milliseconds per game: pack log and diagnostics once; unpack the document."""
    pack_ms, unpack_ms = [], []
    for record in records:
        started = time.perf_counter()
        stored = packed.pack(record.log, level=packed.LEVEL_LOG)
        stored_diagnostics(record)
        pack_ms.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        packed.unpack(stored)
        unpack_ms.append((time.perf_counter() - started) * 1000)
    return {"pack": statistics.median(pack_ms), "unpack": statistics.median(unpack_ms)}


def report(name: str, label: str, rows: list[dict[str, int]]) -> None:
    mean = {key: statistics.fmean(row[key] for row in rows) for key in rows[0]}
    before = mean["before_document"] + mean["before_meta"] + mean["faults"]
    same = mean["after_document"] + mean["after_slim"] + mean["faults"]
    print(
        f"| {name} | {label} | {mean['before_document']:,.0f} + {mean['before_meta']:,.0f} "
        f"+ {mean['faults']:,.0f} = {before:,.0f} | {mean['after_document']:,.0f} "
        f"+ {mean['after_slim']:,.0f} + {mean['faults']:,.0f} = {same:,.0f} "
        f"({before / same:.1f}x smaller) | {mean['after_diagnostics']:,.0f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=40, help="games per table (default 40)")
    args = parser.parse_args()
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    servers = [serve_in_thread(greedy.choose, name="greedy"), serve_in_thread(random_bot.choose)]
    url = os.environ.get("DATABASE_URL", "")
    try:
        print(
            "| table | measured | before: document + meta + faults (bytes) | after: the same "
            "facts, compressed | after: diagnostics with every request body |"
        )
        print("|---|---|---|---|---|")
        for name, (options, seats) in TABLES.items():
            records = play(args.games, options, seats, [s.url for s in servers])
            report(name, "encoded", [encoded_sizes(record) for record in records])
            if url.startswith("postgres"):
                report(name, "PostgreSQL", stored_sizes(url, records))
            times = timings(records)
            print(
                f"<!-- {name}: {args.games} games, pack {times['pack']:.2f} ms/game, "
                f"unpack document {times['unpack']:.2f} ms/game -->"
            )
    finally:
        for server in servers:
            server.stop()
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
