"""How much our bot caller costs beyond the HTTP round trip, and how it holds up with many calls
in flight. Run from the repository root:

    .venv/bin/python -m benchmarks.caller            # both measurements
    .venv/bin/python -m benchmarks.caller --quick    # fewer calls, for a smoke run

The bots run in a separate process (aiohttp, keep-alive, a fixed move) so that the client's
event loop is measured alone; everything stays on 127.0.0.1.

1. Per move, sequential, one keep-alive connection, a real mid-game move request: a bare
   `http.client` round trip (pre-encoded body, reply decoded with `json`), a bare aiohttp
   round trip, and `BotClient.move` (orjson encoding, Standard Webhooks signing, the deadline,
   the size cap, JSON decoding and the schema check of the reply).
2. Throughput: 200 calls in flight through one `Caller` against bots that take 50 ms per move.
3. The runner (`--games N`, alone): N two-player classic games through
   `tournaments.bot_calls.runner.play_game` in one event loop against the 8 SDK example bots of
   `benchmarks.league`, each its own `python -m bots_sdk serve` process; the client's CPU per
   move (`time.process_time`), which is what a league worker's event loop spends per move
   whatever else runs on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import statistics
import subprocess
import sys
import time

import aiohttp
import orjson
from aiohttp import web

from games.engine import Game, Ruleset
from games.wire import move_request
from tournaments.bot_calls.caller import Caller

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
MOVE = orjson.dumps({"card": "7e", "capture": []})


def sample_request() -> dict:
    """A 4-player request eleven plays into a round: about 1.5 KB."""
    game = Game.new(Ruleset.from_preset("classic", {"players": 4, "teams": True}), seed=11)
    for _ in range(11):
        game.apply(game.legal_moves()[0])
    return move_request(
        game.view(game.current_seat),
        game_id=41,
        timeout_ms=1000,
        seat_names=["greedy", "random", "expert", "cautious"],
        latency_ms=12.5,
        time_bank_ms=1000,
    )


# --- the bot process ---------------------------------------------------------------------------


def serve(bots: int, delay: float) -> None:
    async def move(request: web.Request) -> web.Response:
        await request.read()
        if delay:
            await asyncio.sleep(delay)
        return web.Response(body=MOVE, content_type="application/json")

    async def main() -> None:
        ports = []
        for _ in range(bots):
            app = web.Application()
            app.router.add_post("/move", move)
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
            await site.start()
            ports.append(site._server.sockets[0].getsockname()[1])
        sys.stdout.write(" ".join(map(str, ports)) + "\n")
        sys.stdout.flush()
        await asyncio.Event().wait()

    asyncio.run(main())


class BotProcess:
    def __init__(self, bots: int, delay: float) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "benchmarks.caller",
                "serve",
                "--bots",
                str(bots),
                "--delay",
                str(delay),
            ],
            stdout=subprocess.PIPE,
            text=True,
            cwd=os.getcwd(),
        )
        assert self.process.stdout is not None
        self.ports = [int(port) for port in self.process.stdout.readline().split()]

    def __enter__(self) -> BotProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


# --- 1. per-move cost ------------------------------------------------------------------------


def time_http_client(port: int, body: bytes, calls: int) -> list[float]:
    connection = http.client.HTTPConnection("127.0.0.1", port)
    headers = {"Content-Type": "application/json"}
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        connection.request("POST", "/move", body=body, headers=headers)
        json.loads(connection.getresponse().read())
        samples.append(time.perf_counter() - started)
    connection.close()
    return samples


async def time_aiohttp(port: int, body: bytes, calls: int) -> list[float]:
    samples = []
    async with aiohttp.ClientSession() as session:
        for _ in range(calls):
            started = time.perf_counter()
            async with session.post(
                f"http://127.0.0.1:{port}/move",
                data=body,
                headers={"Content-Type": "application/json"},
            ) as response:
                await response.json()
            samples.append(time.perf_counter() - started)
    return samples


async def time_caller(port: int, request: dict, calls: int) -> list[float]:
    samples = []
    async with Caller(allow_private=True) as caller:
        client = caller.client(f"http://127.0.0.1:{port}/", SECRET)
        for _ in range(calls):
            started = time.perf_counter()
            reply = await client.move(request, 1000)
            samples.append(time.perf_counter() - started)
            assert reply.fault is None, reply.fault
    return samples


def per_move(calls: int, rounds: int) -> list[tuple[str, float, float]]:
    """(client, median ms, mean ms) per client: the best of `rounds` interleaved runs, because
    on a shared machine other processes only ever make a run slower."""
    request = sample_request()
    body = orjson.dumps(request)
    best: dict[str, tuple[float, float]] = {}
    with BotProcess(bots=1, delay=0) as bots:
        port = bots.ports[0]
        clients = {
            "http.client (bare)": lambda: time_http_client(port, body, calls),
            "aiohttp (bare)": lambda: asyncio.run(time_aiohttp(port, body, calls)),
            "bot_calls BotClient.move": lambda: asyncio.run(time_caller(port, request, calls)),
        }
        for run in clients.values():
            run()  # warm up: connection, caches
        for _ in range(rounds):
            for name, run in clients.items():
                samples = run()
                figures = (statistics.median(samples) * 1000, statistics.mean(samples) * 1000)
                best[name] = min(best.get(name, figures), figures)
    return [(name, *figures) for name, figures in best.items()]


# --- 2. many calls in flight -----------------------------------------------------------------


async def in_flight(
    ports: list[int], concurrency: int, seconds: float, bare: bool = False
) -> tuple[int, int, float, float]:
    """Moves done, faults, wall seconds and this process's CPU seconds in `seconds` with
    `concurrency` calls always in flight.

    `bare` uses one plain aiohttp session per bot (pre-encoded body, no checks) as the baseline.
    The CPU time is what the client spends per move whatever else runs on the machine, so it
    says what the caller costs even when a loaded machine caps the wall-clock rate.
    """
    request = sample_request()
    body = orjson.dumps(request)
    done = faults = 0
    async with Caller(allow_private=True) as caller:
        clients = [caller.client(f"http://127.0.0.1:{port}/", SECRET) for port in ports]
        sessions = [aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) for _ in ports]
        deadline = time.perf_counter() + seconds

        async def worker(index: int) -> None:
            nonlocal done, faults
            client, session = clients[index % len(ports)], sessions[index % len(ports)]
            url = f"http://127.0.0.1:{ports[index % len(ports)]}/move"
            while time.perf_counter() < deadline:
                if bare:
                    async with session.post(url, data=body) as response:
                        await response.json(content_type=None)
                else:
                    reply = await client.move(request, 2000)
                    faults += reply.fault is not None
                done += 1

        started, cpu_started = time.perf_counter(), time.process_time()
        await asyncio.gather(*(worker(i) for i in range(concurrency)))
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        for session in sessions:
            await session.close()
        return done, faults, elapsed, cpu


# --- 3. the runner against the SDK example bots ---------------------------------------------


async def play_games(urls: list[str], games: int) -> tuple[int, float, float, float]:
    """Moves, wall seconds, user and system CPU seconds for `games` games played all at once,
    each pairing of bots in turn (seeds 0, 1, ...), as a league worker plays them."""
    from games.engine import Ruleset
    from tournaments.bot_calls.runner import BotEndpoint, play_game

    ruleset = Ruleset.from_preset("classic")
    endpoints = [BotEndpoint(url, SECRET, name=f"bot{i}") for i, url in enumerate(urls)]
    pairs = [(a, b) for a in endpoints for b in endpoints if a is not b]
    async with Caller(allow_private=True) as caller:
        started, cpu_started = time.perf_counter(), os.times()
        records = await asyncio.gather(
            *(
                play_game(
                    ruleset=ruleset,
                    seed=seed,
                    bots=pairs[seed % len(pairs)],
                    game_id=seed,
                    timeout_ms=5000,
                    caller=caller,
                )
                for seed in range(games)
            )
        )
        elapsed, cpu_ended = time.perf_counter() - started, os.times()
    moves = sum(len(r["plays"]) for record in records for r in record.log["rounds"])
    faults = sum(len(record.faults) for record in records)
    assert faults == 0, f"{faults} faults"
    user, system = (cpu_ended.user - cpu_started.user, cpu_ended.system - cpu_started.system)
    return moves, elapsed, user, system


def runner_cpu(games: int, rounds: int) -> None:
    from benchmarks.league import start_bots

    processes, urls = start_bots(dict(os.environ), 0)
    try:
        asyncio.run(play_games(list(urls.values()), 8))  # warm up
        for _ in range(rounds):
            moves, elapsed, user, system = asyncio.run(play_games(list(urls.values()), games))
            print(
                f"runner, {games} games at once: {moves} moves in {elapsed:.2f} s, "
                f"client CPU {(user + system) / moves * 1e3:.3f} ms a move "
                f"({user / moves * 1e3:.3f} user, {system / moves * 1e3:.3f} system; "
                f"load average {os.getloadavg()[0]:.2f})",
                flush=True,
            )
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", nargs="?", default="bench", choices=["bench", "serve"])
    parser.add_argument("--bots", type=int, default=1)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--games",
        type=int,
        default=0,
        help="only measure the runner: this many games against the SDK bots",
    )
    args = parser.parse_args()
    if args.mode == "serve":
        serve(args.bots, args.delay)
        return
    if args.games:
        runner_cpu(args.games, 1 if args.quick else 3)
        return

    calls, seconds, rounds = (300, 1.0, 1) if args.quick else (2000, 4.0, 3)
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(
        f"move request: {len(orjson.dumps(sample_request()))} bytes; {calls} calls per run, "
        f"best of {rounds} runs"
    )
    print(f"{'client':32} {'median ms':>10} {'mean ms':>10}")
    rows = per_move(calls, rounds)
    for name, median, mean in rows:
        print(f"{name:32} {median:10.3f} {mean:10.3f}")
    print(f"caller overhead over http.client (median): {rows[2][1] - rows[0][1]:.3f} ms")

    best: dict[str, tuple[float, int, int, float]] = {}
    cpu_per_move: dict[str, float] = {}
    with BotProcess(bots=8, delay=0.05) as bots:
        for _ in range(rounds):
            for name, bare in (("aiohttp (bare)", True), ("tournaments.bot_calls.caller", False)):
                asyncio.run(in_flight(bots.ports, 200, 0.5, bare))  # warm up the connections
                done, faults, elapsed, cpu = asyncio.run(in_flight(bots.ports, 200, seconds, bare))
                best[name] = max(
                    best.get(name, (0.0, 0, 0, 0.0)), (done / elapsed, done, faults, elapsed)
                )
                cpu_per_move[name] = min(cpu_per_move.get(name, float("inf")), cpu / done)
    for name, (rate, done, faults, elapsed) in best.items():
        print(
            f"200 in flight, 8 bots at 50 ms, {name}: {rate:,.0f} moves/s "
            f"({done} moves in {elapsed:.1f} s, {faults} faults; ideal {200 / 0.05:,.0f}); "
            f"client CPU {cpu_per_move[name] * 1e6:.0f} us a move, "
            f"{1 / cpu_per_move[name]:,.0f} moves/s per core"
        )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
