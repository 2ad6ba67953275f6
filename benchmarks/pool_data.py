"""Fill a rating pool with finished, rated leagues, for the read benchmarks.

    .venv/bin/python -m benchmarks.pool_data --games 1000000      # DATABASE_URL decides where
    .venv/bin/python -m benchmarks.pool_data --games 2000 --services   # through the services

By default the leagues are written in bulk (``benchmarks.pool_rows``): ``--processes`` worker
processes (one per core) each play a chunk of leagues with the engine from their scheduled
seeds and write its rows in one transaction, by ``COPY`` on PostgreSQL, the same rows the
services leave (tests/performance/test_pool_data.py fills a pool both ways and compares them).
This process plans the leagues (bots drawn at random, seeds, schedules as ``league_start``
writes them, every id reserved up front), counts each written chunk's tallies
(``tallies_rebuild``) while the workers write the next chunks, fits the pool through
``ratings_fit`` every ``--fit-every`` leagues (fits are coalesced in production too) and once at
the end, and runs ``VACUUM ANALYZE`` on PostgreSQL. It prints the CPU per game of each part.

``--services`` plays each league through the real services instead, one game at a time:
``league_create``, ``league_start``, ``match_begin``, ``game_finish``, ``match_finish``,
``league_finish_if_done`` (about 80 games/s; with the broker and Redis of the settings).

Either way no bot is called: each game's plays are a seeded random legal move each, with a
latency drawn at random (0.2-3 ms), so a game's log is a real ``escoba-log/1`` document of its
seed. Leagues have ``--bots-per-league`` bots (default 10: 45 pairings, 90 games) drawn from
``--bots`` bots (default 40), all in ``classic/2p``.
"""

from __future__ import annotations

import argparse
import gc
import math
import multiprocessing
import os
import random
import time
from dataclasses import dataclass
from typing import Any, NamedTuple

from benchmarks.pool_rows import ChunkTask, LeagueTask, Tables, chunk_write, league_sizes, play_game
from games.engine import Move, Ruleset
from games.scheduling import build_schedule, table_options

LEAGUE_OWNER = "pool-data-owner"
BOTS_OWNER = "pool-data-bots"
POOL = "classic/2p"


@dataclass
class PoolFilled:
    leagues: int
    games: int
    seconds: float


def play_record(ruleset: Ruleset, seed: int):
    """A game of ``seed`` played by the engine in-process (``pool_rows.play_game``), as the
    runner would record it."""
    from tournaments.bot_calls.runner import GameRecord, PlayCall

    log, plays = play_game(ruleset, seed)
    calls = [PlayCall(p.seat, p.round, p.play, Move.from_str(p.move), p.latency_ms) for p in plays]
    return GameRecord(log=log, calls=calls)


def _bots(count: int) -> list[int]:
    """``count`` healthy bots in rated play, made once and reused by later runs."""
    from django.contrib.auth import get_user_model

    from tournaments.models import Bot

    get_user_model().objects.get_or_create(username=LEAGUE_OWNER, defaults={"is_staff": True})
    # The bots belong to an inactive account, like the house's example bots: owned by nobody
    # who could farm with them, so a rated league may hold them all.
    owner, _ = get_user_model().objects.get_or_create(
        username=BOTS_OWNER, defaults={"is_active": False}
    )
    have = list(Bot.objects.filter(owner=owner).order_by("id").values_list("id", flat=True))
    if len(have) < count:
        made = Bot.objects.bulk_create(
            Bot(
                owner=owner,
                name=f"pool-bot-{n}",
                url=f"http://127.0.0.1:9/bot{n}",
                secret="whsec_" + "P" * 32,
                health=Bot.Health.HEALTHY,
            )
            for n in range(len(have), count)
        )
        have += [bot.id for bot in made]
    return have[:count]


def league_play(*, bot_ids: list[int], name: str, seed: int | None = None) -> int:
    """One rated league played to its end through the services; returns its games. ``seed``
    replaces the league's random seed before it starts (to compare with a bulk fill)."""
    from django.contrib.auth import get_user_model

    from tournaments.models import League
    from tournaments.services.league_creation import league_create
    from tournaments.services.league_schedules import league_start
    from tournaments.services.league_states import league_finish_if_done
    from tournaments.services.matches import game_finish, match_begin, match_finish

    owner = get_user_model().objects.get(username=LEAGUE_OWNER)
    league = league_create(creator=owner, name=name, bot_ids=bot_ids, rated=True)
    if seed is not None:
        League.objects.filter(pk=league.pk).update(seed=seed)
    league_start(league_id=league.id, enqueue=False)
    games = 0
    for match_id in league.matches.order_by("number").values_list("id", flat=True):
        plan = match_begin(match_id=match_id, worker="pool-data", claim=f"pool-data-{match_id}")
        assert plan is not None
        for game in plan.games:
            games += game_finish(game_id=game.game_id, record=play_record(plan.ruleset, game.seed))
        match_finish(match_id=match_id)
    league_finish_if_done(league_id=league.id)
    return games


