"""How long a play takes from the worker to live viewers: the worker hands it to its live feed
(tournaments/live_feed.py ``LiveFeeds.play``, where the runner records it), and each viewer's
event stream (web/game_streams.py under uvicorn, as `make run` serves it) delivers the ``play``
event.

Run from the repository root:

    .venv/bin/python -m benchmarks.live_latency                      # the default scenarios
    .venv/bin/python -m benchmarks.live_latency --scenarios 1x1000@2 100x10@1 --plays 40
    .venv/bin/python -m benchmarks.live_latency --compare-with /tmp/old-tree --scenarios 1x25@50

A scenario ``GxV@R`` is G games in play at once, V viewers of each, R plays a second in each
game (``--plays`` plays per game). What runs: a private Redis, a SQLite database in a temporary
folder (the games, pending), uvicorn serving config/asgi.py (``--web-workers`` processes), the
publisher on an event loop thread of this process, and the viewers (aiohttp event-stream
clients) in ``--client-processes`` processes. The delay of each play to each viewer is its
event's arrival time minus its hand-over time, both read from the machine's monotonic clock
(the same in every process). Reported per scenario: p50, p99 and max, the deliveries, and the
machine's load (``uptime``) before and after. ``--compare-with DIR`` serves the same database
and Redis from another checkout too (another version of the live streams) and runs each
scenario on both, one after the other, in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.league import say, wait_http
from scripts.private_redis import PrivateRedis, free_port
from scripts.processes import stop_processes, uvicorn_args

ROOT = Path(__file__).resolve().parents[1]
EVENT_ID = re.compile(rb"^id: ([0-9a-f]+)\.([0-9]+)$", re.M)


def cpu_seconds(pid: int) -> float:
    """The CPU time (user and system) a process and its children (uvicorn's workers) have used
    so far."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if stat.parent.name == str(pid) or fields[1] == str(pid):
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def pending_games(count: int) -> list[int]:
    """``count`` pending games of seed 1, each in a match of its own (so none shares its deal
    with another game of its set), in a running league of two bots; their ids."""
    from django.contrib.auth import get_user_model

    from tournaments.models import Bot, Game, League, Match, Seat

    owner = get_user_model().objects.create_user(username="bench", password="bench-pass-123")
    bots = [
        Bot.objects.create(owner=owner, name=n, url=f"http://127.0.0.1:9/{n}", secret="x")
        for n in ("a", "b")
    ]
    league = League.objects.create(
        name="live", creator=owner, ruleset={"name": "classic", "version": 1},
        pool="classic/2p", players=2, seed=1, status=League.Status.RUNNING, rated=False,
    )  # fmt: skip
    ids = []
    for number in range(1, count + 1):
        match = Match.objects.create(league=league, number=number, round=1, seed=1)
        game = Game.objects.create(
            league=league, match=match, number=1, seed=1, seating=[b.pk for b in bots]
        )
        for seat, bot in enumerate(bots):
            Seat.objects.create(game=game, seat=seat, bot=bot, team=seat)
        ids.append(game.pk)
    return ids


def moves(count: int) -> list[tuple[int, str]]:
    """The first ``count`` plays (at most the whole game) of a game of seed 1, as (seat, move)."""
    import random

    from games.engine import Game, Ruleset

    choices, plays = random.Random(1), []
    game = Game.new(Ruleset.from_dict({"name": "classic", "version": 1}), 1)
    while not game.is_over and len(plays) < count:
        seat = game.current_seat
        move = choices.choice(game.view(seat).legal_moves)
        game.apply(move)
        plays.append((seat, move.to_str()))
    return plays


# -- viewers (in their own processes) --------------------------------------------------------


def _viewers(base_url: str, games: list[int], plays: int, ready, results) -> None:
    """One client process: its streams, until each saw the last play (reconnecting with
    ``Last-Event-ID`` as a browser does when a stream ends early); arrival times back."""
    import aiohttp

    async def follow(session, game_id: int, connected: asyncio.Event) -> dict[int, float]:
        arrivals: dict[int, float] = {}
        headers: dict[str, str] = {}
        started = False  # a run of this scenario (its snapshot at 0) was seen, not an older one
        while plays not in arrivals:
            async with session.get(f"{base_url}/live/games/{game_id}/", headers=headers) as got:
                assert got.status == 200, got.status
                async for chunk in got.content.iter_any():
                    now = time.perf_counter()
                    for run, number in EVENT_ID.findall(chunk):
                        n = int(number)
                        headers["Last-Event-ID"] = f"{run.decode()}.{n}"
                        if n == 0:
                            started = True
                            arrivals.clear()
                            connected.set()
                        elif started:
                            arrivals.setdefault(n, now)
                    if plays in arrivals:
                        break
        return arrivals

    async def run() -> list[tuple[int, dict[int, float]]]:
        limit = aiohttp.TCPConnector(limit=0)
        timeout = aiohttp.ClientTimeout(total=None, sock_read=120)
        async with aiohttp.ClientSession(connector=limit, timeout=timeout) as session:
            connected = [asyncio.Event() for _ in games]
            tasks = [
                asyncio.create_task(follow(session, game_id, on))
                for game_id, on in zip(games, connected, strict=True)
            ]
            await asyncio.wait_for(asyncio.gather(*(c.wait() for c in connected)), 400)
            ready.put(len(games))
            done = await asyncio.wait_for(asyncio.gather(*tasks), 600)
            return list(zip(games, done, strict=True))

    results.put(asyncio.run(run()))


# -- one scenario ----------------------------------------------------------------------------


def measure(
    base_url: str,
    games: list[int],
    viewers: int,
    plays: int,
    rate: float,
    processes: int,
    server_pid: int,
) -> tuple[list[float], float]:
    """Delays (seconds) of every play to every viewer: ``viewers`` of each of ``games``, each
    game replayed from its start at ``rate`` plays a second; and the CPU seconds the server
    used from the moment every viewer was connected to the last play delivered."""
    from tournaments.live_feed import LiveFeeds

    script = moves(plays)
    streams = [game_id for game_id in games for _ in range(viewers)]
    context = multiprocessing.get_context("fork")
    ready, results = context.Queue(), context.Queue()
    shares = [streams[i::processes] for i in range(processes)]
    clients = [
        context.Process(target=_viewers, args=(base_url, share, len(script), ready, results))
        for share in shares
        if share
    ]
    for client in clients:  # before the publisher's thread: a fork copies no running thread
        client.start()
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    feeds = LiveFeeds(loop)
    for game_id in games:
        feeds.start(game_id)
    try:
        connected = sum(ready.get(timeout=450) for _ in clients)
        assert connected == len(streams), connected
        cpu = cpu_seconds(server_pid)
        sent: dict[tuple[int, int], float] = {}
        # Each game's plays spread over the interval, the games staggered within it.
        interval = 1 / rate
        start = time.perf_counter() + 0.2
        for number, (seat, move) in enumerate(script, 1):
            for index, game_id in enumerate(games):
                due = start + (number - 1) * interval + index * interval / len(games)
                pause = due - time.perf_counter()
                if pause > 0:
                    time.sleep(pause)
                sent[game_id, number] = time.perf_counter()
                feeds.play(game_id, seat=seat, move=move, fault=None)
        delays = []
        for _ in clients:
            for game_id, arrivals in results.get(timeout=600):
                delays.extend(arrivals[n] - sent[game_id, n] for n in range(1, len(script) + 1))
        return delays, cpu_seconds(server_pid) - cpu
    finally:
        for client in clients:
            client.join(30)
            if client.is_alive():
                client.kill()
        stop_loop(loop, thread)


def stop_loop(loop: asyncio.AbstractEventLoop, thread: threading.Thread) -> None:
    """Stop the publisher's loop and its flusher (a last batch already went out)."""

    async def cancel_the_rest() -> None:
        await asyncio.sleep(0.5)
        for task in asyncio.all_tasks():
            if task is not asyncio.current_task():
                task.cancel()

    asyncio.run_coroutine_threadsafe(cancel_the_rest(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)
    loop.close()


def parse_scenario(text: str) -> tuple[int, int, float]:
    """``GxV@R``: games, viewers of each, plays a second in each."""
    match = re.fullmatch(r"(\d+)x(\d+)@([\d.]+)", text)
    if not match:
        raise argparse.ArgumentTypeError(f"{text!r} is not GAMESxVIEWERS@PLAYS_PER_SECOND")
    return int(match[1]), int(match[2]), float(match[3])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--scenarios", type=parse_scenario, nargs="+",
        default=[parse_scenario(s) for s in ("1x25@50", "1x1000@1", "100x10@0.5")],
    )  # fmt: skip
    parser.add_argument("--plays", type=int, default=100, help="plays per game")
    parser.add_argument("--client-processes", type=int, default=2)
    parser.add_argument("--web-workers", type=int, default=1, help="uvicorn --workers")
    parser.add_argument("--compare-with", type=Path, help="another checkout to serve too")
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="escoba-live-bench-"))
    redis_server = PrivateRedis().start()
    most = max(games * viewers for games, viewers, _ in args.scenarios)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "ESCOBA_DATA_DIR": str(folder),
        "DATABASE_URL": f"sqlite:///{folder / 'db.sqlite3'}",
        "REDIS_URL": redis_server.url,
        "DEBUG": "false",
        "LOG_LEVEL": "WARNING",
        "ESCOBA_LIVE_MAX_STREAMS": str(most + 10),
        "ESCOBA_LIVE_MAX_STREAMS_PER_CLIENT": str(most + 10),
    }
    os.environ.update(env)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    game_ids = pending_games(max(games for games, _, _ in args.scenarios))
    trees = {"this tree": ROOT}
    if args.compare_with:
        trees = {f"{args.compare_with}": args.compare_with.resolve(), **trees}
    servers = {}
    for name, tree in trees.items():
        port = free_port()
        log = open(folder / f"uvicorn-{len(servers)}.log", "wb")
        process = subprocess.Popen(
            [sys.executable, *uvicorn_args("127.0.0.1", port), "--workers", str(args.web_workers)],
            cwd=tree, env=env,
            stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        servers[name] = (f"http://127.0.0.1:{port}", process)
    try:
        for url, _ in servers.values():
            wait_http(f"{url}/api/health/")
        say(f"before: {uptime()}")
        for games, viewers, rate in args.scenarios:
            for name, (url, process) in servers.items():
                delays, cpu = measure(
                    url,
                    game_ids[:games],
                    viewers,
                    args.plays,
                    rate,
                    args.client_processes,
                    process.pid,
                )
                delays.sort()
                p50 = statistics.median(delays) * 1000
                p99 = delays[min(len(delays) - 1, int(len(delays) * 0.99))] * 1000
                say(
                    f"{name}: {games} game(s) x {viewers} viewers, {rate:g} plays/s each: "
                    f"p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {delays[-1] * 1000:.1f} ms "
                    f"({len(delays)} deliveries; server CPU while playing {cpu:.1f} s) "
                    f"| load {uptime().split('load average: ')[1]}"
                )
        say(f"after: {uptime()}")
    finally:
        stop_processes([process for _, process in servers.values()])
        redis_server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
