"""Hand-made bots on loopback that misbehave in ways the SDK would never let a bot do, for the
tests of `check` over every transport."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class RawBot(BaseHTTPRequestHandler):
    """A hand-made bot that can misbehave in ways the SDK would never let a bot do."""

    info: dict = {"protocol": "escoba/1", "name": "raw", "author": "", "version": "1"}
    answer: Callable[[dict], bytes] = staticmethod(lambda body: b"{}")
    delay_s = 0.0

    def do_GET(self) -> None:
        self._reply(json.dumps(self.info).encode())

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        time.sleep(self.delay_s)
        self._reply(self.answer(body) if self.path == "/move" else b"{}")

    def _reply(self, payload: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args) -> None:
        pass


@contextmanager
def raw_bot(**behaviour) -> Iterator[str]:
    handler = type("Bot", (RawBot,), behaviour)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def trail_first_card(body: dict) -> bytes:
    return json.dumps({"card": body["you"]["hand"][0], "capture": []}).encode()