def _finished_games() -> int:
    from tournaments.models import Game

    return Game.objects.filter(league__pool=POOL, status=Game.Status.FINISHED).count()


def _services_fill(
    *, games: int, bot_ids: list[int], bots_per_league: int, fit_every: int, seed: int
) -> tuple[int, int]:
    """Leagues through the services until the pool has ``games``: (leagues, games played)."""
    from tournaments.services.rating_fits import ratings_fit

    have = _finished_games()
    rng = random.Random(seed + have)
    leagues = played = 0
    started = time.perf_counter()
    while have < games:
        entered = rng.sample(bot_ids, bots_per_league)
        played += league_play(bot_ids=entered, name=f"pool {seed}-{have}-{leagues}")
        leagues += 1
        # Counted again, not added up: other processes may be filling the same pool.
        have = _finished_games()
        if fit_every and leagues % fit_every == 0:
            ratings_fit(pool=POOL)
        if leagues % 10 == 0:
            _progress(have, played, started)
    return leagues, played


def _progress(have: int, played: int, started: float, goal: int | None = None) -> None:
    seconds = time.perf_counter() - started
    rate = played / seconds if seconds else 0.0
    left = f", {(goal - have) / rate:.0f} s to go" if goal and rate else ""
    print(
        f"{have} games in the pool, {played} written in {seconds:.0f} s ({rate:.0f}/s{left}; "
        f"load {os.getloadavg()[0]:.1f})",
        flush=True,
    )


def _reserve_ids(sizes: dict[str, int], tables: Tables) -> dict[str, int]:
    """The first of ``sizes[table]`` consecutive ids of each table, taken from its sequence
    (PostgreSQL: nothing else is given them) or after its highest id (SQLite)."""
    from django.db import connection

    first = {}
    with connection.cursor() as cursor:
        for table, count in sizes.items():
            name = tables.names[table]
            if connection.vendor == "postgresql":
                cursor.execute(
                    "SELECT nextval(pg_get_serial_sequence(%s, 'id'))", [name]
                )  # fmt: skip
                start = cursor.fetchone()[0]
                cursor.execute(
                    "SELECT setval(pg_get_serial_sequence(%s, 'id'), %s)",
                    [name, start + count - 1],
                )
                first[table] = start
            else:
                cursor.execute(f"SELECT COALESCE(MAX(id), 0) + 1 FROM {name}")
                first[table] = cursor.fetchone()[0]
    return first


def leagues_plan(
    *, leagues: int, bot_ids: list[int], bots_per_league: int, rng: random.Random, label: str
) -> list[LeagueTask]:
    """``leagues`` leagues of ``bots_per_league`` bots drawn from ``bot_ids``, each with its
    seed and schedule as ``league_start`` writes them, and its ids reserved; named ``label``
    and their number (league names are unique)."""
    from tournaments.models import Bot
    from tournaments.services.bot_versions import bot_version_current

    versions = {
        bot.id: bot_version_current(bot=bot).id for bot in Bot.objects.filter(id__in=bot_ids)
    }
    planned = []
    for number in range(leagues):
        entered = rng.sample(bot_ids, min(bots_per_league, len(bot_ids)))
        seed = rng.getrandbits(63)
        # Rated sets never share a deal (games.scheduling.deals_shared).
        schedule = build_schedule(entered, players=2, games_per_pairing=2, seed=seed, shared=False)
        planned.append((f"{label}-{number}", seed, entered, schedule))
    tables = Tables()
    totals: dict[str, int] = {}
    for *_, schedule in planned:
        for table, count in league_sizes(schedule).items():
            totals[table] = totals.get(table, 0) + count
    ids = _reserve_ids(totals, tables)
    tasks = []
    for name, seed, entered, schedule in planned:
        sizes = league_sizes(schedule)
        tasks.append(LeagueTask(dict(ids), name, seed, entered, versions, schedule))
        ids = {table: first + sizes[table] for table, first in ids.items()}
    return tasks


