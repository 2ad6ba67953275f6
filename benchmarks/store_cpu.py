"""The CPU a league worker spends storing: ``match_begin``, ``game_finish`` and ``match_finish``.

Run from the repository root against a database and a Redis (the services send their Celery
tasks on commit), e.g. a private PostgreSQL (``scripts/postgres.sh start`` prints its URL):

    DATABASE_URL=postgres://... REDIS_URL=redis://... .venv/bin/python -m benchmarks.store_cpu

It migrates the database, then plays rated leagues of 10 bots (90 matches, 180 two-player
classic games each) through the same services the worker calls (``pool_data.league_play``: the
engine plays in-process, so no bot is called) and prints the median thread CPU of each call,
the statements and the transaction's commit hooks (the Celery sends) included: what the
worker's thread spends, not what the database does. ``--leagues`` sets how many (default 3).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

SERVICES = ("match_begin", "game_finish", "match_finish")


def timed(real: Callable[..., Any], cpu: list[float]) -> Callable[..., Any]:
    """``real``, noting the calling thread's CPU milliseconds of each call in ``cpu``."""

    def call(**kwargs: Any) -> Any:
        started = time.thread_time()
        try:
            return real(**kwargs)
        finally:
            cpu.append((time.thread_time() - started) * 1000)

    return call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--leagues", type=int, default=3, help="leagues of 10 bots (default 3)")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    import django

    django.setup()
    from django.core.management import call_command

    from benchmarks import pool_data
    from tournaments.services import matches

    call_command("migrate", verbosity=0)
    cpu: dict[str, list[float]] = defaultdict(list)
    for name in SERVICES:  # league_play imports them from ``matches`` when called
        setattr(matches, name, timed(getattr(matches, name), cpu[name]))
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    bots = pool_data._bots(10)
    for number in range(args.leagues):
        pool_data.league_play(bot_ids=bots, name=f"store-cpu-{os.getpid()}-{number}")
    for name in SERVICES:
        values = cpu[name]
        print(f"{name}: {len(values)} calls, median {statistics.median(values):.2f} ms CPU")
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
