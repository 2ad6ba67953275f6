"""Bots that misbehave on purpose, as real HTTP servers on loopback.

Good bots come from the SDK (`bots_sdk.serve_in_thread`); these are the ones the SDK would never
let you write: another protocol, no answer in time, HTTP errors, a body that is not JSON, a
redirect to a metadata address, a body far too large, a body dripped a byte at a time.
"""

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

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
