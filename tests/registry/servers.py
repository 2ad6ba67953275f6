"""Bots that misbehave on purpose, as real HTTP servers on loopback.

Good bots come from the SDK (`bots_sdk.serve_in_thread`; `Switchable` is one that can be broken
on purpose, `StrictBot` one that refuses every unsigned call); these are the ones the SDK would
never let you write: another protocol, no answer in time, HTTP errors, a body that is not JSON, a
redirect to a metadata address, a body far too large, a body dripped a byte at a time.
"""

import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from bots_sdk import BotState, Move
from bots_sdk.examples import greedy

INFO = {"protocol": "escoba/1", "name": "odd", "author": "tests", "version": "1"}
SLOW_S = 2.0
DRIP_INTERVAL_S = 0.1
DRIP_LIMIT_S = 10.0


class MisbehavingServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, mode: str) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.mode = mode
        self.stopping = threading.Event()
        self.requests = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: MisbehavingServer

    def do_GET(self) -> None:
        self.server.requests += 1
        self.answer()

    def do_POST(self) -> None:
        self.server.requests += 1
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.answer()

    def answer(self) -> None:
        mode = self.server.mode
        if mode == "wrong_protocol":
            self.reply(200, json.dumps({**INFO, "protocol": "chess/1"}).encode())
        elif mode == "no_protocol":
            self.reply(200, json.dumps({"name": "odd", "version": "1"}).encode())
        elif mode == "not_found":
            self.reply(404, b'{"error": "no such page"}')
        elif mode == "slow":
            self.server.stopping.wait(SLOW_S)
            self.reply(200, json.dumps(INFO).encode())
        elif mode == "error":
            self.reply(500, b'{"error": "boom"}')
        elif mode == "bad_json":
            self.reply(200, b"this is not json")
        elif mode == "redirect":
            self.send_response(302)
            self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif mode == "huge":
            self.reply(200, b'{"pad": "' + b"x" * (512 * 1024) + b'"}')
        elif mode == "drip":
            self.drip()
        else:
            raise ValueError(f"unknown mode {mode!r}")

    def reply(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def drip(self) -> None:
        """Promise a big body, then send it a byte at a time: each read is quick, the whole slow."""
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "1000")
        self.end_headers()
        started = time.monotonic()
        try:
            while not self.server.stopping.is_set() and time.monotonic() - started < DRIP_LIMIT_S:
                self.wfile.write(b" ")
                self.wfile.flush()
                self.server.stopping.wait(DRIP_INTERVAL_S)
        except OSError:
            pass

    def log_message(self, format: str, *args: object) -> None:
        pass


class Running:
    """A misbehaving server in a background thread; a context manager."""

    def __init__(self, mode: str) -> None:
        self.server = MisbehavingServer(mode)
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        return self.server.url

    def __enter__(self) -> "Running":
        self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.server.stopping.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


def refused_url() -> str:
    """A loopback URL where nothing listens: the port was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


class StrictBot(ThreadingHTTPServer):
    """The SDK's greedy bot behind a strict gate: every request, `GET /` included, must carry a
    valid Standard Webhooks signature made with `secret`, or it gets 401 (as the protocol doc
    tells authors to do). `calls` records (method, path, signed) for every request."""

    daemon_threads = True

    def __init__(self, secret: str) -> None:
        from bots_sdk import Bot
        from bots_sdk.examples import greedy

        super().__init__(("127.0.0.1", 0), _StrictHandler)
        self.secret = secret
        self.bot = Bot(greedy.choose, name="strict", author="tests")
        self.calls: list[tuple[str, str, bool]] = []
        self.thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self) -> "StrictBot":
        self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.shutdown()
        self.server_close()
        self.thread.join()


class _StrictHandler(BaseHTTPRequestHandler):
    server: StrictBot
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        if self.signed(b""):
            self.reply(200, self.server.bot.info())

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if not self.signed(raw):
            return
        if self.path.rstrip("/") == "/move":
            self.reply(200, self.server.bot.move(json.loads(raw)))
        else:
            self.reply(200, {})

    def signed(self, raw: bytes) -> bool:
        from standardwebhooks.webhooks import Webhook

        headers = {key.lower(): value for key, value in self.headers.items()}
        try:
            Webhook(self.server.secret).verify(raw, headers, json_parse=False)
        except Exception:
            self.server.calls.append((self.command, self.path, False))
            self.reply(401, {"error": "unsigned or bad signature"})
            return False
        self.server.calls.append((self.command, self.path, True))
        return True

    def reply(self, status: int, payload: object) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@dataclass
class Switchable:
    """An SDK bot that plays greedy until `broken` is set, then fails every move (HTTP 500)."""

    url: str = ""
    broken: bool = False
    moves: list[str] = field(default_factory=list)

    def choose(self, state: BotState) -> Move:
        if self.broken:
            raise RuntimeError("broken on purpose")
        move = greedy.choose(state)
        self.moves.append(move.to_str())
        return move
