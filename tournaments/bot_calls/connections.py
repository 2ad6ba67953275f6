"""Keep-alive HTTP/1.1 connections to one bot: a request out in one write, its reply read back.

Why not a general HTTP client: a league worker calls a bot for every move, and aiohttp's
sessions, request and response objects, tracing hooks and a task per request body took more of
the worker's CPU a move than everything else it does together (docs/benchmarks.md, issue 15).
The caller needs little: one request at a time per connection, a status, three headers and a
body of a few hundred bytes. So a request is bytes prepared by the caller and written at once,
and the reply is parsed by httptools (llhttp, the parser of Node.js, which uvicorn uses too) in
callbacks that keep only that.

Bot replies are hostile input; what a general client gave us is kept here:

- at most `max_bytes` of (decoded) body, counted as it arrives, and at most `MAX_HEAD_BYTES` of
  status line and headers, `MAX_HEADERS` of them: a gzip bomb, a huge chunked body or an
  endless header block stops at the cap;
- gzip and deflate bodies decoded (we say we accept them), through a decompressor whose output
  is capped too;
- in strict mode (moves and notices) a redirect, any status but 200 and a declared length over
  the cap end the exchange as soon as the header block is in, without reading on;
- a connection is used again only after a whole reply that allows it; one idle for
  `KEEPALIVE_S` is closed, whether its bot is called again or not; bytes from a bot that no
  request asked for close it;
- connections go only to addresses the address policy passed (`resolve_checked`, once per new
  connection), with the URL's host name kept for TLS (SNI and the certificate's check).

Deadlines are the caller's (`deadlines.CallDeadline`): a cancelled exchange closes its
connection, since the rest of that reply may still come.
"""

from __future__ import annotations

import asyncio
import errno
import ssl
import zlib
from dataclasses import dataclass
from typing import cast

import httptools

from games.faults import FaultKind

from .addresses import BotURL, Resolve, resolve_checked

KEEPALIVE_S = 30.0
MAX_HEADERS = 64
MAX_HEAD_BYTES = 16 * 1024
_DECODERS = {
    b"gzip": 16 + zlib.MAX_WBITS,
    b"x-gzip": 16 + zlib.MAX_WBITS,
    b"deflate": zlib.MAX_WBITS,
}


