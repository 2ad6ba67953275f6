"""The HTTP server that runs a bot: `GET /`, `POST /move`, `POST /start`, `POST /end`.

Plain `http.server` answers every keep-alive call about 44 ms late on loopback: it writes the
headers and the body in separate small packets, and Nagle's algorithm holds the second one until
the client's delayed ACK arrives. Here every accepted socket has TCP_NODELAY set and every
response goes out in a single write with a Content-Length, so a move costs a fraction of a
millisecond beyond `choose` itself. One thread per connection keeps a slow `choose` in one game
from holding up the others.
"""

from __future__ import annotations

import json
import logging
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from games.signing import SignatureError, Signer
from games.wire import ProtocolError

from .bot import Bot, BotError, Choose, as_bot

logger = logging.getLogger("bots_sdk.server")

MAX_BODY_BYTES = 1024 * 1024
IDLE_TIMEOUT_S = 120
NOTIFICATIONS = ("/start", "/end")
# Standard Webhooks refuses timestamps more than 5 minutes off; ids are remembered that long.
REPLAY_WINDOW_S = 5 * 60 + 30


class ReplayGuard:
    """The `webhook-id`s accepted in the last `window_s` seconds: a second use is a replay.

    A signature alone proves a call was ours, not that it is new: anyone who saw one request
    could send it again within the timestamp tolerance. Ids are forgotten oldest first, so
    memory stays at one entry per call of the last few minutes.
    """

    def __init__(self, window_s: float = REPLAY_WINDOW_S) -> None:
        self.window_s = window_s
        self._seen: dict[str, float] = {}  # insertion order is arrival order
        self._lock = threading.Lock()

    def first_use(self, msg_id: str) -> bool:
        now = time.monotonic()
        with self._lock:
            cutoff = now - self.window_s
            while self._seen:
                oldest = next(iter(self._seen))
                if self._seen[oldest] > cutoff:
                    break
                del self._seen[oldest]
            if msg_id in self._seen:
                return False
            self._seen[msg_id] = now
            return True


