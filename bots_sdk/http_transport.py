"""The SDK's HTTP transport: a standard-library client with one keep-alive connection to a bot,
signing with the bot's secret when given one, each request under one total deadline.

The protocol check (`run_check`), the local league and `replay` send their calls through it. What
the check sends and how each answer is judged are `games.protocol_check`, the very code the arena
runs for `POST /api/bots/{id}/check/` through its own caller.
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import threading
import time
from urllib.parse import urlsplit

from games import protocol_check
from games.protocol_check import (
    DEFAULT_TIMEOUT_MS,
    FAIL,
    MAX_REPLY_BYTES,
    Answer,
    Call,
    CheckReport,
    too_slow,
)
from games.signing import Signer

__all__ = ["HttpTransport", "run_check"]


class HttpTransport:
    """One keep-alive connection to the bot, signing each request when a secret is given.

    Each request has one total deadline (`timeout_ms`: connecting, sending, the headers and the
    body together), as the arena's own caller has: a socket timeout alone is per read, so a bot
    dripping a byte at a time would hold a check open for ever. At the deadline a timer shuts
    the socket down, which wakes the blocked read.
    """

    def __init__(self, url: str, secret: str | None, timeout_ms: int) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.base = parts.path.rstrip("/")
        self.netloc = parts.netloc.rpartition("@")[2]
        self.signer = Signer(secret) if secret else None
        self.timeout_ms = timeout_ms
        self.timeout_s = timeout_ms / 1000
        self.connection: http.client.HTTPConnection | None = None

    def send(self, call: Call) -> Answer:
        """Send one call of the check; every failure is an `Answer` with an error, never raised."""
        data = b"" if call.body is None else json.dumps(call.body, separators=(",", ":")).encode()
        route = self.base + (f"/{call.route}" if call.route else "") or "/"
        started = time.perf_counter()
        try:
            status, payload = self._request(call, route, data, started + self.timeout_s)
        except TimeoutError:
            self.close()
            error = too_slow(self.timeout_ms)
            return Answer(error=error, error_type="TimeoutError", timed_out=True)
        except (OSError, http.client.HTTPException) as exc:
            self.close()
            return Answer(error=f"{type(exc).__name__}: {exc}", error_type=type(exc).__name__)
        return Answer(status, payload, (time.perf_counter() - started) * 1000)

    def _request(self, call: Call, route: str, data: bytes, deadline: float) -> tuple[int, bytes]:
        for attempt in (1, 2):
            try:
                return self._exchange(call, route, data, deadline)
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                # A kept-alive connection the bot closed meanwhile: retry once on a fresh one.
                self.close()
                if attempt == 2 or time.perf_counter() >= deadline:
                    raise
        raise AssertionError("unreachable")

    def _connect(self, timeout_s: float) -> http.client.HTTPConnection:
        if self.scheme == "https":
            context = ssl.create_default_context()
            connection: http.client.HTTPConnection = http.client.HTTPSConnection(
                self.host, self.port, timeout=timeout_s, context=context
            )
        else:
            connection = http.client.HTTPConnection(self.host, self.port, timeout=timeout_s)
        connection.connect()
        return connection

    def _headers(self, call: Call, data: bytes) -> dict[str, str]:
        headers = {
            "Host": self.netloc,
            "Content-Type": "application/json",
            "Accept": "application/json",
        }
        if self.signer is not None:
            # A fresh id for every attempt: a bot that refuses replayed ids must not refuse
            # our retry on a new connection.
            forged = protocol_check.FORGED_SIGNATURE if call.forged else None
            headers.update(self.signer.headers(data, signature=forged))
        return headers

    def _exchange(self, call: Call, route: str, data: bytes, deadline: float) -> tuple[int, bytes]:
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            raise TimeoutError
        if self.connection is None:
            self.connection = self._connect(remaining)
            remaining = deadline - time.perf_counter()
        connection = self.connection
        # Held here: once an answer says it will close, http.client lets go of the socket.
        sock = connection.sock
        sock.settimeout(max(remaining, 0.001))
        expired = threading.Event()

        def cut_off() -> None:
            expired.set()
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

        timer = threading.Timer(max(remaining, 0.0), cut_off)
        timer.daemon = True
        timer.start()
        try:
            connection.request(
                call.method,
                route,
                body=data if call.method == "POST" else None,
                headers=self._headers(call, data),
            )
            response = connection.getresponse()
            payload = response.read(MAX_REPLY_BYTES + 1)
        except (OSError, http.client.HTTPException):
            if expired.is_set():
                raise TimeoutError from None
            raise
        finally:
            timer.cancel()
        if expired.is_set():
            # The answer was complete just as the deadline passed; the socket is gone anyway.
            raise TimeoutError
        if len(payload) > MAX_REPLY_BYTES or response.will_close:
            self.close()
        return response.status, payload

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def run_check(
    url: str, *, secret: str | None = None, timeout_ms: int = DEFAULT_TIMEOUT_MS
) -> CheckReport:
    """Check the bot at `url`; never raises for anything the bot does, the report says it."""
    report = CheckReport(url=url, timeout_ms=timeout_ms)
    try:
        transport = HttpTransport(url, secret, timeout_ms)
    except (ValueError, TypeError) as exc:
        report.add("url", FAIL, str(exc))
        return report
    try:
        return protocol_check.run(report, transport.send, signed=transport.signer is not None)
    finally:
        transport.close()
