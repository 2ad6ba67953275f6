"""The public API and browser pages under load, on a pool of many finished and rated games.

Run from the repository root (with ``ESCOBA_PG_DIR`` naming your own PostgreSQL cluster):

    .venv/bin/python -m benchmarks.api_load --games 100000 --fill-only   # fill once
    .venv/bin/python -m benchmarks.api_load --games 0                    # cache off, then on
    .venv/bin/python -m benchmarks.api_load --games 0 --read-cache on --only 'rankings|league'
    .venv/bin/python -m benchmarks.api_load --no-fill --read-cache on          # the pool as it is
    .venv/bin/python -m benchmarks.api_load --database-url postgres://…/escoba_api_load  # restored

What runs: the private PostgreSQL of ``scripts/postgres.sh`` (a database of its own, kept between
runs as ``escoba_api_load`` so the filling is paid once; ``--refill`` starts over), a private
Redis (the cache, and the throttle counters), and the web server with production settings on
127.0.0.1: gunicorn serving ``config.wsgi`` (sync workers), or with ``--server uvicorn``
``config.asgi`` as docker-compose.yml serves it. The rows come from
``benchmarks.pool_data``: rated leagues of 10 bots, each game played by the engine from its seed
and written in bulk as the services would store it (see that module).

The load generator is this script: asyncio and aiohttp, ``--connections`` keep-alive connections
each sending its next request as soon as the last answer arrived (a closed loop), for
``--seconds`` per endpoint after ``--warm-up`` seconds. Each endpoint cycles through many ids
(50 leagues, 40 bots, 500 games), so a cached run still pays its first read of each. The
requests come from ``--clients`` addresses in turn (4,096 by default), as a crowd behind a reverse
proxy: each sends ``X-Forwarded-For`` and the server trusts one proxy
(``ESCOBA_TRUSTED_PROXIES=1``), so the throttles count per client at their real rates and each
client stays far below its limit. With ``--clients 1`` every request is one client's and the
throttles are raised out of the way instead; DRF's throttle then keeps that client's history of
every request in the last minute, read and written whole on each request, a cost no real client
causes (docs/benchmarks.md). By default the whole set
runs twice, with the read cache off (``ESCOBA_READ_CACHE_S=0``) and then on, so before and after
are measured under the same load. Reported per endpoint: requests/s, p50 and p99 latency, any
answer that was not a 200, the load average, and the CPU each request cost: the CPU time
the web server's processes used during the measurement divided by its requests, and the same for the
private cluster's PostgreSQL (all its processes, when ``ESCOBA_PG_DIR``'s cluster serves the
database, ``--database-url`` included: run nothing else on it meanwhile). On a loaded machine
latencies queue for a core; the CPU figures say what a request costs whatever the load.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

from benchmarks.league import say, wait_http
from scripts.private_redis import PrivateRedis, free_port

ROOT = Path(__file__).resolve().parents[1]
DATABASE = "escoba_api_load"
BENCHMARK_SECRETS_KEY = base64.urlsafe_b64encode(b"benchmark-only-secrets-key-32-by").decode()


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
    from benchmarks.pool_data import pool_fill

    filled = pool_fill(games=games)
    say(f"database: {filled.games} games in the pool, {filled.leagues} leagues played now")


def targets() -> dict[str, list[str]]:
    """The paths each endpoint's load cycles through: the API and the browser pages."""
    from tournaments.models import Bot, Game, League

    rng = random.Random(1)
    leagues = list(League.objects.filter(status="finished").values_list("id", flat=True))
    games = list(Game.objects.filter(status="finished").values_list("id", flat=True))
    bots = list(Bot.objects.filter(seats__isnull=False).distinct().values_list("id", flat=True))
    some_leagues = rng.sample(leagues, min(50, len(leagues)))
    some_games = rng.sample(games, min(500, len(games)))
    some_bots = rng.sample(bots, min(40, len(bots)))
    return {
        "GET /api/rankings/?pool=classic/2p": ["/api/rankings/?pool=classic/2p"],
        "GET / (rankings page)": ["/?pool=classic/2p"],
        "GET /api/leagues/": ["/api/leagues/"],
        "GET /api/leagues/{id}/": [f"/api/leagues/{i}/" for i in some_leagues],
        "GET /leagues/{id}/ (league page)": [f"/leagues/{i}/" for i in some_leagues],
        "GET /api/bots/{id}/": [f"/api/bots/{i}/" for i in some_bots],
        "GET /bots/{id}/ (bot profile)": [f"/bots/{i}/" for i in some_bots],
        "GET /api/games/{id}/": [f"/api/games/{i}/" for i in some_games],
        "GET /games/{id}/ (game page)": [f"/games/{i}/" for i in some_games],
        "GET /api/games/?league={id}": [f"/api/games/?league={i}" for i in some_leagues],
        "GET /api/games/": ["/api/games/"],
        "GET /leagues/{id}/games/ (games page)": [f"/leagues/{i}/games/" for i in some_leagues],
        "GET /api/games/{id}/log/": [f"/api/games/{i}/log/" for i in some_games],
        "GET /api/rankings/history/?bot={id}": [
            f"/api/rankings/history/?bot={i}" for i in some_bots
        ],
    }