def chunk_task(leagues: list[LeagueTask], distinct_logs: int = 0) -> ChunkTask:
    """The chunk of ``leagues`` with what all leagues of the pool share."""
    from django.contrib.auth import get_user_model

    from games.faults import DEFAULT_MAX_FAULTS
    from tournaments.services.rated_entry import rated_move_timeout_ms

    return ChunkTask(
        leagues=leagues,
        ruleset=Ruleset.from_preset("classic", table_options(2)).to_dict(),
        pool=POOL,
        creator_id=get_user_model()
        .objects.get_or_create(username=LEAGUE_OWNER, defaults={"is_staff": True})[0]
        .pk,
        move_timeout_ms=rated_move_timeout_ms(),
        max_faults=DEFAULT_MAX_FAULTS,
        distinct_logs=distinct_logs,
    )


_worker: dict[str, Any] = {}


def _worker_start(params: dict[str, Any]) -> None:
    """A worker process's own PostgreSQL connection (the parent's is never shared)."""
    import psycopg

    connection = psycopg.connect(**params)
    # Durability of each commit is not what is measured: as in the --services fill.
    connection.execute("SET synchronous_commit TO off")
    connection.commit()
    _worker["connection"] = connection
    _worker["tables"] = Tables()
    gc.freeze()  # what the fork inherited is never garbage: no collection need look at it


class ChunkDone(NamedTuple):
    """A chunk written: its leagues' ids, its games and the CPU seconds its writer spent."""

    league_ids: list[int]
    games: int
    cpu: float


def _chunk_done(chunk: ChunkTask, games: int, cpu: float) -> ChunkDone:
    league_ids = [task.ids["league"] for task in chunk.leagues]
    return ChunkDone(league_ids, games, time.process_time() - cpu)


def _worker_chunk(chunk: ChunkTask) -> ChunkDone:
    cpu = time.process_time()
    connection = _worker["connection"]
    with connection.cursor() as cursor:
        games = chunk_write(cursor, "postgresql", _worker["tables"], chunk)
    connection.commit()
    return _chunk_done(chunk, games, cpu)


def _chunk_here(chunk: ChunkTask) -> ChunkDone:
    from django.db import connection, transaction

    cpu = time.process_time()
    with transaction.atomic(), connection.cursor() as cursor:
        games = chunk_write(cursor, connection.vendor, Tables(), chunk)
    return _chunk_done(chunk, games, cpu)


def leagues_write(
    tasks: list[LeagueTask],
    *,
    processes: int,
    chunk_leagues: int,
    fit_every: int,
    distinct_logs: int = 0,
    goal: int = 0,
) -> int:
    """Write the planned leagues (in ``processes`` worker processes on PostgreSQL, else here),
    fitting the pool every ``fit_every`` leagues and once at the end; returns the games written."""
    from django.db import connection, connections

    chunks = [
        chunk_task(tasks[i : i + chunk_leagues], distinct_logs)
        for i in range(0, len(tasks), chunk_leagues)
    ]
    started = time.perf_counter()
    have = _finished_games()
    fill = Fill(fit_every=fit_every)
    if processes and connection.vendor == "postgresql":
        settings = connection.settings_dict
        params = {
            "dbname": settings["NAME"], "user": settings["USER"],
            "password": settings["PASSWORD"], "host": settings["HOST"],
            "port": settings["PORT"] or None,
        }  # fmt: skip
        connections.close_all()
        context = multiprocessing.get_context("fork")
        with context.Pool(processes, initializer=_worker_start, initargs=(params,)) as pool:
            for done in pool.imap_unordered(_worker_chunk, chunks):
                fill.chunk_done(done)
                _progress(have + fill.games, fill.games, started, goal)
    else:
        for chunk in chunks:
            fill.chunk_done(_chunk_here(chunk))
    if tasks:
        fill.fit()
        fill.report()
    return fill.games


