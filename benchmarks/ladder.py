"""The ladder keeps a worker busy, and ranks newcomers within their first minute.

    .venv/bin/python -m benchmarks.ladder                 # the full run: 10 minutes of ladder
    .venv/bin/python -m benchmarks.ladder --minutes 2     # a shorter try

Twenty bots, each its own ``python -m bots_sdk serve`` process on 127.0.0.1 thinking 50 ms per
move (the SDK's example strategies, owned by twenty different accounts), a real Redis, a fresh
SQLite database (or DATABASE_URL), one real Celery worker (``--pool threads --concurrency 16``,
with as many ladder sets in flight: a set waiting for a thread would only make a newcomer's
first set wait behind it) and real Celery beat ticking the ladder every ``ESCOBA_LADDER_TICK_S``
(5 s). Nobody creates a league: sixteen bots are registered at the start, the other four one by
one during the run, and everything else is the arena's own doing (protocol checks of the
newcomers, the matchmaker, the sets, the ratings).

Reported:

- **worker busy**: over the measured window (from the first set's start, ``--minutes`` long),
  the time the worker's threads spent playing ladder sets (each set's begin-to-end interval,
  clipped to the window) over threads × window; goal ≥ 90 %;
- **first game**: per bot, from its registration to the start of its first ladder game; goal:
  every bot within 60 s;
- **fit lag**: per rated set finished in the window, from its end to the first published fit
  holding its raw score, and to the first fit after its baseline correction (the deal values of
  its games computed by a ``baselines`` worker of its own, as compose runs it); goal: under a
  minute at full speed (``--delay-ms 0``); and the baseline's CPU per rated game;
- sets and games played, rated games, ratings, and the load average.
"""

from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.league import BOTS, DELAY_ENV, cpu_seconds, say, wait_http, worker_command
from scripts.processes import celery_beat_command, celery_worker_command, wait_for_workers

ROOT = Path(__file__).resolve().parents[1]
STRATEGIES = list(BOTS)


def start_bots(env: dict, count: int, delay_ms: int, processes: list[subprocess.Popen]) -> list:
    """Start the bots, adding each process to ``processes`` at once (so it is stopped whatever
    happens next); returns (name, url) per bot once all answer."""
    from scripts.private_redis import free_port

    bots = []
    for number in range(count):
        strategy = STRATEGIES[number % len(STRATEGIES)]
        name = f"{strategy}-{number:02d}"
        port = free_port()
        command = [sys.executable, "-m", "bots_sdk", "serve", f"benchmarks.league:bot_{strategy}"]
        command += ["--port", str(port), "--name", name, "--log-level", "warning"]
        processes.append(
            subprocess.Popen(
                command, cwd=ROOT, env={**env, DELAY_ENV: str(delay_ms)}, stdin=subprocess.DEVNULL
            )
        )
        bots.append((name, f"http://127.0.0.1:{port}"))
    for _, url in bots:
        wait_http(url, timeout=180)  # twenty interpreters starting at once on a busy machine
    return bots


