"""League throughput, end to end: a two-player league of 8 SDK example bots (28 matches, 56
games) played by a real Celery worker over a real Redis and database, beside the bare HTTP floor
measured in the same run. Run from the repository root:

    .venv/bin/python -m benchmarks.league                 # fast bots (the SDK examples as they are)
    .venv/bin/python -m benchmarks.league --delay-ms 50   # every bot takes 50 ms per move
    .venv/bin/python -m benchmarks.league --workers 2 --concurrency 16 --rounds 3
                                                          # a worker per core, 3 leagues

Each bot is its own `python -m bots_sdk serve` process on 127.0.0.1. The worker runs with
`--pool threads --concurrency N` (default 32, so all 28 matches are in flight at once). The
database is a fresh SQLite file unless DATABASE_URL is set. The floor is the same number of
`POST /move` calls, plain aiohttp on keep-alive connections with as many calls in flight as the
league had games, sending real move requests to the same bot processes: no engine, no database,
no signing, no Celery.

Reported: games/s and moves/s over the whole league (from the start request to the last game
stored; this process, which starts the league as the web server would, has imported the task
modules and opened its broker connection before the clock starts, as a running server has),
the rate while every game was in flight (the sum over games of moves / game duration, which the
tail of the last long games does not dilute), when the matches were sent and had begun, the
worker's CPU seconds, and the floor. Last, league / floor split exactly into its two factors:
the whole machine's CPU per move (floor over league) and the share of the cores busy (league
over floor), so a run shows whether the league lost to the floor by needing more CPU a move or
by leaving cores idle (its start, its tail, waiting). With `--rounds N` the workers and bots play
N leagues, each followed by its floor, and the median league / floor is printed last: one
round's ratio moves with the machine's speed from one second to the next.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bots_sdk.examples import expert, greedy, variants
from bots_sdk.examples import random as random_bot

ROOT = Path(__file__).resolve().parents[1]
BOTS = {
    "greedy": greedy.choose,
    "random": random_bot.choose,
    "expert": expert.choose,
    "cautious": variants.cautious,
    "sweeper": variants.sweeper,
    "counter": variants.counter,
    "random7": variants.random_7,
    "random42": variants.random_42,
}
DELAY_ENV = "ESCOBA_BENCH_DELAY_MS"


def _delayed(choose):
    """The bot as served: it waits ESCOBA_BENCH_DELAY_MS before each move (0: not at all)."""
    delay = int(os.environ.get(DELAY_ENV, "0")) / 1000

    def choose_slowly(state):
        if delay:
            time.sleep(delay)
        return choose(state)

    return choose_slowly


# Targets for `python -m bots_sdk serve benchmarks.league:bot_<name>`.
for _name, _choose in BOTS.items():
    globals()[f"bot_{_name}"] = _delayed(_choose)


def say(message: str) -> None:
    print(message, flush=True)


def wait_http(url: str, timeout: float = 30) -> None:
    from scripts.processes import wait_for_http

    if not wait_for_http(url, timeout=timeout, interval=0.1):
        raise SystemExit(f"{url} did not answer")


def start_bots(env: dict, delay_ms: int) -> tuple[list[subprocess.Popen], dict[str, str]]:
    from scripts.private_redis import free_ports

    processes, urls = [], {}
    for name, port in zip(BOTS, free_ports(len(BOTS)), strict=True):
        command = [sys.executable, "-m", "bots_sdk", "serve", f"benchmarks.league:bot_{name}"]
        command += ["--port", str(port), "--name", name, "--log-level", "warning"]
        processes.append(
            subprocess.Popen(
                command, cwd=ROOT, env={**env, DELAY_ENV: str(delay_ms)}, stdin=subprocess.DEVNULL
            )
        )
        urls[name] = f"http://127.0.0.1:{port}"
    for url in urls.values():
        wait_http(url)
    return processes, urls


def sample_bodies(count: int = 400) -> list[bytes]:
    """Real move requests from random classic games, as a league sends them."""
    import orjson

    from games.engine import Game, Ruleset
    from games.wire import move_request

    rng = random.Random(7)
    ruleset = Ruleset.from_preset("classic")
    bodies: list[bytes] = []
    seed = 0
    while len(bodies) < count:
        game = Game.new(ruleset, seed=seed)
        seed += 1
        while not game.is_over and len(bodies) < count:
            view = game.view(game.current_seat)
            body = move_request(
                view, game_id=1, timeout_ms=1000, seat_names=["a", "b"],
                latency_ms=1.0, time_bank_ms=1000,
            )  # fmt: skip
            bodies.append(orjson.dumps(body))
            game.apply(rng.choice(view.legal_moves))
    return bodies


async def floor(urls: list[str], moves: int, streams: int) -> float:
    """Seconds for ``moves`` plain keep-alive POST /move calls, ``streams`` at a time."""
    import aiohttp

    bodies = sample_bodies()
    per_stream = [moves // streams + (1 if i < moves % streams else 0) for i in range(streams)]
    headers = {"Content-Type": "application/json"}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:

        async def stream(index: int, calls: int) -> None:
            pair = [urls[index % len(urls)], urls[(index * 3 + 1) % len(urls)]]
            for call in range(calls):
                body = bodies[(index * 37 + call) % len(bodies)]
                async with session.post(f"{pair[call % 2]}/move", data=body, headers=headers) as r:
                    await r.read()

        started = time.perf_counter()
        await asyncio.gather(*(stream(i, n) for i, n in enumerate(per_stream)))
        return time.perf_counter() - started


def worker_command(number: int, concurrency: int) -> list[str]:
    from scripts.processes import celery_worker_command

    return celery_worker_command(pool="threads", concurrency=concurrency, loglevel="WARNING",
                                 hostname=f"bench{number}@localhost", alone=True)  # fmt: skip


def run(args: argparse.Namespace) -> None:
    from scripts.processes import private_service

    with private_service(prefix="escoba-bench-") as (env, children):
        bots, urls = start_bots(env, args.delay_ms)
        children += bots
        workers = [
            subprocess.Popen(
                worker_command(number, args.concurrency),
                cwd=ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
            )
            for number in range(args.workers)
        ]
        children += workers
        measure(args, urls, workers, bots)


def slots_kept_busy(league, slots: int) -> float | None:
    """The share of the workers' match slots (threads) that held a match from the first match's
    begin to the last one's, while matches still waited in the queue: 1.0 when every slot that
    freed took the next match at once, less when matches waited behind finished ones (waves).
    None when every match began at once (nothing waited)."""
    spans = [
        (m.started_at.timestamp(), m.finished_at.timestamp())
        for m in league.matches.only("started_at", "finished_at")
    ]
    first, last = min(s for s, _ in spans), max(s for s, _ in spans)
    if last - first < 0.5:
        return None
    held = sum(min(end, last) - start for start, end in spans if start < last)
    return held / (slots * (last - first))


def matches_by_worker(league, started_at: float) -> str:
    """Each worker's matches and when its last one ended (seconds from the start)."""
    from django.db.models import Count, Max

    rows = league.matches.values("worker").annotate(n=Count("id"), end=Max("finished_at"))
    return ", ".join(
        f"{row['worker'].split('@')[0]}: {row['n']} (last ended at "
        f"{row['end'].timestamp() - started_at:.1f} s)"
        for row in rows.order_by("worker")
    )