@dataclass
class Fill:
    """A bulk fill's leagues and games written so far, and the CPU seconds spent on them: by
    the chunks (in the workers, or here without them), and here on the tallies and fits."""

    fit_every: int
    leagues: int = 0
    games: int = 0
    chunks_cpu: float = 0.0
    tallies_cpu: float = 0.0
    fits_cpu: float = 0.0

    def chunk_done(self, done: ChunkDone) -> None:
        """Count a chunk written: its leagues' standings, crosstable and progress, the rows the
        services keep as they store each game (``services.tallies``), are counted here while
        the workers write the next chunks; the pool is fitted every ``fit_every`` leagues."""
        from tournaments.services.tallies import tallies_rebuild

        self.chunks_cpu += done.cpu
        cpu = time.process_time()
        tallies_rebuild(league_ids=done.league_ids)
        self.tallies_cpu += time.process_time() - cpu
        before = self.leagues
        self.leagues += len(done.league_ids)
        self.games += done.games
        if self.fit_every and self.leagues // self.fit_every > before // self.fit_every:
            self.fit()

    def fit(self) -> None:
        from tournaments.services.rating_fits import ratings_fit

        cpu = time.process_time()
        ratings_fit(pool=POOL)
        self.fits_cpu += time.process_time() - cpu

    def report(self) -> None:
        ms = 1000 / max(self.games, 1)
        print(
            f"CPU per game: chunks {self.chunks_cpu * ms:.3f} ms, here {self.tallies_cpu * ms:.3f}"
            f" ms on tallies and {self.fits_cpu * ms:.3f} ms on fits",
            flush=True,
        )


def pool_fill(
    *,
    games: int,
    bots: int = 40,
    bots_per_league: int = 10,
    fit_every: int = 100,
    seed: int = 1,
    processes: int = 2,
    chunk_leagues: int = 10,
    distinct_logs: int = 0,
    services: bool = False,
) -> PoolFilled:
    """Add rated leagues until the pool ``classic/2p`` has at least ``games`` finished games
    (see the module docstring); the database is then vacuumed and analysed (PostgreSQL, when
    called outside a transaction)."""
    from django.db import connection

    started = time.perf_counter()
    bot_ids = _bots(bots)
    have = _finished_games()
    if services:
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:  # as the bulk workers: commits not waited for
                cursor.execute("SET synchronous_commit TO off")
        leagues, _ = _services_fill(
            games=games, bot_ids=bot_ids, bots_per_league=bots_per_league,
            fit_every=fit_every, seed=seed,
        )  # fmt: skip
    else:
        per_league = bots_per_league * (bots_per_league - 1)  # a 2-game set per pairing
        leagues = max(0, math.ceil((games - have) / per_league))
        tasks = leagues_plan(
            leagues=leagues, bot_ids=bot_ids, bots_per_league=bots_per_league,
            rng=random.Random(seed + have), label=f"pool {seed}-{have}",
        )  # fmt: skip
        print(f"{leagues} leagues planned in {time.perf_counter() - started:.1f} s", flush=True)
        leagues_write(
            tasks, processes=processes, chunk_leagues=chunk_leagues, fit_every=fit_every,
            distinct_logs=distinct_logs, goal=games,
        )  # fmt: skip
    pool_reads_changed(bot_ids)
    if connection.vendor == "postgresql" and leagues and not connection.in_atomic_block:
        vacuumed = time.perf_counter()
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
        print(f"VACUUM ANALYZE in {time.perf_counter() - vacuumed:.0f} s", flush=True)
    return PoolFilled(
        leagues=leagues, games=_finished_games(), seconds=time.perf_counter() - started
    )


def pool_reads_changed(bot_ids: list[int]) -> None:
    """Invalidate the cached reads a filled pool changes (as each stored game does)."""
    from tournaments.read_cache import reads_changed

    reads_changed("leagues", "games", "ratings", *(f"bot:{b}" for b in bot_ids))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--bots", type=int, default=40)
    parser.add_argument("--bots-per-league", type=int, default=10)
    parser.add_argument(
        "--fit-every", type=int, default=100, help="Fit the pool every N leagues (0: at the end)."
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--processes", type=int, default=os.cpu_count() or 1, help="Worker processes (0: none)."
    )
    parser.add_argument("--chunk-leagues", type=int, default=10, help="Leagues per transaction.")
    parser.add_argument(
        "--distinct-logs",
        type=int,
        default=0,
        help="Games take their logs from this many games played once (0: each its own seed).",
    )
    parser.add_argument("--services", action="store_true", help="Through the services, slowly.")
    args = parser.parse_args()
    import django

    django.setup()
    filled = pool_fill(
        games=args.games,
        bots=args.bots,
        bots_per_league=args.bots_per_league,
        fit_every=args.fit_every,
        seed=args.seed,
        processes=args.processes,
        chunk_leagues=args.chunk_leagues,
        distinct_logs=args.distinct_logs,
        services=args.services,
    )
    print(f"{filled.games} games in the pool; {filled.leagues} leagues in {filled.seconds:.0f} s")


if __name__ == "__main__":
    main()