def client_address(number: int) -> str:
    """The ``number``-th client's address, in 10.0.0.0/8."""
    return f"10.{number >> 16 & 255}.{number >> 8 & 255}.{number & 255}"


async def load(base: str, paths: list[str], connections: int, seconds: float, clients: int) -> dict:
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
                headers = (
                    {"X-Forwarded-For": client_address(index % clients)} if clients > 1 else {}
                )
                index += connections
                sent = time.perf_counter()
                async with session.get(path, headers=headers) as response:
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
    parser.add_argument(
        "--clients",
        type=int,
        default=4096,
        help="Client addresses the requests come from, behind one trusted proxy (1: no proxy, "
        "throttles raised instead).",
    )
    parser.add_argument(
        "--server",
        choices=sorted(WEB_SERVERS),
        default="gunicorn",
        help="gunicorn (WSGI, sync workers) or uvicorn (ASGI, as docker-compose.yml serves it).",
    )
    parser.add_argument("--web-workers", type=int, default=3, help="The server's --workers.")
    parser.add_argument("--refill", action="store_true", help="Drop and fill the database again.")
    parser.add_argument("--fill-only", action="store_true", help="Fill the database and stop.")
    parser.add_argument(
        "--read-cache",
        choices=["both", "on", "off"],
        default="both",
        help="Serve with the read cache off, on, or both one after the other (the default).",
    )
    parser.add_argument("--only", help="Only the endpoints whose name matches this regex.")
    parser.add_argument(
        "--database-url",
        help="Serve this database as it is (already filled and migrated) instead of the "
        "private cluster's escoba_api_load; implies --no-fill.",
    )
    parser.add_argument(
        "--no-fill", action="store_true", help="Measure the database as it is: add no games."
    )
    parser.add_argument(
        "--cpu-alone", action="store_true", help="CPU per request in-process, cache off and on."
    )
    parser.add_argument(
        "--warm-up", type=float, default=2.0, help="Seconds of load before each measurement."
    )
    args = parser.parse_args()
    args.no_fill = args.no_fill or bool(args.database_url)

    data_dir = Path(tempfile.mkdtemp(prefix="escoba-api-load-"))
    env = {
        **os.environ,
        "ESCOBA_DATA_DIR": str(data_dir),
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DATABASE_URL": args.database_url or database_url(args.refill),
        "SECRET_KEY": "benchmark-only-" + "x" * 40,
        # The Fernet key bots' secrets are encrypted with: fixed, so a kept database reads again.
        "ESCOBA_SECRETS_KEY": os.environ.get("ESCOBA_SECRETS_KEY", BENCHMARK_SECRETS_KEY),
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "false",
        "DEBUG": "0",
        "LOG_LEVEL": "WARNING",
        "PYTHONPATH": str(ROOT),
    }
    if args.clients > 1:
        env["ESCOBA_TRUSTED_PROXIES"] = "1"
    else:
        env["ESCOBA_THROTTLE_ANON"] = env["ESCOBA_THROTTLE_USER"] = "1000000/minute"
    with PrivateRedis() as redis_server:
        env["REDIS_URL"] = redis_server.url
        os.environ.update(env)
        commands = [["collectstatic"]] if args.database_url else [["migrate"], ["collectstatic"]]
        for command in commands:  # pages need the static manifest
            subprocess.run(
                [sys.executable, "manage.py", *command, "--noinput", "-v", "0"],
                cwd=ROOT, env=env, check=True,
            )  # fmt: skip
        import django

        django.setup()
        if not args.no_fill:
            fill(args.games)
        if args.fill_only:
            return
        paths = targets()
        from django.db import connections

        from tournaments.models import Game

        connections.close_all()

        say(f"{Game.objects.filter(status='finished').count()} finished games")
        if args.cpu_alone:
            cpu_alone(paths, args.only)
            return
        for mode in ["off", "on"] if args.read_cache == "both" else [args.read_cache]:
            serve_and_load({**env, "ESCOBA_READ_CACHE_S": "0" if mode == "off" else "300"},
                           paths, args, f"read cache {mode}")  # fmt: skip