def run(args: argparse.Namespace) -> None:
    from scripts.processes import private_service

    settings = {
        "ESCOBA_LADDER_POOLS": "classic/2p",
        "ESCOBA_LADDER_SETS_IN_FLIGHT": str(args.sets_in_flight),
        "ESCOBA_LADDER_MAX_SETS_PER_BOT": str(args.max_sets_per_bot),
        "ESCOBA_LADDER_TICK_S": "5",
        "ESCOBA_SWEEP_INTERVAL_S": "60",
    }
    with private_service(prefix="escoba-ladder-bench-", **settings) as (env, children):
        data_dir = Path(env["ESCOBA_DATA_DIR"])
        bots = start_bots(env, args.bots, args.delay_ms, children)
        worker = subprocess.Popen(
            [*worker_command(0, args.concurrency), "--queues", "games,maintenance"],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        children.append(worker)
        # The baseline values of rated deals: their own process, as compose runs them.
        baselines = subprocess.Popen(
            celery_worker_command(
                pool="prefork", concurrency=1, queues="baselines",
                hostname="baselines@localhost", loglevel="WARNING",
            ),
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        children.append(baselines)
        beat = subprocess.Popen(
            celery_beat_command(loglevel="WARNING", schedule=data_dir / "beat-schedule"),
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        children.append(beat)
        measure(args, bots, worker, baselines)


def measure(
    args: argparse.Namespace, bots: list, worker: subprocess.Popen, baselines: subprocess.Popen
) -> None:
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.db.models import Min
    from django.utils import timezone

    from tournaments.models import (
        Bot,
        DealBaseline,
        Game,
        League,
        Match,
        RatedSet,
        Rating,
        RatingFit,
        Seat,
    )
    from tournaments.services.bots import bot_register

    if not wait_for_workers(["bench0@localhost"], alive=lambda: worker.poll() is None):
        raise SystemExit("the worker did not start")
    users = get_user_model()
    registered: dict[int, datetime.datetime] = {}

    def register(name: str, url: str) -> None:
        owner = users.objects.create_user(username=f"owner-{name}")
        bot = bot_register(owner=owner, name=name, url=url)
        registered[bot.id] = bot.created_at

    first, late = bots[: args.bots - args.late], bots[args.bots - args.late :]
    load_before = os.getloadavg()
    cpu_before = cpu_seconds([worker])
    baseline_cpu_before = cpu_seconds([baselines])
    for name, url in first:
        register(name, url)
    say(f"registered {len(first)} bots; {len(late)} more will arrive during the run")

    def league() -> League | None:
        return League.objects.filter(kind=League.Kind.LADDER).first()

    deadline = time.monotonic() + 120
    while league() is None or not Match.objects.filter(started_at__isnull=False).exists():
        if time.monotonic() > deadline:
            raise SystemExit("the ladder did not start within two minutes")
        time.sleep(0.5)
    window_start = Match.objects.aggregate(t=Min("started_at"))["t"]
    window = datetime.timedelta(minutes=args.minutes)
    # Late bots arrive spread over the window, the last one a minute and a quarter before its
    # end (or half-way through a short window), so each has its first minute inside the run.
    spread = max(window - datetime.timedelta(seconds=75), window / 2)
    arrivals = [window_start + spread * (i + 1) / len(late) for i in range(len(late))]
    say(f"first set began {(window_start - min(registered.values())).total_seconds():.1f} s "
        f"after the first registration; measuring {args.minutes:g} minutes")  # fmt: skip
    while timezone.now() < window_start + window:
        while arrivals and timezone.now() >= arrivals[0]:
            arrivals.pop(0)
            register(*late.pop(0))
        if worker.poll() is not None:
            raise SystemExit("the worker died")
        time.sleep(0.5)
    window_end = window_start + window
    worker_cpu = cpu_seconds([worker]) - cpu_before
    baseline_cpu = cpu_seconds([baselines]) - baseline_cpu_before
    time.sleep(args.settle_s)  # the last results' values, corrections and fits

    busy = 0.0
    ladder = league()
    for started, finished in ladder.matches.filter(started_at__isnull=False).values_list(
        "started_at", "finished_at"
    ):
        begin = max(started, window_start)
        end = min(finished or window_end, window_end)
        busy += max(0.0, (end - begin).total_seconds())
    busy_share = busy / (args.concurrency * window.total_seconds())

    firsts = dict(
        Seat.objects.filter(game__league=ladder, game__started_at__isnull=False)
        .values_list("bot_id")
        .annotate(t=Min("game__started_at"))
        .values_list("bot_id", "t")
    )
    waits = {
        Bot.objects.get(pk=bot_id).name: (
            (firsts[bot_id] - at).total_seconds() if bot_id in firsts else None
        )
        for bot_id, at in registered.items()
    }
    finished_sets = ladder.matches.filter(status=Match.Status.FINISHED)
    games = Game.objects.filter(league=ladder, status=Game.Status.FINISHED)
    say(f"bots: {args.bots} ({args.delay_ms} ms per move), worker: {args.concurrency} threads, "
        f"sets in flight: {args.sets_in_flight}, at most {args.max_sets_per_bot} "
        "per bot")  # fmt: skip
    say(f"worker busy: {busy_share:.1%} of {args.concurrency} threads over "
        f"{window.total_seconds():.0f} s (goal >= 90 %)")  # fmt: skip
    worst = max((w for w in waits.values() if w is not None), default=None)
    never = sorted(name for name, w in waits.items() if w is None)
    say(f"first game after registration: worst {worst:.1f} s (goal <= 60 s)"
        + (f"; never: {', '.join(never)}" if never else ""))  # fmt: skip
    for name, wait in sorted(waits.items(), key=lambda item: item[1] or 1e9):
        say(f"  {name:<14} {'-' if wait is None else f'{wait:6.1f} s'}")
    say(f"sets finished: {finished_sets.count()}, games finished: {games.count()}, "
        f"rated: {games.filter(rated=True).count()}, ratings: "
        f"{Rating.objects.filter(pool=ladder.pool).count()}")  # fmt: skip
    say(f"worker CPU: {worker_cpu:.1f} s over the run")
    lag_report(ladder, window_start, window_end, baseline_cpu, RatedSet, RatingFit, DealBaseline)
    say(f"load average: {load_before} at the start, {os.getloadavg()} at the end")


def percentiles(values: list[float]) -> str:
    if not values:
        return "none"
    ordered = sorted(values)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return f"p50 {at(0.5):.1f} s, p95 {at(0.95):.1f} s, max {ordered[-1]:.1f} s"


def lag_report(ladder, window_start, window_end, baseline_cpu, RatedSet, RatingFit, DealBaseline):  # noqa: N803 (models)
    """How far the published fit trails the results: for each rated set that finished in the
    window, from its match's end to the first published fit holding it (raw), and to the first
    fit after its baseline correction (corrected); and the baseline's CPU per rated game."""
    fits = list(
        RatingFit.objects.filter(pool=ladder.pool)
        .order_by("id")
        .values_list("created_at", "last_set_id")
    )
    raw, corrected, uncorrected = [], [], 0
    sets = RatedSet.objects.filter(
        match__league=ladder,
        match__finished_at__gte=window_start,
        match__finished_at__lt=window_end,
    ).values_list("id", "match__finished_at", "corrected_at")
    for set_id, finished, corrected_at in sets:
        holding = next((at for at, last in fits if last >= set_id), None)
        if holding is not None:
            raw.append((holding - finished).total_seconds())
        if corrected_at is None:
            uncorrected += 1
            continue
        after = next((at for at, _ in fits if at >= corrected_at), None)
        if after is not None:
            corrected.append((after - finished).total_seconds())
    say(f"fit lag behind a set's end, raw score: {percentiles(raw)} ({len(raw)} sets)")
    say(f"fit lag behind a set's end, corrected: {percentiles(corrected)} ({len(corrected)} "
        f"sets; {uncorrected} not corrected by the end; goal: under 60 s)")  # fmt: skip
    valued = DealBaseline.objects.filter(game__league=ladder)
    games = valued.count()
    cpu_ms = sum(valued.values_list("cpu_ms", flat=True)) / max(1, games)
    say(f"baseline: {games} rated games valued, {cpu_ms:.1f} ms CPU per game in the plays; "
        f"its worker's CPU over the window {baseline_cpu:.1f} s")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="Length of the window.")
    parser.add_argument("--bots", type=int, default=20)
    parser.add_argument("--late", type=int, default=4, help="Bots registered during the run.")
    parser.add_argument("--delay-ms", type=int, default=50, help="Bot think time per move.")
    parser.add_argument("--concurrency", type=int, default=16, help="Worker threads.")
    parser.add_argument("--sets-in-flight", type=int, default=16)
    parser.add_argument("--max-sets-per-bot", type=int, default=2)
    parser.add_argument("--settle-s", type=float, default=20.0, help="Wait after the window.")
    run(parser.parse_args())


if __name__ == "__main__":
    main()
