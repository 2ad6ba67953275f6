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

`--instructions` counts instead the instructions this process runs for one round (valgrind's
callgrind, user space only; the bots are not counted): the same games give the same count
within 0.1 %, whatever else the machine runs, where CPU time a move moves by 10-20 % with the
load. It runs the round in a child under `valgrind --tool=callgrind --instr-atstart=no`, with
the instrumentation on from the warmed-up round's start to its end (`callgrind_control`); about
a minute for the default 8 games. Other CPUs than this one's may run other code paths (SHA-256
in software under valgrind, for one): compare trees by it, not machines.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


def instructions(games: int) -> None:
    """Run one round of `games` games in a child under callgrind, instrumented from its start
    to its end only, and print the instructions a move."""
    with tempfile.TemporaryDirectory(prefix="escoba-loop-cg-") as directory:
        base = Path(directory)
        command = [
            "valgrind", "--tool=callgrind", "--instr-atstart=no",
            f"--callgrind-out-file={base / 'out'}",
            sys.executable, "-m", "benchmarks.worker_loop", "--games", str(games),
            "--child", str(base),
        ]  # fmt: skip
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for(base / "ready", child)
            toggle = ["callgrind_control", "-i"]
            subprocess.run([*toggle, "on", str(child.pid)], check=True, capture_output=True)
            (base / "go").touch()
            wait_for(base / "moves", child)
            subprocess.run([*toggle, "off", str(child.pid)], check=True, capture_output=True)
            (base / "done").touch()
            child.wait(timeout=600)
        finally:
            if child.poll() is None:
                child.kill()
        moves = int((base / "moves").read_text())
        totals = next(
            line for line in (base / "out").read_text().splitlines() if line.startswith("totals:")
        )
        count = int(totals.split()[1])
        print(
            f"worker loop, {games} games at once: {moves} moves, {count:,} instructions, "
            f"{count // moves:,} a move (callgrind, user space)"
        )


def wait_for(path: Path, child: subprocess.Popen) -> None:
    while not path.exists():
        if child.poll() is not None:
            raise RuntimeError(f"the callgrind child ended ({child.returncode}) before {path}")
        time.sleep(0.2)


def child_round(games: int, directory: str) -> None:
    """The child of `--instructions`: warm up, then play the round between the parent's signals."""
    from benchmarks.league import start_bots
    from scripts.private_redis import PrivateRedis
    from scripts.processes import stop_processes

    base = Path(directory)
    with PrivateRedis() as redis_server:
        setup(redis_server.url)
        processes, urls = start_bots(dict(os.environ), 0)
        try:
            play_round(list(urls.values()), 4, 10_000)  # warm up
            (base / "ready").touch()
            while not (base / "go").exists():
                time.sleep(0.2)
            moves, _ = play_round(list(urls.values()), games, 0)
            (base / "moves").write_text(str(moves))
            while not (base / "done").exists():
                time.sleep(0.2)
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
    parser.add_argument("--games", type=int, help="56 (8 with --instructions)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--profile", type=int, default=0, metavar="N")
    parser.add_argument("--instructions", action="store_true")
    parser.add_argument("--child", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child_round(args.games, args.child)
    elif args.instructions:
        instructions(args.games or 8)
    else:
        args.games = args.games or 56
        run(args)


if __name__ == "__main__":
    main()
