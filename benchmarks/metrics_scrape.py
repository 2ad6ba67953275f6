"""Time the ``/metrics`` scrape against the database and Redis of the environment.

    DATABASE_URL=... REDIS_URL=... .venv/bin/python -m benchmarks.metrics_scrape --scrapes 200

Fill the pool first through the services (``benchmarks.pool_data --services``: its games go
through ``game_finish``, so they are counted in Redis as a worker's are; the bulk fill is not).
Each scrape is a ``GET /metrics`` through Django's test client (middleware, the view, every
source read, the exposition), one after another; printed: the pool's size, p50, p99 and max in
ms, and how long each source took in one more reading.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scrapes", type=int, default=200)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    import django

    django.setup()
    from django.test import Client

    from tournaments import metrics, queueing
    from tournaments.models import Game, Match, RatedSet

    client = Client(HTTP_HOST="127.0.0.1")
    assert client.get("/metrics").status_code == 200  # connections made, nothing timed
    times = []
    for _ in range(args.scrapes):
        started = time.perf_counter()
        response = client.get("/metrics")
        times.append(1000 * (time.perf_counter() - started))
        assert response.status_code == 200
    times.sort()
    games = Game.objects.count()
    print(
        f"{games} games, {Match.objects.count()} matches, {RatedSet.objects.count()} rated sets; "
        f"{len(response.content)} bytes; scrape p50 {statistics.median(times):.1f} ms, "
        f"p99 {times[int(0.99 * (len(times) - 1))]:.1f} ms, max {times[-1]:.1f} ms"
    )
    figures = metrics.ArenaFigures()
    parts = {
        "counters (Redis)": lambda: metrics._counters(figures, metrics.metrics_redis()),
        "live streams (Redis)": lambda: metrics._live_streams(figures, metrics.metrics_redis()),
        "queue depths (broker)": queueing.queue_depths,
        "database": lambda: metrics._database(figures),
    }
    for name, read in parts.items():
        started = time.perf_counter()
        read()
        print(f"  {name}: {1000 * (time.perf_counter() - started):.1f} ms")


if __name__ == "__main__":
    main()