class ReplyFault(Exception):
    """The reply broke a rule of ours: its fault kind and a detail for the bot's author."""

    def __init__(self, kind: FaultKind, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


@dataclass(frozen=True, slots=True)
class Exchange:
    """A reply as the caller sees it: the status and the body, decoded (in lenient mode, past
    the cap, only what had come: more than `max_bytes` says the body was too large)."""

    status: int
    body: bytes


class _Stop(Exception):
    """Internal: raised in a parser callback to end the reply early (`_Connection._outcome`
    says how it ended)."""


class _Connection(asyncio.Protocol):
    """One keep-alive connection, one exchange at a time."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.transport: asyncio.Transport | None = None
        self.open = False
        self.idle_since = 0.0
        self._waiter: asyncio.Future[tuple[Exchange, bool]] | None = None
        self._parser: httptools.HttpResponseParser | None = None
        self._strict = True
        self._outcome: Exchange | ReplyFault | None = None
        self._reset()

    def _reset(self) -> None:
        self._head_bytes = 0  # received while the header block is not complete
        self._head_size = 0  # of the headers parsed
        self._headers = 0
        self._head_done = False
        self._status = 0
        self._length: int | None = None
        self._chunked = False
        self._encoding = b""
        self._location = b""
        self._decoder: zlib._Decompress | None = None
        self._body = bytearray()

    # -- the exchange ---------------------------------------------------------------------

    def exchange(self, request: bytes, strict: bool) -> asyncio.Future[tuple[Exchange, bool]]:
        """Send `request`; the future gives the reply and whether the connection may be reused,
        or raises `ReplyFault` or `ConnectionError`."""
        assert self.transport is not None and self._waiter is None
        self._reset()
        self._strict = strict
        self._outcome = None
        self._waiter = waiter = asyncio.get_running_loop().create_future()
        self.transport.write(request)
        return waiter

    def _settle(self, keep: bool) -> None:
        waiter, self._waiter = self._waiter, None
        outcome, self._outcome = self._outcome, None
        if waiter is None or waiter.done():
            return
        if isinstance(outcome, ReplyFault):
            waiter.set_exception(outcome)
        elif outcome is not None:
            waiter.set_result((outcome, keep))
        if not keep:
            self.close()

    def reusable(self, now: float) -> bool:
        """Open, and idle for less than `KEEPALIVE_S` at `now` (the loop's time)."""
        return self.open and now - self.idle_since < KEEPALIVE_S

    def close(self) -> None:
        self.open = False
        if self.transport is not None:
            self.transport.abort()

    # -- asyncio.Protocol -----------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A stream transport (uvloop's are not subclasses of asyncio's, only alike).
        self.transport = cast(asyncio.Transport, transport)
        self.open = True
        # One parser for the connection's replies, one after the other (llhttp starts afresh
        # after each whole message). After an error it is not used again: nor is the connection.
        self._parser = httptools.HttpResponseParser(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.open = False
        if self._waiter is None:
            return
        if self._head_done and self._length is None and not self._chunked:
            # A body without a length ends with the connection.
            self._finish_body()
            if self._outcome is None:
                self._outcome = Exchange(self._status, bytes(self._body))
        elif self._outcome is None:
            waiter, self._waiter = self._waiter, None
            if not waiter.done():
                waiter.set_exception(
                    ConnectionError("connection closed by the bot before its reply was complete")
                )
            return
        self._settle(keep=False)

    def data_received(self, data: bytes) -> None:
        if self._waiter is None:
            # Bytes no request asked for: this connection is out of step with its bot.
            self.close()
            return
        if not self._head_done:
            self._head_bytes += len(data)
        try:
            assert self._parser is not None
            self._parser.feed_data(data)
        except httptools.HttpParserError as error:
            if self._waiter is None:  # a reply no request asked for (`on_message_begin`)
                self.close()
                return
            if self._outcome is None:
                self._outcome = ReplyFault(FaultKind.CONNECT, f"not an HTTP/1.1 reply: {error}")
            self._settle(keep=False)
            return
        if self._outcome is None and not self._head_done and self._head_bytes > MAX_HEAD_BYTES:
            self._outcome = _head_too_large()
            self._settle(keep=False)

    # -- httptools callbacks ----------------------------------------------------------------

    def _stop(self, outcome: Exchange | ReplyFault) -> None:
        self._outcome = outcome
        raise _Stop

    def on_message_begin(self) -> None:
        if self._waiter is None:
            raise _Stop  # bytes after the reply that no request asked for

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers += 1
        if self._headers > MAX_HEADERS:
            self._stop(ReplyFault(FaultKind.TOO_LARGE, f"more than {MAX_HEADERS} headers"))
        # Counted here too, for a header block that came in the same read as what follows it.
        self._head_size += len(name) + len(value) + 4
        if self._head_size > MAX_HEAD_BYTES:
            self._stop(_head_too_large())
        name = name.lower()
        if name == b"content-length":
            try:
                self._length = int(value)
            except ValueError:
                self._stop(ReplyFault(FaultKind.CONNECT, "an invalid Content-Length"))
        elif name == b"transfer-encoding":
            self._chunked = b"chunked" in value.lower()
        elif name == b"content-encoding":
            self._encoding = value.strip().lower()
        elif name == b"location":
            self._location = value

    def on_headers_complete(self) -> None:
        self._head_done = True
        assert self._parser is not None
        self._status = status = self._parser.get_status_code()
        if self._strict:
            if 300 <= status < 400:
                location = self._location.decode("latin-1")[:200]
                self._stop(ReplyFault(FaultKind.REDIRECT, f"HTTP {status} to {location!r}"))
            if status != 200:
                self._stop(ReplyFault(FaultKind.HTTP_STATUS, f"HTTP {status}"))
            if self._length is not None and self._length > self.max_bytes and not self._encoding:
                self._stop(ReplyFault(FaultKind.TOO_LARGE, f"{self._length} bytes declared"))
        wbits = _DECODERS.get(self._encoding)
        if wbits is not None:
            self._decoder = zlib.decompressobj(wbits)

    def on_body(self, chunk: bytes) -> None:
        decoder = self._decoder
        if decoder is not None:
            try:
                chunk = decoder.decompress(chunk, self.max_bytes + 1 - len(self._body))
            except zlib.error as error:
                self._stop(_undecodable(error))
            if decoder.unconsumed_tail:
                chunk += b"\0"  # more is waiting in the decoder: past the cap whatever it is
        self._body += chunk
        if len(self._body) > self.max_bytes:
            self._over_the_cap()

    def on_message_complete(self) -> None:
        self._finish_body()
        assert self._parser is not None
        keep = self._outcome is None and self._parser.should_keep_alive()
        if self._outcome is None:
            self._outcome = Exchange(self._status, bytes(self._body))
        self._settle(keep)

    def _finish_body(self) -> None:
        if self._decoder is not None and self._outcome is None:
            try:
                self._body += self._decoder.flush()
            except zlib.error as error:
                self._outcome = _undecodable(error)
                return
            self._decoder = None
            if len(self._body) > self.max_bytes:
                try:
                    self._over_the_cap()
                except _Stop:
                    pass

    def _over_the_cap(self) -> None:
        if self._strict:
            self._stop(ReplyFault(FaultKind.TOO_LARGE, f"more than {self.max_bytes} bytes"))
        self._stop(Exchange(self._status, bytes(self._body)))


def _head_too_large() -> ReplyFault:
    return ReplyFault(FaultKind.TOO_LARGE, f"a header block of more than {MAX_HEAD_BYTES} bytes")


def _undecodable(error: zlib.error) -> ReplyFault:
    return ReplyFault(FaultKind.BAD_JSON, f"a compressed body that does not decode: {error}")


class ConnectionPool:
    """The idle keep-alive connections to one bot, and new ones made through the address policy.

    Use it in one event loop; `close()` at the end.
    """

    def __init__(
        self,
        target: BotURL,
        *,
        allow_private: bool,
        resolve: Resolve | None,
        max_bytes: int,
    ) -> None:
        self._target = target
        self._allow_private = allow_private
        self._resolve = resolve
        self._max_bytes = max_bytes
        self._idle: list[_Connection] = []
        self._pruning: asyncio.TimerHandle | None = None
        self._tls: ssl.SSLContext | None = None
        if target.scheme == "https":
            self._tls = ssl.create_default_context()

    async def send(self, request: bytes, *, strict: bool) -> Exchange:
        """One request and its reply on an idle connection, or on a new one.

        `strict` (moves and notices): a redirect, a status but 200, a declared length or a body
        over the cap is a `ReplyFault`. Otherwise (the protocol check, which judges replies in
        its own words) any status comes back with its body, cut off just past the cap.
        """
        loop = asyncio.get_running_loop()
        connection = self._take_idle(loop.time()) or await self._connect(loop)
        try:
            exchange, keep = await connection.exchange(request, strict)
        except BaseException:
            connection.close()
            raise
        if keep and connection.open:
            connection.idle_since = loop.time()
            self._idle.append(connection)
            if self._pruning is None:
                self._pruning = loop.call_later(KEEPALIVE_S, self._prune, loop)
        return exchange

    def _prune(self, loop: asyncio.AbstractEventLoop) -> None:
        """Close the connections idle for `KEEPALIVE_S`, and look again when the next one will
        be: a bot no longer called (it left the ladder, its URL changed) holds no socket of the
        worker's for longer than that."""
        now = loop.time()
        kept = []
        for connection in self._idle:
            if connection.reusable(now):
                kept.append(connection)
            else:
                connection.close()
        self._idle = kept
        self._pruning = None
        if kept:
            due = min(connection.idle_since for connection in kept) + KEEPALIVE_S
            self._pruning = loop.call_at(due, self._prune, loop)

    def _take_idle(self, now: float) -> _Connection | None:
        idle = self._idle
        while idle:
            connection = idle.pop()
            if connection.reusable(now):
                return connection
            connection.close()
        return None

    async def _connect(self, loop: asyncio.AbstractEventLoop) -> _Connection:
        target = self._target
        addresses = await resolve_checked(
            target, allow_private=self._allow_private, resolve=self._resolve
        )
        failure: OSError | None = None
        for ip in addresses:
            try:
                _, connection = await loop.create_connection(
                    lambda: _Connection(self._max_bytes),
                    host=str(ip),
                    port=target.port,
                    ssl=self._tls,
                    server_hostname=target.host if self._tls is not None else None,
                )
            except OSError as error:
                failure = self._in_words(error, ip)
                continue
            return connection
        assert failure is not None
        raise failure

    def _in_words(self, error: OSError, ip: object) -> OSError:
        """A failed connection as the registry tells its owner (`bot_messages.connect_message`):
        a TLS handshake cut off says so, where the bare error would be an empty reset."""
        if self._tls is None or isinstance(error, ConnectionRefusedError | ssl.SSLError):
            return error
        if error.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH):
            return error
        text = str(error) or type(error).__name__
        return ConnectionError(f"the TLS handshake with {ip} failed: {text}")

    def close(self) -> None:
        if self._pruning is not None:
            self._pruning.cancel()
            self._pruning = None
        idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()
