"""The public API under load, on a database of at least 10,000 finished and rated games.

Run from the repository root (filling the database takes a few minutes the first time):

    .venv/bin/python -m benchmarks.api_load                      # PostgreSQL, 10,000 games
    .venv/bin/python -m benchmarks.api_load --games 20000 --seconds 20 --connections 32

What runs: the private PostgreSQL of ``scripts/postgres.sh`` (a database of its own, kept between
runs as ``escoba_api_load`` so the filling is paid once; ``--refill`` starts over), a private
Redis (the cache the throttles count in), and gunicorn serving ``config.wsgi`` with production
settings on 127.0.0.1, as docker-compose.yml runs it. The rows come from
``tests.performance.data.fill_database``: leagues of 10 bots, real engine logs, ratings applied
game by game.

The load generator is this script: asyncio and aiohttp, ``--connections`` keep-alive connections
each sending its next request as soon as the last answer arrived (a closed loop), for
``--seconds`` per endpoint. Throttles are raised out of the way (the point is the server, not
the limits). Reported per endpoint: requests/s, p50 and p99 latency, and any answer that was
not a 200.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.league import say, wait_http
from scripts.private_redis import PrivateRedis, free_port

ROOT = Path(__file__).resolve().parents[1]
DATABASE = "escoba_api_load"


def database_url(refill: bool) -> str:
    import psycopg

    out = subprocess.run(
        [str(ROOT / "scripts" / "postgres.sh"), "start"], check=True, capture_output=True, text=True
    ).stdout
    base_url = out.strip().split("=", 1)[1]
    with psycopg.connect(base_url, autocommit=True) as connection:
        if refill:
            connection.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        exists = connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE]
        ).fetchone()
        if not exists:
            connection.execute(f"CREATE DATABASE {DATABASE}")
    return base_url.rsplit("/", 1)[0] + "/" + DATABASE


def fill(games: int) -> None:
    from tests.performance.data import fill_database
    from tournaments.models import Game

    have = Game.objects.filter(status="finished").count()
    if have >= games:
        say(f"database: {have} finished games already")
        return
    started = time.perf_counter()
    filled = fill_database(games=games - have, bots=40)
    say(f"database: filled {filled.games} games in {time.perf_counter() - started:.0f} s")


def targets() -> dict[str, list[str]]:
    """The paths each endpoint's load cycles through."""
    from tournaments.models import Bot, Game, League

    rng = random.Random(1)
    leagues = list(League.objects.filter(status="finished").values_list("id", flat=True))
    games = list(Game.objects.filter(status="finished").values_list("id", flat=True))
    bots = list(Bot.objects.values_list("id", flat=True))
    return {
        "GET /api/rankings/?pool=classic/2p": ["/api/rankings/?pool=classic/2p"],
        "GET /api/leagues/": ["/api/leagues/"],
        "GET /api/leagues/{id}/": [f"/api/leagues/{i}/" for i in rng.sample(leagues, 50)],
        "GET /api/games/?league={id}": [f"/api/games/?league={i}" for i in rng.sample(leagues, 50)],
        "GET /api/games/{id}/log/": [f"/api/games/{i}/log/" for i in rng.sample(games, 500)],
        "GET /api/rankings/history/?bot={id}": [
            f"/api/rankings/history/?bot={i}" for i in rng.sample(bots, min(40, len(bots)))
        ],
    }


async def load(base: str, paths: list[str], connections: int, seconds: float) -> dict:
    import aiohttp

    latencies: list[float] = []
    failures: dict[int, int] = {}
    deadline = time.perf_counter() + seconds
    connector = aiohttp.TCPConnector(limit=connections, force_close=False)
    async with aiohttp.ClientSession(base, connector=connector) as session:

        async def client(number: int) -> None:
            index = number
            while time.perf_counter() < deadline:
                path = paths[index % len(paths)]
                index += connections
                sent = time.perf_counter()
                async with session.get(path) as response:
                    await response.read()
                latencies.append(time.perf_counter() - sent)
                if response.status != 200:
                    failures[response.status] = failures.get(response.status, 0) + 1

        started = time.perf_counter()
        await asyncio.gather(*(client(n) for n in range(connections)))
        elapsed = time.perf_counter() - started
    latencies.sort()
    return {
        "requests": len(latencies),
        "rps": len(latencies) / elapsed,
        "p50": latencies[len(latencies) // 2] * 1000,
        "p99": latencies[int(len(latencies) * 0.99)] * 1000,
        "failures": failures,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=10.0, help="Load time per endpoint.")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--web-workers", type=int, default=3, help="gunicorn --workers.")
    parser.add_argument("--refill", action="store_true", help="Drop and fill the database again.")
    args = parser.parse_args()

    data_dir = Path(tempfile.mkdtemp(prefix="escoba-api-load-"))
    (data_dir / "static").mkdir()  # production serves collected files from here; none needed
    env = {
        **os.environ,
        "ESCOBA_DATA_DIR": str(data_dir),
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DATABASE_URL": database_url(args.refill),
        "SECRET_KEY": "benchmark-only-" + "x" * 40,
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "false",
        "DEBUG": "0",
        "LOG_LEVEL": "WARNING",
        "ESCOBA_THROTTLE_ANON": "1000000/minute",
        "ESCOBA_THROTTLE_USER": "1000000/minute",
        "PYTHONPATH": str(ROOT),
    }
    with PrivateRedis() as redis_server:
        env["REDIS_URL"] = redis_server.url
        os.environ.update(env)
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
            cwd=ROOT, env=env, check=True,
        )  # fmt: skip
        import django

        django.setup()
        fill(args.games)
        paths = targets()
        from django.db import connections

        connections.close_all()

        port = free_port()
        web = subprocess.Popen(
            [
                sys.executable, "-m", "gunicorn", "config.wsgi:application",
                "--bind", f"127.0.0.1:{port}", "--workers", str(args.web_workers),
                "--log-level", "warning",
            ],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            base = f"http://127.0.0.1:{port}"
            wait_http(f"{base}/api/health/")
            from tournaments.models import Game

            say(
                f"{Game.objects.count()} games; gunicorn --workers {args.web_workers}; "
                f"{args.connections} connections, {args.seconds:.0f} s per endpoint"
            )
            say(f"{'endpoint':38} {'req/s':>7} {'p50 ms':>7} {'p99 ms':>7}  not 200")
            for name, endpoint_paths in paths.items():
                asyncio.run(load(base, endpoint_paths, args.connections, 1.0))  # warm up
                result = asyncio.run(load(base, endpoint_paths, args.connections, args.seconds))
                say(
                    f"{name:38} {result['rps']:7.0f} {result['p50']:7.1f} {result['p99']:7.1f}"
                    f"  {result['failures'] or '-'}"
                )
        finally:
            web.terminate()
            web.wait(15)


if __name__ == "__main__":
    main()