def machine_cpu() -> float:
    """CPU seconds every process on the machine has used (all cores), from ``/proc/stat``."""
    import psutil

    times = psutil.cpu_times()
    return times.user + times.nice + times.system + times.irq + times.softirq


def cpu_seconds(processes: list[subprocess.Popen]) -> float:
    import psutil

    times = [psutil.Process(p.pid).cpu_times() for p in processes]
    return sum(t.user + t.system for t in times)


def measure(
    args: argparse.Namespace,
    urls: dict[str, str],
    workers: list[subprocess.Popen],
    bot_processes: list[subprocess.Popen],
) -> None:
    import django

    django.setup()
    from config.celery_app import app

    names = [f"bench{number}@localhost" for number in range(len(workers))]
    deadline = time.monotonic() + 60
    while len(app.control.ping(destination=names, timeout=0.5)) < len(names):
        if time.monotonic() > deadline or any(w.poll() is not None for w in workers):
            raise SystemExit("the workers did not start")
    # This process starts the league as the web server would, but a web server has long been
    # running when a league starts: import the task modules and open the broker connection now,
    # not on the clock (0.6 s of imports on the first send, the first match begun at 0.9 s).
    app.loader.import_default_modules()
    with app.producer_or_acquire() as producer:
        producer.connection.ensure_connection()
    ratios = []
    for number in range(args.rounds):
        if args.rounds > 1:
            say(f"--- round {number + 1} of {args.rounds}")
        ratios.append(league_and_floor(args, urls, workers, bot_processes))
    if args.rounds > 1:
        each = ", ".join(f"{ratio:.2f}" for ratio in ratios)
        say(f"league / floor over {args.rounds} rounds: median {statistics.median(ratios):.2f}, "
            f"{min(ratios):.2f}-{max(ratios):.2f} ({each})")  # fmt: skip