def cpu_alone(paths: dict[str, list[str]], only: str | None) -> None:
    """CPU per request of each endpoint in this process (Django's test client, no queue, no
    other request): the median over 20 of its paths, read cache off, then on and warm."""
    import statistics

    from django.core.cache import cache
    from django.test import Client
    from django.test.utils import override_settings

    client = Client(HTTP_HOST="127.0.0.1")
    say(
        f"{'endpoint':40} {'off ms':>7} {'on ms':>7}  "
        f"CPU per request (load {os.getloadavg()[0]:.1f})"
    )
    for name, endpoint_paths in paths.items():
        if only and not re.search(only, name):
            continue
        sample = (endpoint_paths * 20)[:20]
        figures = []
        for seconds in (0, 300):
            with override_settings(ESCOBA_READ_CACHE_S=seconds):
                cache.clear()
                for path in sample:  # warm: imports, templates, and the cache when on
                    client.get(path)
                costs = []
                for path in sample:
                    started = time.process_time()
                    response = client.get(path)
                    costs.append((time.process_time() - started) * 1000)
                    assert response.status_code == 200, (path, response.status_code)
                figures.append(statistics.median(costs))
        say(f"{name:40} {figures[0]:7.1f} {figures[1]:7.1f}")


def process_cpu_s(pid: int) -> float:
    """CPU seconds (user and system) used so far by ``pid`` and its descendants: each living
    process's own time, plus what its children that exited had used (so a database backend that
    closes its connection in between keeps its share)."""
    import psutil

    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0.0
    total = 0.0
    for process in processes:
        try:
            times = process.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system + times.children_user + times.children_system
    return total


def postmaster_pid(database_url: str) -> int | None:
    """The postmaster of the private cluster (``ESCOBA_PG_DIR``) when it serves ``database_url``
    (its backends serve the web server's queries), else None."""
    pid_file = Path(os.environ.get("ESCOBA_PG_DIR", "/tmp/escoba-postgres")) / "data/postmaster.pid"
    try:
        lines = pid_file.read_text().split("\n")
        serves = urlsplit(database_url).port == int(lines[3])
        return int(lines[0]) if serves else None
    except (OSError, IndexError, ValueError):
        return None


# The command line after ``python -m`` of each web server, for a port and a number of workers.
WEB_SERVERS = {
    "gunicorn": lambda port, workers: [
        "gunicorn", "config.wsgi:application", "--bind", f"127.0.0.1:{port}",
        "--workers", str(workers), "--log-level", "warning",
    ],
    "uvicorn": lambda port, workers: [
        "uvicorn", "config.asgi:application", "--host", "127.0.0.1", "--port", str(port),
        "--workers", str(workers), "--no-access-log", "--log-level", "warning",
    ],
}  # fmt: skip


def serve_and_load(
    env: dict[str, str], paths: dict[str, list[str]], args: argparse.Namespace, label: str
) -> None:
    """Start the web server with ``env`` and put each endpoint under load in turn."""
    port = free_port()
    command = WEB_SERVERS[args.server](port, args.web_workers)
    web = subprocess.Popen(
        [sys.executable, "-m", *command], cwd=ROOT, env=env, stdin=subprocess.DEVNULL
    )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_http(f"{base}/api/health/", timeout=300)  # minutes on a loaded machine
        say(
            f"{label}: {args.server} --workers {args.web_workers}; {args.connections} connections "
            f"from {args.clients} client addresses, {args.seconds:.0f} s per endpoint; "
            f"load average {os.getloadavg()[0]:.1f}"
        )
        database = postmaster_pid(env["DATABASE_URL"])
        say(
            f"{'endpoint':40} {'req/s':>7} {'p50 ms':>7} {'p99 ms':>7} {'web CPU':>8} "
            f"{'db CPU':>7}  not 200  (CPU: ms per request, the web server's processes and "
            "PostgreSQL's)"
        )
        for name, endpoint_paths in paths.items():
            if args.only and not re.search(args.only, name):
                continue
            if args.warm_up > 0:  # 0: the first reads of every path are measured too
                asyncio.run(
                    load(base, endpoint_paths, args.connections, args.warm_up, args.clients)
                )
            web_cpu = process_cpu_s(web.pid)
            db_cpu = process_cpu_s(database) if database else 0.0
            result = asyncio.run(
                load(base, endpoint_paths, args.connections, args.seconds, args.clients)
            )
            web_ms = (process_cpu_s(web.pid) - web_cpu) * 1000 / max(result["requests"], 1)
            db_ms = (
                f"{(process_cpu_s(database) - db_cpu) * 1000 / max(result['requests'], 1):7.2f}"
                if database
                else f"{'-':>7}"
            )
            say(
                f"{name:40} {result['rps']:7.0f} {result['p50']:7.1f} {result['p99']:7.1f}"
                f" {web_ms:8.2f} {db_ms}  {result['failures'] or '-'}"
                f"  (load {os.getloadavg()[0]:.1f})"
            )
    finally:
        web.terminate()
        try:
            web.wait(30)
        except subprocess.TimeoutExpired:
            web.kill()


if __name__ == "__main__":
    main()
