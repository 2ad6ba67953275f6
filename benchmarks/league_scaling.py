"""League throughput with one worker process and with two: does adding workers add throughput?

Run from the repository root:

    .venv/bin/python -m benchmarks.league_scaling                    # fast bots, PostgreSQL
    .venv/bin/python -m benchmarks.league_scaling --delay-ms 20      # bots think 20 ms a move
    .venv/bin/python -m benchmarks.league_scaling --sqlite           # a SQLite file instead

The same eight SDK example bots (separate processes, from ``benchmarks.league``), the same
private Redis and database, and the same league (8 bots, ``--games-per-pairing`` games per
pairing) are played first by one ``celery worker --pool threads`` process, then by two, each
with ``--concurrency`` threads. PostgreSQL is the private cluster of ``scripts/postgres.sh``
(a fresh database per run of this script); with ``--sqlite`` every result write queues on
the one database file. Reported per run: wall time, games/s, moves/s, and the CPU seconds the
workers and the bots used, which says what the machine ran out of.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.league import cpu_seconds, say, start_bots

ROOT = Path(__file__).resolve().parents[1]


def postgres_database() -> tuple[str, str]:
    """A fresh database on the private cluster: (its URL, its name)."""
    import psycopg

    out = subprocess.run(
        [str(ROOT / "scripts" / "postgres.sh"), "start"], check=True, capture_output=True, text=True
    ).stdout
    base_url = out.strip().split("=", 1)[1]
    name = f"escoba_scaling_{os.getpid()}"
    with psycopg.connect(base_url, autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {name}")
    return base_url.rsplit("/", 1)[0] + "/" + name, base_url


def drop_database(url: str, base_url: str) -> None:
    import psycopg

    with psycopg.connect(base_url, autocommit=True) as connection:
        connection.execute(f"DROP DATABASE IF EXISTS {url.rsplit('/', 1)[1]} WITH (FORCE)")


def start_workers(count: int, concurrency: int, env: dict, log_dir: Path) -> list[subprocess.Popen]:
    """``count`` worker processes, logging to ``log_dir``, once each answers a ping."""
    from config.celery_app import app

    workers, names = [], []
    for number in range(count):
        name = f"scale{number}@localhost"
        command = [
            sys.executable, "-m", "celery", "-A", "config.celery_app", "worker",
            "--pool", "threads", "--concurrency", str(concurrency), "--loglevel", "WARNING",
            "--without-gossip", "--without-mingle", "--without-heartbeat", "--hostname", name,
        ]  # fmt: skip
        with open(log_dir / f"worker-{count}-{number}.log", "ab") as log:
            workers.append(
                subprocess.Popen(
                    command, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log
                )
            )
        names.append(name)
    deadline = time.monotonic() + 60
    while len(app.control.ping(destination=names, timeout=0.5)) < count:
        if time.monotonic() > deadline or any(w.poll() is not None for w in workers):
            raise SystemExit("the workers did not start")
    return workers


def stop(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()


def play_league(args, owner, bot_ids: list[int], workers: int, env: dict, bot_processes) -> dict:
    from django.db.models import Sum

    from tournaments.models import League
    from tournaments.services.leagues import league_create, league_start

    processes = start_workers(workers, args.concurrency, env, Path(env["ESCOBA_DATA_DIR"]))
    try:
        league = league_create(
            creator=owner,
            name=f"scaling {workers}",
            bot_ids=bot_ids,
            games_per_pairing=args.games_per_pairing,
            move_timeout_ms=2000,
        )
        cpu_before = cpu_seconds(processes), cpu_seconds(bot_processes)
        started = time.perf_counter()
        league_start(league_id=league.id)
        while League.objects.get(pk=league.id).status != League.Status.FINISHED:
            if time.perf_counter() - started > args.timeout:
                raise SystemExit("the league did not finish in time")
            time.sleep(0.05)
        wall = time.perf_counter() - started
        cpu_after = cpu_seconds(processes), cpu_seconds(bot_processes)
    finally:
        stop(processes)
    games = league.games.all()
    return {
        "workers": workers,
        "games": games.count(),
        "moves": games.aggregate(m=Sum("moves"))["m"],
        "wall": wall,
        "worker_cpu": cpu_after[0] - cpu_before[0],
        "bots_cpu": cpu_after[1] - cpu_before[1],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--delay-ms", type=int, default=0, help="Bot think time per move.")
    parser.add_argument("--concurrency", type=int, default=16, help="Threads per worker.")
    parser.add_argument("--games-per-pairing", type=int, default=4, help="4: 112 games.")
    parser.add_argument("--sqlite", action="store_true", help="A SQLite file, not PostgreSQL.")
    parser.add_argument("--timeout", type=float, default=900)
    args = parser.parse_args()

    from scripts.private_redis import PrivateRedis

    data_dir = Path(tempfile.mkdtemp(prefix="escoba-scaling-"))
    database_url = base_url = None
    if not args.sqlite:
        database_url, base_url = postgres_database()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "DEBUG": "0",
        "ESCOBA_DATA_DIR": str(data_dir),
        "ESCOBA_ALLOW_PRIVATE_BOT_URLS": "1",
        "LOG_LEVEL": "WARNING",
        "PYTHONPATH": str(ROOT),
    }
    if database_url:
        env["DATABASE_URL"] = database_url
    bot_processes: list[subprocess.Popen] = []
    try:
        with PrivateRedis() as redis_server:
            env["REDIS_URL"] = redis_server.url
            os.environ.update(env)
            subprocess.run(
                [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0", "--skip-checks"],
                cwd=ROOT, env=env, check=True,
            )  # fmt: skip
            bot_processes, urls = start_bots(env, args.delay_ms)
            import django

            django.setup()
            from tournaments.services.bots import bot_register
            from tournaments.services.leagues import system_user

            owner = system_user("scaling")
            bot_ids = [bot_register(owner=owner, name=n, url=u).id for n, u in urls.items()]
            database = "SQLite" if args.sqlite else "PostgreSQL"
            say(f"{len(bot_ids)} bots, {args.delay_ms} ms per move; {database}; "
                f"--pool threads --concurrency {args.concurrency} per worker")  # fmt: skip
            runs = [
                play_league(args, owner, bot_ids, workers, env, bot_processes) for workers in (1, 2)
            ]
    finally:
        stop(bot_processes)
        if database_url:
            from django.db import connections

            connections.close_all()
            drop_database(database_url, base_url)
    for run in runs:
        say(
            f"{run['workers']} worker(s): {run['games']} games, {run['moves']} moves in "
            f"{run['wall']:.1f} s: {run['games'] / run['wall']:.2f} games/s, "
            f"{run['moves'] / run['wall']:.0f} moves/s; CPU: workers {run['worker_cpu']:.1f} s, "
            f"bots {run['bots_cpu']:.1f} s"
        )
    say(f"2 workers / 1 worker: {runs[0]['wall'] / runs[1]['wall']:.2f}x; logs in {data_dir}")


if __name__ == "__main__":
    main()