def league_and_floor(
    args: argparse.Namespace,
    urls: dict[str, str],
    workers: list[subprocess.Popen],
    bot_processes: list[subprocess.Popen],
) -> float:
    """One league on the running workers, then its floor; prints both and returns the ratio."""
    from django.db.models import F, Max, Min, Sum

    from tournaments.models import Game, League, Seat
    from tournaments.services.bots import bot_register
    from tournaments.services.league_creation import league_create, system_user
    from tournaments.services.league_schedules import league_start

    # Names of this round's own: the names of bots and leagues are unique (and an owner's bots
    # are limited), so each round, and each run against a kept DATABASE_URL, has its own.
    run_tag = os.urandom(3).hex()
    owner = system_user(f"bench-{run_tag}")
    bots = [
        bot_register(owner=owner, name=f"{name}-{run_tag}", url=url) for name, url in urls.items()
    ]
    league = league_create(
        creator=owner,
        name=f"bench-{run_tag}",
        bot_ids=[b.id for b in bots],
        games_per_pairing=args.games_per_pairing,
        move_timeout_ms=2000,
    )
    load_before = os.getloadavg()[0]
    cpu_before = cpu_seconds(workers)
    bots_cpu_before = cpu_seconds(bot_processes)
    machine_before = machine_cpu()
    started = time.perf_counter()
    started_at = time.time()
    league_start(league_id=league.id)
    sent = time.perf_counter() - started
    while League.objects.get(pk=league.id).status != League.Status.FINISHED:
        if time.perf_counter() - started > args.timeout:
            raise SystemExit("the league did not finish in time")
        time.sleep(0.05)
    wall = time.perf_counter() - started
    machine_league = machine_cpu() - machine_before
    worker_cpu = cpu_seconds(workers) - cpu_before
    bots_cpu = cpu_seconds(bot_processes) - bots_cpu_before
    load_after = os.getloadavg()[0]

    games = Game.objects.filter(league=league)
    figures = games.aggregate(moves=Sum("moves"), first=Min("started_at"), last=Max("finished_at"))
    moves, count = figures["moves"], games.count()
    in_flight = sum(
        g.moves / (g.finished_at - g.started_at).total_seconds()
        for g in games.only("moves", "started_at", "finished_at")
    )
    durations = sorted((g.finished_at - g.started_at).total_seconds() for g in games)
    # Where the wall time went: until every match had begun, until the first game ended, the
    # last game's end (the rest is marking the league finished and this script noticing).
    begun = [g.started_at.timestamp() - started_at for g in games]
    ended = sorted(g.finished_at.timestamp() - started_at for g in games)
    # The bots' round trip as the caller timed it, against the time a game spent per move.
    seats = Seat.objects.filter(game__league=league, latency_mean_ms__isnull=False)
    round_trip = seats.aggregate(t=Sum(F("latency_mean_ms") * F("moves")))["t"] / moves
    per_move = sum(durations) / moves * 1000
    floor_cpu_before = time.process_time(), cpu_seconds(bot_processes), machine_cpu()
    floor_seconds = asyncio.run(floor(list(urls.values()), moves, streams=count))
    floor_client_cpu = time.process_time() - floor_cpu_before[0]
    floor_bots_cpu = cpu_seconds(bot_processes) - floor_cpu_before[1]
    machine_floor = machine_cpu() - floor_cpu_before[2]
    cores = os.cpu_count() or 1
    faults = games.aggregate(f=Sum("faults"))["f"]

    say(f"bots: {', '.join(urls)} (delay {args.delay_ms} ms per move)")
    say(f"league: {count} games, {moves} moves, {faults} faults, {wall:.2f} s, "
        f"{len(workers)} worker(s) x {args.concurrency} threads")  # fmt: skip
    say(f"  {count / wall:.2f} games/s, {moves / wall:.0f} moves/s over the whole league")
    say(f"  {in_flight:.0f} moves/s while every game was in flight")
    say(f"  game durations: min {durations[0]:.2f} s, median {durations[len(durations) // 2]:.2f}"
        f" s, max {durations[-1]:.2f} s")  # fmt: skip
    say(f"  timeline: matches sent at {sent:.2f} s, every match begun at {max(begun):.2f} s "
        f"(first {min(begun):.2f} s), "
        f"first game stored at {ended[0]:.2f} s, half at {ended[len(ended) // 2]:.2f} s, "
        f"the last at {ended[-1]:.2f} s; league finished at {wall:.2f} s")  # fmt: skip
    busy = slots_kept_busy(league, len(workers) * args.concurrency)
    say(f"  matches by worker: {matches_by_worker(league, started_at)}; slots kept busy while "
        f"matches waited: {'-' if busy is None else f'{busy:.0%}'}")  # fmt: skip
    say(f"  per move: {per_move:.1f} ms of game time, of which the bot round trip "
        f"{round_trip:.1f} ms (caller's timing)")  # fmt: skip
    say(f"  worker CPU: {worker_cpu:.2f} s ({worker_cpu / moves * 1000:.2f} ms per move)")
    say(f"  bots CPU: {bots_cpu:.2f} s ({bots_cpu / moves * 1000:.2f} ms per move)")
    say(f"floor: {moves} plain keep-alive POST /move, {count} in flight: {floor_seconds:.2f} s, "
        f"{moves / floor_seconds:.0f} moves/s")  # fmt: skip
    say(f"  floor CPU per move: client {floor_client_cpu / moves * 1000:.2f} ms, bots "
        f"{floor_bots_cpu / moves * 1000:.2f} ms")  # fmt: skip
    ratio = (moves / wall) / (moves / floor_seconds)
    say(f"league / floor: {ratio:.2f}")
    # The ratio is exactly (the floor's machine CPU per move / the league's) x (the share of
    # the cores busy during the league / during the floor): which of the two holds it back.
    league_busy = machine_league / (wall * cores)
    floor_busy = machine_floor / (floor_seconds * cores)
    say(f"  = CPU per move, whole machine: floor {machine_floor / moves * 1000:.2f} ms / league "
        f"{machine_league / moves * 1000:.2f} ms = {machine_floor / machine_league:.2f}, "
        f"x cores busy: league {league_busy:.0%} / floor {floor_busy:.0%} = "
        f"{league_busy / floor_busy:.2f} ({cores} cores, all processes)")  # fmt: skip
    say(f"load average (1 min): {load_before:.1f} at the start, {load_after:.1f} at the end")
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--delay-ms", type=int, default=0, help="Bot think time per move.")
    parser.add_argument("--concurrency", type=int, default=32, help="Threads per worker.")
    parser.add_argument("--workers", type=int, default=1, help="Worker processes.")
    parser.add_argument(
        "--games-per-pairing", type=int, default=2, help="2: 56 games; 8: 224 games."
    )
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="Leagues played one after the other on the same workers, each with its floor; "
        "prints the median league / floor.",
    )
    run(parser.parse_args())


if __name__ == "__main__":
    main()
