"""Hand-made HTTP bots (the standard library's `http.server`, in a thread) that misbehave in ways
the SDK would never let a bot do: another protocol, no answer in time, HTTP errors, a body that
is not JSON, a redirect to a metadata address, a body far too large or dripped a byte at a time,
an answer made by hand; and `StrictBot`, the SDK's greedy behind a signature gate.

`fake_bot(...)` serves one (a context manager, its URL); `misbehaving(mode)` one that answers
every request, `GET /` included, in the way `MODES` names.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

INFO = {"protocol": "escoba/1", "name": "odd", "author": "tests", "version": "1"}
SLOW_S = 2.0
DRIP_INTERVAL_S = 0.1
DRIP_LIMIT_S = 10.0
METADATA_URL = "http://169.254.169.254/latest/meta-data/"


class FakeBotServer(ThreadingHTTPServer):
    """Stops its handlers' waits (`stopping`) when it shuts down; counts the requests."""

    daemon_threads = True

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.stopping = threading.Event()
        self.requests = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@contextmanager
def serving(server: FakeBotServer) -> Iterator[FakeBotServer]:
    """Serve ``server`` from a thread until the block ends."""
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield server
    finally:
        server.stopping.set()
        server.shutdown()
        server.server_close()
        thread.join()


class FakeBot(BaseHTTPRequestHandler):
    """A bot made by hand; its class attributes say how it answers (`fake_bot` sets them):

    - `mode` (one of `MODES`): every request, `GET /` included, misbehaves that way;
    - otherwise `GET /` answers `info`, `POST /move` answers `answer(body)` after `delay_s`
      seconds, any other POST `{}`.
    """

    server: FakeBotServer
    info: dict = {**INFO, "name": "raw", "author": ""}
    answer: Callable[[dict], bytes] = staticmethod(lambda body: b"{}")
    delay_s = 0.0
    mode = ""

    def do_GET(self) -> None:
        self.server.requests += 1
        if self.mode:
            return MODES[self.mode](self)
        self.reply(200, _json(self.info))

    def do_POST(self) -> None:
        self.server.requests += 1
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.mode:
            return MODES[self.mode](self)
        body = json.loads(raw)
        time.sleep(self.delay_s)
        self.reply(200, self.answer(body) if self.path == "/move" else b"{}")

    def reply(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def _json(value: object) -> bytes:
    return json.dumps(value).encode()


def _slow(bot: FakeBot) -> None:
    bot.server.stopping.wait(SLOW_S)
    bot.reply(200, _json(INFO))


def _redirect(bot: FakeBot) -> None:
    bot.send_response(302)
    bot.send_header("Location", METADATA_URL)
    bot.send_header("Content-Length", "0")
    bot.end_headers()


def _drip(bot: FakeBot) -> None:
    """Promise a big body, then send it a byte at a time: each read is quick, the whole slow."""
    bot.send_response(200)
    bot.send_header("Content-Type", "application/json")
    bot.send_header("Content-Length", "1000")
    bot.end_headers()
    started = time.monotonic()
    try:
        while not bot.server.stopping.is_set() and time.monotonic() - started < DRIP_LIMIT_S:
            bot.wfile.write(b" ")
            bot.wfile.flush()
            bot.server.stopping.wait(DRIP_INTERVAL_S)
    except OSError:
        pass


MODES: dict[str, Callable[[FakeBot], None]] = {
    "wrong_protocol": lambda bot: bot.reply(200, _json({**INFO, "protocol": "chess/1"})),
    "no_protocol": lambda bot: bot.reply(200, _json({"name": "odd", "version": "1"})),
    "not_found": lambda bot: bot.reply(404, b'{"error": "no such page"}'),
    "slow": _slow,
    "error": lambda bot: bot.reply(500, b'{"error": "boom"}'),
    "bad_json": lambda bot: bot.reply(200, b"this is not json"),
    "redirect": _redirect,
    "huge": lambda bot: bot.reply(200, b'{"pad": "' + b"x" * (512 * 1024) + b'"}'),
    "drip": _drip,
}  # fmt: skip


@contextmanager
def fake_bot(**behaviour) -> Iterator[str]:
    """A `FakeBot` with ``behaviour`` (its class attributes or methods) served on loopback: its
    URL. ``fake_bot(answer=staticmethod(trail_first_card), delay_s=0.15)``."""
    if behaviour.get("mode", "") and behaviour["mode"] not in MODES:
        raise ValueError(f"unknown mode {behaviour['mode']!r}")
    with serving(FakeBotServer(type("Bot", (FakeBot,), behaviour))) as server:
        yield server.url


def misbehaving(mode: str):
    """`with misbehaving("slow") as url:` a bot that answers every request as `MODES[mode]`."""
    return fake_bot(mode=mode)


def trail_first_card(body: dict) -> bytes:
    """A well-formed move that is legal only when no capture is forced: its first card, trailed."""
    return _json({"card": body["you"]["hand"][0], "capture": []})


def refused_url() -> str:
    """A loopback URL where nothing listens: the port was free a moment ago."""
    return f"http://127.0.0.1:{closed_port()}"


def closed_port() -> int:
    """A loopback port with nothing listening on it (connection refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class StrictBot:
    """The SDK's greedy bot behind a strict gate: every request, `GET /` included, must carry a
    valid Standard Webhooks signature made with `secret`, or it gets 401 (as the protocol doc
    tells authors to do). `calls` records (method, path, signed) for every request. A context
    manager: ``with StrictBot(secret) as strict: strict.url``."""

    def __init__(self, secret: str) -> None:
        from bots_sdk import Bot
        from bots_sdk.examples import greedy

        self.secret = secret
        self.bot = Bot(greedy.choose, name="strict", author="tests")
        self.calls: list[tuple[str, str, bool]] = []
        self._server = FakeBotServer(type("Strict", (_StrictHandler,), {"strict": self}))
        self._serving = serving(self._server)

    @property
    def url(self) -> str:
        return self._server.url

    def __enter__(self) -> StrictBot:
        self._serving.__enter__()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._serving.__exit__(*exc_info)


class _StrictHandler(FakeBot):
    strict: StrictBot
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        if self.signed(b""):
            self.reply(200, _json(self.strict.bot.info()))

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if not self.signed(raw):
            return
        if self.path.rstrip("/") == "/move":
            self.reply(200, _json(self.strict.bot.move(json.loads(raw))))
        else:
            self.reply(200, b"{}")

    def signed(self, raw: bytes) -> bool:
        from standardwebhooks.webhooks import Webhook

        headers = {key.lower(): value for key, value in self.headers.items()}
        try:
            Webhook(self.strict.secret).verify(raw, headers, json_parse=False)
        except Exception:
            self.strict.calls.append((self.command, self.path, False))
            self.reply(401, b'{"error": "unsigned or bad signature"}')
            return False
        self.strict.calls.append((self.command, self.path, True))
        return True
