"""How long a play takes from the worker to a live viewer: the worker hands it to its live feed
(tournaments/live.py ``LiveFeeds.play``, where the runner records it), and a viewer's event stream
(web/live.py under uvicorn, as `make run` serves it) delivers the ``play`` event.

Run from the repository root:

    .venv/bin/python -m benchmarks.live_latency                   # 1 and 25 viewers
    .venv/bin/python -m benchmarks.live_latency --plays 300 --viewers 1 50 --interval-ms 10

What runs: a private Redis, a SQLite database in a temporary folder (one pending game), uvicorn
serving config/asgi.py in its own process (one worker), the publisher on an event loop thread of
this process, and ``--viewers`` event-stream clients (aiohttp) in this process too, so both ends
read the same clock. A play is handed over every ``--interval-ms``; the delay of each play to each
viewer is its event's arrival time minus its hand-over time. Reported: p50, p99 and max per
number of viewers, with the machine's load (``uptime``) before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.league import say, wait_http
from scripts.private_redis import PrivateRedis, free_port
from scripts.processes import uvicorn_args

ROOT = Path(__file__).resolve().parents[1]


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def pending_game() -> int:
    """One pending game in a running league of two bots; its id."""
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
    match = Match.objects.create(league=league, number=1, round=1, seed=1)
    game = Game.objects.create(
        league=league, match=match, number=1, seed=1, seating=[b.pk for b in bots]
    )
    for seat, bot in enumerate(bots):
        Seat.objects.create(game=game, seat=seat, bot=bot, team=seat)
    return game.pk


def moves(count: int) -> list[tuple[int, str]]:
    """Plays of whole games of seed 1 (a new game after each), as (seat, move)."""
    import random

    from games.engine import Game, Ruleset

    choices, plays = random.Random(1), []
    while len(plays) < count:
        game = Game.new(Ruleset.from_dict({"name": "classic", "version": 1}), 1)
        while not game.is_over and len(plays) < count:
            seat = game.current_seat
            move = choices.choice(game.view(seat).legal_moves)
            game.apply(move)
            plays.append((seat, move.to_str()))
    return plays


async def viewer(url: str, arrivals: dict[int, float], ready: asyncio.Event, plays: int) -> None:
    import aiohttp

    async with aiohttp.ClientSession() as session, session.get(url) as response:
        assert response.status == 200, response.status
        async for line in response.content:
            if line.startswith(b"event: snapshot"):
                ready.set()
            if line.startswith(b"id: ") and not line.rstrip().endswith(b".0"):
                number = int(line.rstrip().rsplit(b".", 1)[1])
                arrivals[number] = time.perf_counter()
                if number >= plays:
                    return


def measure(base_url: str, game_id: int, viewers: int, plays: int, interval_s: float) -> list:
    """Delays (seconds) of every play to every viewer, for one game replayed from its start."""
    from tournaments.live import LiveFeeds

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    feeds = LiveFeeds(loop)
    feeds.start(game_id)
    script = moves(plays)
    sent: dict[int, float] = {}

    async def run() -> list[dict[int, float]]:
        arrivals = [{} for _ in range(viewers)]
        ready = [asyncio.Event() for _ in range(viewers)]
        url = f"{base_url}/live/games/{game_id}/"
        tasks = [
            asyncio.create_task(viewer(url, got, on, plays))
            for got, on in zip(arrivals, ready, strict=True)
        ]
        await asyncio.wait_for(asyncio.gather(*(r.wait() for r in ready)), 30)
        for number, (seat, move) in enumerate(script, 1):
            sent[number] = time.perf_counter()
            loop.call_soon_threadsafe(feeds._entry, game_id, {
                "kind": "play", "seat": seat, "move": move, "fault": None,
            })  # fmt: skip
            await asyncio.sleep(interval_s)
        await asyncio.wait_for(asyncio.gather(*tasks), 60)
        return arrivals

    try:
        arrivals = asyncio.run(run())
    finally:
        loop.call_soon_threadsafe(loop.stop)
    return [got[n] - sent[n] for got in arrivals for n in sent]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plays", type=int, default=200)
    parser.add_argument("--viewers", type=int, nargs="+", default=[1, 25])
    parser.add_argument("--interval-ms", type=float, default=20.0)
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="escoba-live-bench-"))
    redis_server = PrivateRedis().start()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "ESCOBA_DATA_DIR": str(folder),
        "DATABASE_URL": f"sqlite:///{folder / 'db.sqlite3'}",
        "REDIS_URL": redis_server.url,
        "DEBUG": "false",
        "ESCOBA_LIVE_MAX_STREAMS": "1000",
    }
    os.environ.update(env)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    game_id = pending_game()
    port = free_port()
    log = open(folder / "uvicorn.log", "wb")
    server = subprocess.Popen(
        [sys.executable, *uvicorn_args("127.0.0.1", port)], cwd=ROOT, env=env,
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        wait_http(f"http://127.0.0.1:{port}/api/health/")
        say(f"before: {uptime()}")
        for count in args.viewers:
            delays = sorted(
                measure(f"http://127.0.0.1:{port}", game_id, count, args.plays,
                        args.interval_ms / 1000)
            )  # fmt: skip
            p50 = statistics.median(delays) * 1000
            p99 = delays[min(len(delays) - 1, int(len(delays) * 0.99))] * 1000
            say(
                f"{count:>4} viewers, {args.plays} plays every {args.interval_ms:g} ms: "
                f"p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {delays[-1] * 1000:.1f} ms "
                f"({len(delays)} deliveries)"
            )
        say(f"after: {uptime()}")
    finally:
        server.terminate()
        server.wait(15)
        redis_server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