class BotServer(ThreadingHTTPServer):
    """A threaded HTTP/1.1 server bound to one bot; `secret` turns signature checks on."""

    daemon_threads = True
    allow_reuse_address = True
    # An arena starting many games at once opens many connections to a bot in the same instant.
    # With socketserver's backlog of 5 the kernel drops the rest of the burst's SYNs, and their
    # clients try again a second later: a move answered a second late, a timeout at 1,000 ms.
    request_queue_size = 128
    # Idle keep-alive connections must not make shutdown wait for them.
    block_on_close = False

    def __init__(self, address: tuple[str, int], bot: Bot, secret: str | None = None) -> None:
        self.bot = bot
        # Raises ValueError, saying so, for a secret that is not a Standard Webhooks one.
        self.signer = Signer(secret) if secret else None
        self.replays = ReplayGuard()
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

    def track(self, sock: socket.socket, is_open: bool) -> None:
        with self._open_lock:
            if is_open:
                self._open.add(sock)
            else:
                self._open.discard(sock)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client hanging up (the arena's deadline passed, a worker died) is routine, not news."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)

    def close_connections(self) -> None:
        """Wake every handler thread blocked on an idle keep-alive connection."""
        with self._open_lock:
            sockets = list(self._open)
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "escoba-bots-sdk"
    timeout = IDLE_TIMEOUT_S
    server: BotServer

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.track(self.connection, True)

    def finish(self) -> None:
        self.server.track(self.connection, False)
        super().finish()

    def parse_request(self) -> bool:
        # Called as soon as a request line has been read: the request's arrival, which the bot
        # gets as `BotState.received_at` to count its time from.
        self.received_at = time.perf_counter()
        return super().parse_request()

    def do_GET(self) -> None:
        if self._path() != "":
            self._send(HTTPStatus.NOT_FOUND, {"error": f"no route GET {self.path}"})
            return
        self._send(HTTPStatus.OK, self.server.bot.info())

    def do_POST(self) -> None:
        route = self._path()
        if route != "/move" and route not in NOTIFICATIONS:
            self._send(HTTPStatus.NOT_FOUND, {"error": f"no route POST {self.path}"}, close=True)
            return
        raw = self._read_body()
        if raw is None:
            return
        if not self._signature_ok(raw):
            return
        try:
            body = json.loads(raw)
        except ValueError as exc:
            self._send(HTTPStatus.BAD_REQUEST, {"error": f"body is not valid JSON: {exc}"})
            return
        try:
            if route == "/move":
                reply: dict[str, Any] = self.server.bot.move(body, self.received_at)
            else:
                self.server.bot.notify(route[1:], body)
                reply = {"ok": True}
        except ProtocolError as exc:
            self._send(HTTPStatus.BAD_REQUEST, {"error": str(exc)})
        except BotError as exc:
            logger.warning("%s %s: %s", self.server.bot.name, route, exc, exc_info=exc.__cause__)
            self._send(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": str(exc)})
        except Exception as exc:
            logger.exception("%s %s failed", self.server.bot.name, route)
            self._send(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"{type(exc).__name__}: {exc}"})
        else:
            self._send(HTTPStatus.OK, reply)

    def _path(self) -> str:
        return self.path.split("?", 1)[0].rstrip("/")

    def _read_body(self) -> bytes | None:
        """Read exactly Content-Length bytes; answer and close the connection otherwise."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self._send(HTTPStatus.LENGTH_REQUIRED, {"error": "send a Content-Length"}, close=True)
            return None
        length_header = self.headers.get("Content-Length")
        try:
            length = int(length_header or "")
        except ValueError:
            length = -1
        if length < 0:
            self._send(HTTPStatus.LENGTH_REQUIRED, {"error": "send a Content-Length"}, close=True)
            return None
        if length > MAX_BODY_BYTES:
            error = {"error": f"body over {MAX_BODY_BYTES} bytes"}
            self._send(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, error, close=True)
            return None
        raw = self.rfile.read(length)
        if len(raw) != length:
            self.close_connection = True
            return None
        return raw

    def _signature_ok(self, raw: bytes) -> bool:
        signer = self.server.signer
        if signer is None:
            return True
        headers = {key.lower(): value for key, value in self.headers.items()}
        try:
            msg_id = signer.verify(raw, headers)
        except SignatureError as exc:
            self._send(HTTPStatus.UNAUTHORIZED, {"error": f"bad signature: {exc}"})
            return False
        if not self.server.replays.first_use(msg_id):
            self._send(HTTPStatus.UNAUTHORIZED, {"error": "replayed: this webhook-id was seen"})
            return False
        return True

    def _send(self, status: HTTPStatus, payload: dict[str, Any], close: bool = False) -> None:
        body = json.dumps(payload, separators=(",", ":")).encode()
        lines = [
            f"HTTP/1.1 {status.value} {status.phrase}",
            "Content-Type: application/json",
            f"Content-Length: {len(body)}",
            f"Date: {self.date_time_string()}",
            f"Server: {self.server_version}",
        ]
        if close:
            lines.append("Connection: close")
            self.close_connection = True
        self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
        self.log_request(status.value, len(body))

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("%s " + format, self.address_string(), *args)


def make_server(
    target: Bot | Choose,
    *,
    host: str = "127.0.0.1",
    port: int = 8001,
    secret: str | None = None,
    name: str | None = None,
) -> BotServer:
    """Bind a server for `target` (a `choose` function or a `Bot`); port 0 picks a free one."""
    return BotServer((host, port), as_bot(target, name=name), secret=secret)


def serve(
    target: Bot | Choose,
    *,
    host: str = "127.0.0.1",
    port: int = 8001,
    secret: str | None = None,
    name: str | None = None,
) -> None:
    """Serve `target` until interrupted: Ctrl-C, SIGINT or SIGTERM.

    Both signals are taken over while serving, in the main thread: a process started in the
    background (`cmd &`, a script, a supervisor) begins with SIGINT ignored, which Python keeps,
    and SIGTERM would otherwise end it without closing its connections."""
    server = make_server(target, host=host, port=port, secret=secret, name=name)
    logger.info("serving %s on %s", server.bot.name, server.url)
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGINT, signal.SIGTERM):
            previous[signum] = signal.signal(signum, signal.default_int_handler)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        for signum, handler in previous.items():
            if handler is not None:  # None: a handler not set from Python, left as it is
                signal.signal(signum, handler)
        server.close_connections()
        server.server_close()


@dataclass
class ServerHandle:
    """A server running in a background thread; use as a context manager or call `stop()`."""

    server: BotServer
    thread: threading.Thread

    @property
    def url(self) -> str:
        return self.server.url

    def stop(self) -> None:
        self.server.shutdown()
        self.server.close_connections()
        self.server.server_close()
        self.thread.join()

    def __enter__(self) -> ServerHandle:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def serve_in_thread(
    target: Bot | Choose,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    secret: str | None = None,
    name: str | None = None,
) -> ServerHandle:
    """Start serving `target` in a daemon thread and return at once; `.url` says where."""
    server = make_server(target, host=host, port=port, secret=secret, name=name)
    # A short poll interval keeps stop() quick; the loop is otherwise idle in select().
    thread = threading.Thread(
        target=server.serve_forever,
        kwargs={"poll_interval": 0.05},
        name=f"bot-{server.bot.name}",
        daemon=True,
    )
    thread.start()
    return ServerHandle(server, thread)
