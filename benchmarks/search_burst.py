"""The search example under a burst of games: how late its answers come when many move requests
reach one bot process at once, as when an arena starts a league beside a ladder.

    .venv/bin/python -m benchmarks.search_burst [--clients 8] [--rounds 5] [--bank-ms 1000]
    .venv/bin/python -m benchmarks.search_burst --tree before=/tmp/before --tree after=.

Each `--tree LABEL=PATH` is a checkout of this repository; its `make run` demo search bot
(`python -m bots_sdk serve scripts.run:demo_search`, which thinks `ESCOBA_DEMO_THINK_MS` before
searching) is served from that checkout, so two versions can be measured side by side in the
same minutes on the same machine: the servers take turns, batch by batch. A batch is
`--clients` move requests sent at the same instant, each on a new connection, each from a
different position of a seeded game, with `--bank-ms` as both the timeout and the time bank.
Printed per tree: answer time percentiles and how many answers came later than `--late-ms`.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from benchmarks.league import wait_http
from games.engine import Game, Ruleset
from games.wire import move_request
from scripts.private_redis import free_port

ROOT = Path(__file__).resolve().parents[1]


def bodies(count: int, bank_ms: int) -> list[bytes]:
    """Move requests from `count` positions of seeded random games (each a choice to search)."""
    found: list[bytes] = []
    seed = 0
    while len(found) < count:
        seed += 1
        game = Game.new(Ruleset.from_preset("classic"), seed=seed)
        rng = random.Random(seed)
        for _ in range(rng.randrange(0, 20)):
            game.apply(rng.choice(game.legal_moves()))
        if game.is_over or len(game.legal_moves()) < 2:
            continue
        body = move_request(
            game.view(game.current_seat),
            game_id=seed,
            timeout_ms=bank_ms,
            seat_names=["a", "b"],
            latency_ms=None,
            time_bank_ms=bank_ms,
        )
        found.append(json.dumps(body).encode())
    return found


def serve(tree: Path, port: int) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(tree))
    command = [sys.executable, "-m", "bots_sdk", "serve", "scripts.run:demo_search"]
    command += ["--port", str(port), "--name", "search"]
    server = subprocess.Popen(command, cwd=tree, env=env, stdout=subprocess.DEVNULL)
    try:
        wait_http(f"http://127.0.0.1:{port}/")
    except SystemExit:
        server.kill()
        raise
    return server


def batch(port: int, requests: list[bytes], timeout_s: float) -> list[float]:
    """Send every request at once, each on its own new connection; answer times in ms."""
    times: list[float] = []
    lock = threading.Lock()
    gate = threading.Barrier(len(requests))

    def one(body: bytes) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout_s)
        headers = {"Content-Type": "application/json"}
        gate.wait()
        started = time.perf_counter()
        connection.request("POST", "/move", body, headers)
        response = connection.getresponse()
        response.read()
        took = (time.perf_counter() - started) * 1000
        connection.close()
        if response.status != 200:
            raise SystemExit(f"the bot answered {response.status}")
        with lock:
            times.append(took)

    threads = [threading.Thread(target=one, args=(body,)) for body in requests]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return times


def summary(times: list[float], late_ms: float) -> str:
    ordered = sorted(times)

    def at(share: float) -> float:
        return ordered[min(len(ordered) - 1, int(share * len(ordered)))]

    late = sum(1 for took in ordered if took > late_ms)
    return (
        f"p50 {statistics.median(ordered):5.0f} ms  p90 {at(0.9):5.0f} ms  "
        f"p99 {at(0.99):5.0f} ms  max {ordered[-1]:5.0f} ms  "
        f"over {late_ms:.0f} ms: {late} of {len(ordered)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", action="append", help="LABEL=PATH of a checkout (repeatable).")
    parser.add_argument("--clients", type=int, default=8, help="Requests sent at once.")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batches", type=int, default=3, help="Batches per tree per round.")
    parser.add_argument("--bank-ms", type=int, default=1000)
    parser.add_argument("--late-ms", type=float, default=800.0)
    args = parser.parse_args()
    trees = {}
    for item in args.tree or [f"this={ROOT}"]:
        label, _, path = item.partition("=")
        trees[label] = Path(path).resolve()
    requests = bodies(args.clients * args.batches, args.bank_ms)
    ports = {label: free_port() for label in trees}
    load_before = os.getloadavg()[0]
    processes = []
    try:
        for label, tree in trees.items():
            processes.append(serve(tree, ports[label]))
        times: dict[str, list[float]] = {label: [] for label in trees}
        timeout_s = args.bank_ms / 1000 * 5
        for round_number in range(args.rounds + 1):  # the first round warms up
            for number in range(args.batches):
                chunk = requests[number * args.clients : (number + 1) * args.clients]
                for label in trees:
                    taken = batch(ports[label], chunk, timeout_s)
                    if round_number:
                        times[label] += taken
        print(
            f"{args.clients} requests at once, bank {args.bank_ms} ms, "
            f"{args.rounds} rounds of {args.batches} batches; load average "
            f"{load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
        )
        for label, taken in times.items():
            print(f"{label:>10}  {summary(taken, args.late_ms)}")
    finally:
        for process in processes:
            process.terminate()
            process.wait(10)


if __name__ == "__main__":
    main()
