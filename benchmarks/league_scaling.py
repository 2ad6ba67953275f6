"""League throughput with one worker node and with two: does adding nodes add throughput?

Run from the repository root:

    .venv/bin/python -m benchmarks.league_scaling                    # fast bots, PostgreSQL
    .venv/bin/python -m benchmarks.league_scaling --delay-ms 200 --concurrency 14   # slow bots
    .venv/bin/python -m benchmarks.league_scaling --sqlite           # a SQLite file instead

Each worker node is what one machine of a compose deployment runs (``docker compose up
--scale worker=N``): its own ``celery worker`` process with its own hostname
(``--hostname nodeK@localhost``) consuming the match queues as compose's ``worker`` does, on the
one Redis and the one database of the deployment. This process writes each league's schedule
and sends its matches (what the maintenance worker's ``leagues.schedule`` does), so the nodes
only play. After each league the script checks that no game was
played twice: every match begun exactly once (``Match.attempts``, under its lease), every game
stored once with one log, and it says how many matches each node played.

The same eight SDK example bots (separate processes, from ``benchmarks.league``), the same
private Redis and database, and the same league (8 bots, ``--games-per-pairing`` games per
pairing) are played first by one ``celery worker --pool threads`` process, then by two, each
with ``--concurrency`` threads. PostgreSQL is the private cluster of ``scripts/postgres.sh``
(a fresh database per run of this script); with ``--sqlite`` every result write queues on
the one database file. Reported per run: wall time, games/s, moves/s, and the CPU seconds the
workers and the bots used, which says what the machine ran out of, and the share of the
nodes' match slots kept busy while matches waited in the queue (``benchmarks.league``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time
from pathlib import Path

from benchmarks.league import cpu_seconds, matches_by_worker, say, slots_kept_busy, start_bots
from scripts.processes import (
    celery_worker_command,
    private_service,
    stop_processes,
    wait_for_workers,
)

# tournaments.queueing.MATCH_QUEUES: what compose's `worker` consumes.
MATCH_QUEUES = "games,leagues,challenges"

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
    workers, names = [], []
    for number in range(count):
        name = f"node{number + 1}@localhost"
        command = celery_worker_command(
            pool="threads", concurrency=concurrency, queues=MATCH_QUEUES, loglevel="WARNING",
            hostname=name, alone=True,
        )  # fmt: skip
        with open(log_dir / f"worker-{count}-{number}.log", "ab") as log:
            workers.append(
                subprocess.Popen(
                    command, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log
                )
            )
        names.append(name)

    # A loaded machine takes minutes to import everything.
    def alive() -> bool:
        return all(worker.poll() is None for worker in workers)

    if not wait_for_workers(names, timeout=300, alive=alive):
        stop_processes(workers)
        raise SystemExit("the workers did not start")
    return workers


def played_once(league) -> None:
    """Fail unless every match was begun once and every game stored once (a log per finished
    game; the one-to-one log and the pending check under the game's row lock make it once)."""
    from tournaments.models import Game, GameLog, Match

    matches = league.matches.all()
    again = matches.exclude(attempts=1).values_list("number", "attempts")
    if again:
        raise SystemExit(f"matches begun more than once (number, attempts): {list(again)}")
    if matches.exclude(status=Match.Status.FINISHED).exists():
        raise SystemExit("a match did not finish")
    games = Game.objects.filter(league=league)
    if games.filter(status=Game.Status.PENDING).exists():
        raise SystemExit("a game was left pending")
    # An aborted game (past the match time limit) was played once, and stored without a log.
    finished = games.filter(status=Game.Status.FINISHED).count()
    if GameLog.objects.filter(game__league=league).count() != finished:
        raise SystemExit("a finished game has no log, or more than one")


def play_league(args, owner, bot_ids: list[int], workers: int, env: dict, bot_processes) -> dict:
    from django.db.models import Sum

    from tournaments import queueing
    from tournaments.models import League
    from tournaments.services.league_creation import league_create
    from tournaments.services.league_schedules import league_start

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
        load_before = os.getloadavg()[0]
        started, started_at = time.perf_counter(), time.time()
        league_start(league_id=league.id, enqueue=False)
        queueing.matches_enqueue(league.matches.order_by("number").values_list("id", flat=True))
        while League.objects.get(pk=league.id).status != League.Status.FINISHED:
            if time.perf_counter() - started > args.timeout:
                raise SystemExit("the league did not finish in time")
            time.sleep(0.05)
        wall = time.perf_counter() - started
        cpu_after = cpu_seconds(processes), cpu_seconds(bot_processes)
    finally:
        stop_processes(processes)
    games = league.games.filter(status="finished")
    played_once(league)
    return {
        "workers": workers,
        "nodes": matches_by_worker(league, started_at),
        "busy": slots_kept_busy(league, workers * args.concurrency),
        "games": games.count(),
        "aborted": league.games.filter(status="aborted").count(),
        "moves": games.aggregate(m=Sum("moves"))["m"],
        "wall": wall,
        "load": f"{load_before:.1f}-{os.getloadavg()[0]:.1f}",
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

    database_url = base_url = None
    if not args.sqlite:
        database_url, base_url = postgres_database()
    # Slow bots on a loaded machine: a match must not be cut off by its time limit.
    settings = {"ESCOBA_MATCH_TIME_LIMIT_S": "1800"}
    if database_url:
        settings["DATABASE_URL"] = database_url
    try:
        with private_service(prefix="escoba-scaling-", keep_data=True, **settings) as (env, kids):
            bot_processes, urls = start_bots(env, args.delay_ms)
            kids += bot_processes
            import django

            django.setup()
            from tournaments.services.bots import bot_register
            from tournaments.services.league_creation import system_user

            owner = system_user("scaling")
            bot_ids = [bot_register(owner=owner, name=n, url=u).id for n, u in urls.items()]
            database = "SQLite" if args.sqlite else "PostgreSQL"
            say(f"{len(bot_ids)} bots, {args.delay_ms} ms per move; {database}; "
                f"--pool threads --concurrency {args.concurrency} per worker")  # fmt: skip
            runs = [
                play_league(args, owner, bot_ids, workers, env, bot_processes) for workers in (1, 2)
            ]
    finally:
        if database_url:
            from django.db import connections

            connections.close_all()
            drop_database(database_url, base_url)
    for run in runs:
        say(
            f"{run['workers']} node(s): {run['games']} games ({run['aborted']} aborted), "
            f"{run['moves']} moves in "
            f"{run['wall']:.1f} s: {run['games'] / run['wall']:.2f} games/s, "
            f"{run['moves'] / run['wall']:.0f} moves/s; CPU: workers {run['worker_cpu']:.1f} s, "
            f"bots {run['bots_cpu']:.1f} s; load average {run['load']}; "
            f"matches by node {run['nodes']}; slots kept busy while matches waited "
            f"{'-' if run['busy'] is None else format(run['busy'], '.0%')}; each game played once"
        )
    say(f"2 nodes / 1 node: {runs[0]['wall'] / runs[1]['wall']:.2f}x; logs in "
        f"{env['ESCOBA_DATA_DIR']}")  # fmt: skip


if __name__ == "__main__":
    main()
