"""Round-trip time of one `POST /move` on loopback keep-alive: the SDK server against plain
`http.server`, and what parsing the request costs inside it.

    .venv/bin/python benchmarks/sdk_server.py [--calls 500]

Everything runs on 127.0.0.1 and stops by itself. The client is `http.client` on one kept-alive
connection, as the arena's caller keeps one per bot.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import statistics
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bots_sdk import BotState, serve_in_thread  # noqa: E402
from games.engine import Game, Ruleset  # noqa: E402
from games.wire import move_request  # noqa: E402


class PlainHandler(BaseHTTPRequestHandler):
    """`http.server` as it comes: keep-alive, headers and body written separately."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        reply = json.dumps(body["legal_moves"][0]).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: object) -> None:
        pass


def requests_at(plays: tuple[int, ...]) -> list[dict]:
    """Real move requests of one game after the given numbers of plays (random play)."""
    game = Game.new(Ruleset.from_preset("classic"), seed=3)
    rng = random.Random(3)
    bodies = []
    for number in range(max(plays) + 1):
        if number in plays:
            bodies.append(
                move_request(
                    game.view(game.current_seat),
                    game_id=1,
                    timeout_ms=1000,
                    seat_names=["a", "b"],
                    latency_ms=0.4,
                    time_bank_ms=1000,
                )
            )
        game.apply(rng.choice(game.legal_moves()))
    return bodies


def round_trips(port: int, body: dict | None, calls: int) -> list[float]:
    """POST the body to /move, or GET / when there is no body; the first 20 calls warm up."""
    data = None if body is None else json.dumps(body).encode()
    method, path = ("GET", "/") if body is None else ("POST", "/move")
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    timings = []
    for _ in range(calls + 20):
        started = time.perf_counter()
        connection.request(method, path, body=data, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        response.read()
        timings.append((time.perf_counter() - started) * 1000)
        assert response.status == 200
    connection.close()
    return timings[20:]


def summary(timings: list[float]) -> str:
    ordered = sorted(timings)
    p99 = ordered[int(len(ordered) * 0.99) - 1]
    return f"median {statistics.median(ordered):7.3f} ms   p99 {p99:7.3f} ms"


def parse_cost(body: dict, calls: int) -> float:
    """Median milliseconds of one parse (the median shrugs off other load on the machine)."""
    timings = []
    for _ in range(calls):
        started = time.perf_counter()
        BotState.from_request(body)
        timings.append((time.perf_counter() - started) * 1000)
    return statistics.median(timings)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=500)
    calls = parser.parse_args().calls
    early, late = requests_at((0, 30))
    print(
        f"request bodies: first play {len(json.dumps(early))} B, "
        f"31st play {len(json.dumps(late))} B; {calls} calls each"
    )

    plain = ThreadingHTTPServer(("127.0.0.1", 0), PlainHandler)
    thread = threading.Thread(target=plain.serve_forever, daemon=True)
    thread.start()
    try:
        plain_calls = min(calls, 100)  # ~44 ms each: keep the run short
        timings = round_trips(plain.server_address[1], early, plain_calls)
        print(f"plain http.server, first play      {summary(timings)}")
    finally:
        plain.shutdown()
        plain.server_close()

    with serve_in_thread(lambda state: state.legal_moves[0]) as handle:
        port = handle.server.server_address[1]
        print(f"SDK server, GET / (no parsing)     {summary(round_trips(port, None, calls))}")
        print(f"SDK server, first play             {summary(round_trips(port, early, calls))}")
        print(f"SDK server, 31st play              {summary(round_trips(port, late, calls))}")
    print(f"BotState.from_request, first play  {parse_cost(early, calls):7.3f} ms")
    print(f"BotState.from_request, 31st play   {parse_cost(late, calls):7.3f} ms")


if __name__ == "__main__":
    main()
