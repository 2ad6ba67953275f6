"""The league worker's games loop alone: CPU per move of what a worker process does for a move.

    .venv/bin/python -m benchmarks.worker_loop                  # 56 games, 3 runs
    .venv/bin/python -m benchmarks.worker_loop --profile 25     # and the top 25 of a cProfile

N two-player classic games (pairings of the 8 SDK example bots of `benchmarks.league`, each its
own `python -m bots_sdk serve` process, requests signed) are handed to the match service's games
loop (`tournaments.services.matches.game_submit`: the shared `Caller`, the runner, the
live feeds publishing every play to a private Redis), all at once, from a plain thread, as match
tasks hand them over; the garbage collector is set as a ready worker sets it. Reported: this
process's CPU per move (`os.times`, user + system), which is what a league worker spends per move
whatever else runs on the machine, and the Redis server's. No Celery and no database:
`benchmarks.league` measures those with the rest.

`--profile N` runs one more round under `cProfile` on the loop's thread, by CPU time, and
prints the N functions with the most time of their own and the N with the most in total.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import tempfile
import time

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


def setup(redis_url: str) -> None:
    os.environ.update(
        DJANGO_SETTINGS_MODULE="config.settings.local",
        DEBUG="0",
        ESCOBA_DATA_DIR=tempfile.mkdtemp(prefix="escoba-loop-"),
        ESCOBA_ALLOW_PRIVATE_BOT_URLS="1",
        LOG_LEVEL="WARNING",
        REDIS_URL=redis_url,
    )
    import django

    django.setup()
    # The collector as a worker has it once ready (frozen start-up objects, a higher threshold).
    from config.celery_app import settle_garbage_collector

    settle_garbage_collector()


def play_round(urls: list[str], games: int, first_seed: int) -> tuple[int, float]:
    """Moves and wall seconds for `games` games submitted at once to the worker's loop."""
    from games.engine import Ruleset
    from tournaments.bot_calls.runner import BotEndpoint
    from tournaments.services.matches import GamePlan, MatchPlan, game_submit, games_loop

    ruleset = Ruleset.from_preset("classic")
    endpoints = [BotEndpoint(url, SECRET, name=f"bot{i}") for i, url in enumerate(urls)]
    pairs = [(a, b) for a in endpoints for b in endpoints if a is not b]
    plan = MatchPlan(
        match_id=1, league_id=1, ruleset=ruleset, timeout_ms=5000, max_faults=3, games=[]
    )
    started = time.perf_counter()
    futures = [
        game_submit(
            plan,
            GamePlan(
                game_id=first_seed + n,
                seed=first_seed + n,
                bots=list(pairs[n % len(pairs)]),
                seating=[0, 1],
            ),
        )
        for n in range(games)
    ]
    records = [future.result() for future in futures]
    elapsed = time.perf_counter() - started
    for n in range(games):
        games_loop.feeds.end(first_seed + n, "finished")
    faults = sum(len(record.faults) for record in records)
    assert faults == 0, f"{faults} faults"
    return sum(len(record.plays) for record in records), elapsed


def run(args: argparse.Namespace) -> None:
    import psutil

    from benchmarks.league import start_bots
    from scripts.private_redis import PrivateRedis
    from scripts.processes import stop_processes

    with PrivateRedis() as redis_server:
        setup(redis_server.url)
        redis_process = psutil.Process(redis_server.process.pid)
        processes, urls = start_bots(dict(os.environ), 0)
        try:
            play_round(list(urls.values()), 8, 10_000)  # warm up
            for index in range(args.runs):
                cpu, redis_cpu = os.times(), redis_process.cpu_times()
                moves, elapsed = play_round(list(urls.values()), args.games, index * 1000)
                after, redis_after = os.times(), redis_process.cpu_times()
                user, system = after.user - cpu.user, after.system - cpu.system
                redis_used = sum(redis_after[:2]) - sum(redis_cpu[:2])
                print(
                    f"worker loop, {args.games} games at once: {moves} moves in {elapsed:.2f} s, "
                    f"CPU {(user + system) / moves * 1e3:.3f} ms a move ({user / moves * 1e3:.3f}"
                    f" user, {system / moves * 1e3:.3f} system), Redis "
                    f"{redis_used / moves * 1e3:.3f} ms a move; load average "
                    f"{os.getloadavg()[0]:.2f}",
                    flush=True,
                )
            if args.profile:
                profile(list(urls.values()), args.games, args.profile)
        finally:
            stop_processes(processes)


def profile(urls: list[str], games: int, top: int) -> None:
    from tournaments.services.matches import games_loop

    loop, _, _ = games_loop.started()
    profiler = cProfile.Profile(time.process_time)
    # cProfile profiles the thread that enables it: the loop's.
    loop.call_soon_threadsafe(profiler.enable)
    time.sleep(0.1)
    moves, _ = play_round(urls, games, 50_000)
    loop.call_soon_threadsafe(profiler.disable)
    time.sleep(0.1)
    for order in ("tottime", "cumulative"):
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats(order).print_stats(top)
        print(f"--- profile of the loop thread, {moves} moves, by {order} ---")
        print(out.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=56)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--profile", type=int, default=0, metavar="N")
    run(parser.parse_args())


if __name__ == "__main__":
    main()
