"""The hardened HTTP client that calls bots.

Bot replies are hostile input, and a league worker runs dozens of games in one event loop, so a
call must never raise, never hang and never hurt other games. Each call:

- runs under one total deadline (connect, headers and body together, `deadlines.CallDeadline`),
  so a bot that drips a byte at a time is cut off at the deadline rather than per read, and a
  stall of our own process across the deadline is never charged to the bot;
- goes over `connections.ConnectionPool`: at most `max_bytes` of decoded body (a gzip bomb stops
  there) and a capped header block are read, redirects are never followed, and connections go
  only to addresses checked by `bot_calls.addresses`, resolved once per new connection, while
  the URL keeps the host name for the Host header and TLS (SNI);
- sends no cookies and uses no proxy;
- is signed per Standard Webhooks with the bot's own secret (`games.signing.Signer`);
- ends as a `Reply`: the decoded JSON, or a typed `Fault`, plus the measured latency.

Each bot gets its own `BotClient` with its own connections, so keep-alive connections are reused
across that bot's calls and never shared between bots. `Caller` keeps one client per bot.

Every call the service makes outside goes through here: moves and notices (the runner),
registration (`check_bot_info`), the protocol check (`run_protocol_check`, the pure
`games.protocol_check` with a `BotClient` as its transport) and the owners' notification webhooks
(`services.notifications`, a `BotClient` of the webhook's URL and secret).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

import orjson
from asgiref.sync import async_to_sync

from games import protocol_check as check
from games.engine import Move
from games.faults import Fault, FaultKind
from games.referee import Answer, body_outcome
from games.signing import Signer
from games.wire import (
    BotInfo,
    Debug,
    ProtocolError,
    WrongProtocolError,
    parse_info_reply,
)

from .addresses import AddressError, BotURL, Resolve, parse_bot_url
from .connections import ConnectionPool, ReplyFault
from .deadlines import CallDeadline

logger = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = 64 * 1024
DEFAULT_INFO_TIMEOUT_MS = 3000
USER_AGENT = "EscobaArena/1 (+escoba/1 bot caller)"

T = TypeVar("T")


@dataclass(frozen=True)
class Reply:
    """One HTTP exchange: the body (decoded JSON from `exchange`, bytes from `fetch`) and the
    status, or the fault that stopped it."""

    data: Any = None
    fault: Fault | None = None
    latency_ms: float = 0.0
    status: int = 0


@dataclass(frozen=True)
class InfoResult:
    """A `GET U` check, as the bot registry needs it."""

    info: BotInfo | None
    fault: Fault | None
    latency_ms: float

    @property
    def ok(self) -> bool:
        return self.fault is None

    @property
    def reason(self) -> str:
        """A sentence for the user saying what is wrong, or "ok"."""
        return "ok" if self.fault is None else self.fault.message


class BotClient:
    """The HTTP client of one bot. Use it in one event loop and `aclose()` it at the end.

    A URL refused by the address policy does not raise here: every call then ends with an
    `address` fault, so a game against that bot is played (and forfeited) like any other.
    """

    def __init__(
        self,
        url: str,
        secret: str | None,
        *,
        allow_private: bool = False,
        max_bytes: int = DEFAULT_MAX_BYTES,
        resolve: Resolve | None = None,
        user_agent: str = USER_AGENT,
    ) -> None:
        self.url = url
        self.max_bytes = max_bytes
        self._user_agent = user_agent
        self._allow_private = allow_private
        self._resolve = resolve
        self._signer = Signer(secret) if secret else None
        self._pool: ConnectionPool | None = None
        self.url_fault: Fault | None = None
        self.target: BotURL | None = None
        # The start of each request (its request line and fixed headers) by method and name
        # (None for `U` itself), made once.
        self._heads: dict[tuple[str, str | None], bytes] = {}
        try:
            self.target = parse_bot_url(url, allow_private=allow_private)
        except AddressError as error:
            self.url_fault = Fault(FaultKind.ADDRESS, str(error))

    def _connections(self) -> ConnectionPool:
        if self._pool is None:
            assert self.target is not None
            self._pool = ConnectionPool(
                self.target,
                allow_private=self._allow_private,
                resolve=self._resolve,
                max_bytes=self.max_bytes,
            )
        return self._pool

    async def aclose(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def _request(
        self,
        method: str,
        name: str | None,
        body: bytes,
        signature: str | None = None,
        msg_id: str | None = None,
    ) -> bytes:
        """The whole request as bytes: its head (made once per method and name), the signature
        headers and the body."""
        head = self._heads.get((method, name))
        if head is None:
            url = self._url(name)
            head = self._heads[(method, name)] = _request_head(method, url, self._user_agent)
        lines = []
        if self._signer is not None:
            signed = self._signer.headers(body, signature=signature, msg_id=msg_id)
            lines = [f"{header}: {value}\r\n" for header, value in signed.items()]
        if body:
            lines.append(f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n")
        elif method != "GET":
            lines.append("Content-Length: 0\r\n")
        return b"".join((head, "".join(lines).encode("latin-1"), b"\r\n", body))

    def _url(self, name: str | None) -> str:
        assert self.target is not None
        return self.target.url if name is None else self.target.endpoint(name)

    async def post(self, name: str, body: dict[str, Any], timeout_ms: int) -> Reply:
        """`POST U/name` with a JSON body; the reply's JSON or a fault, never an exception."""
        return await self.exchange("POST", name, orjson.dumps(body), timeout_ms)

    async def get_info(self, timeout_ms: int = DEFAULT_INFO_TIMEOUT_MS) -> InfoResult:
        """`GET U`, checked against the info reply schema."""
        reply = await self.exchange("GET", None, b"", timeout_ms)
        if reply.fault is not None:
            return InfoResult(None, reply.fault, reply.latency_ms)
        try:
            info = parse_info_reply(reply.data)
        except WrongProtocolError as error:
            return InfoResult(None, Fault(FaultKind.WRONG_PROTOCOL, str(error)), reply.latency_ms)
        except ProtocolError as error:
            return InfoResult(None, Fault(FaultKind.BAD_SCHEMA, str(error)), reply.latency_ms)
        return InfoResult(info, None, reply.latency_ms)

    async def move(self, body: dict[str, Any], timeout_ms: int) -> Answer:
        """`POST U/move`: a well-formed move, or a fault, and the reply's private `debug` text
        when it had one (kept even when the move was unusable), as the referee judges it
        (`games.referee.Answer`). Legality is for the engine to judge."""
        reply = await self.fetch("POST", "move", orjson.dumps(body), timeout_ms)
        if reply.fault is not None:
            return Answer(None, reply.fault, reply.latency_ms)
        raw = reply.data
        move, fault, debug = (
            _move_outcome(raw) if len(raw) <= CACHED_REPLY_BYTES else _move_outcome.__wrapped__(raw)
        )
        return Answer(move, fault, reply.latency_ms, debug)

    async def exchange(self, method: str, name: str | None, body: bytes, timeout_ms: int) -> Reply:
        """One request under one total deadline, its reply's JSON decoded; every failure
        becomes a `Fault`."""
        reply = await self.fetch(method, name, body, timeout_ms)
        if reply.fault is not None:
            return reply
        data, fault = _json(reply.data)
        return Reply(data=data, fault=fault, latency_ms=reply.latency_ms)

    async def fetch(
        self,
        method: str,
        name: str | None,
        body: bytes,
        timeout_ms: int,
        *,
        strict: bool = True,
        msg_id: str | None = None,
    ) -> Reply:
        """One request under one total deadline: the reply's body as bytes (`Reply.data`) and
        its status, or the fault that stopped it. The latency is the bot's: decoding is not in
        it.

        `strict` (moves and notices): anything but a 200 is a fault. Otherwise any status comes
        back, a redirect unfollowed, the body cut off past the cap (an owner's webhook, whose
        answer is its status). `msg_id` signs under that `webhook-id` instead of a new one.
        """
        if self.url_fault is not None:
            return Reply(fault=self.url_fault)
        request = self._request(method, name, body, None, msg_id)
        started = time.perf_counter()
        try:
            async with CallDeadline(timeout_ms / 1000):
                reply = await self._connections().send(request, strict=strict)
        except TimeoutError:
            fault = Fault(FaultKind.TIMEOUT, f"no complete answer within {timeout_ms} ms")
        except ReplyFault as error:
            fault = Fault(error.kind, error.detail)
        except AddressError as error:
            fault = Fault(FaultKind.ADDRESS, str(error))
        except OSError as error:
            fault = Fault(FaultKind.CONNECT, _describe(error))
        except Exception as error:  # a bot must never crash a worker, whatever it sends
            logger.warning("unexpected error calling %s", self._url(name), exc_info=True)
            fault = Fault(FaultKind.CONNECT, _describe(error))
        else:
            return Reply(data=reply.body, latency_ms=_since(started), status=reply.status)
        return Reply(fault=fault, latency_ms=_since(started))

    async def answer(self, call: check.Call, timeout_ms: int) -> check.Answer:
        """One call of the protocol check (`games.protocol_check`), under the same deadline, address
        policy and size cap as a move, but answered whatever it is: the check judges the status
        and the body itself, in its own words."""
        if self.url_fault is not None:
            return check.Answer(error=self.url_fault.message, error_type="AddressError")
        body = b"" if call.body is None else orjson.dumps(call.body)
        forged = check.FORGED_SIGNATURE if call.forged else None
        request = self._request(call.method, call.route or None, body, forged)
        started = time.perf_counter()
        try:
            async with CallDeadline(timeout_ms / 1000):
                reply = await self._connections().send(request, strict=False)
        except TimeoutError:
            error = check.too_slow(timeout_ms)
            return check.Answer(error=error, error_type="TimeoutError", timed_out=True)
        except Exception as error:  # a bot must never crash a check, whatever it does
            if not isinstance(error, ReplyFault | OSError | AddressError):
                url = self._url(call.route or None)
                logger.warning("unexpected error checking %s", url, exc_info=True)
            name = type(error).__name__
            return check.Answer(error=f"{name}: {_describe(error)}", error_type=name)
        return check.Answer(reply.status, reply.body, _since(started))


def _request_head(method: str, url: str, user_agent: str) -> bytes:
    """A request's line and fixed headers for `url` (checked by the address policy, so its
    host and path are plain ASCII)."""
    parts = urlsplit(url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return (
        f"{method} {target} HTTP/1.1\r\nHost: {parts.netloc}\r\nUser-Agent: {user_agent}\r\n"
        "Accept: */*\r\nAccept-Encoding: gzip, deflate\r\n"
    ).encode("ascii")


def _json(raw: bytes) -> tuple[Any, Fault | None]:
    """A reply body decoded as JSON, or the `bad_json` fault."""
    try:
        return orjson.loads(raw), None
    except orjson.JSONDecodeError as error:
        return None, Fault(FaultKind.BAD_JSON, f"invalid JSON: {error}")


# Move replies up to this size are parsed once per distinct body: bots send the same few dozen
# bodies (a card and its capture) again and again, and the outcome depends on the bytes alone.
CACHED_REPLY_BYTES = 512


@functools.lru_cache(maxsize=8192)
def _move_outcome(raw: bytes) -> tuple[Move | None, Fault | None, Debug | None]:
    """A move reply's body as the referee judges it (`games.referee.body_outcome`: the move, or
    the `bad_json` or `bad_schema` fault, and the private debug text), decoded by orjson. Values
    only (frozen and interned), so a cached outcome can be handed to any number of games."""
    return body_outcome(raw, orjson.loads)


def _since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


def _describe(error: BaseException) -> str:
    text = str(error) or type(error).__name__
    return text if len(text) <= 200 else text[:197] + "..."


class Caller:
    """One `BotClient` per bot for the games of one event loop.

    A bot is its (url, secret) pair: the same bot in two seats, or in many concurrent games,
    shares one client and its keep-alive connections; two bots never do.
    """

    def __init__(
        self,
        *,
        allow_private: bool = False,
        max_bytes: int = DEFAULT_MAX_BYTES,
        resolve: Resolve | None = None,
    ) -> None:
        self.allow_private = allow_private
        self.max_bytes = max_bytes
        self._resolve = resolve
        self._clients: dict[tuple[str, str | None], BotClient] = {}

    def client(self, url: str, secret: str | None) -> BotClient:
        key = (url, secret)
        client = self._clients.get(key)
        if client is None:
            client = BotClient(
                url,
                secret,
                allow_private=self.allow_private,
                max_bytes=self.max_bytes,
                resolve=self._resolve,
            )
            self._clients[key] = client
        return client

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        await asyncio.gather(*(client.aclose() for client in clients))

    async def __aenter__(self) -> Caller:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def run_sync(function: Callable[..., Awaitable[T]], *args: Any) -> T:
    """`await function(*args)` from sync code (Django views, Celery tasks), by asgiref's
    `async_to_sync`; from code already inside a running event loop, which `async_to_sync`
    refuses, it runs in a helper thread that is waited for."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return async_to_sync(function)(*args)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(async_to_sync(function), *args).result()


async def _with_client(
    url: str,
    secret: str | None,
    allow_private: bool,
    call: Callable[[BotClient], Awaitable[T]],
) -> T:
    client = BotClient(url, secret, allow_private=allow_private)
    try:
        return await call(client)
    finally:
        await client.aclose()


def check_bot_info(
    url: str,
    secret: str | None,
    timeout_ms: int = DEFAULT_INFO_TIMEOUT_MS,
    allow_private: bool = False,
) -> InfoResult:
    """`GET U` for the registry: is the URL allowed, and does the bot answer `escoba/1` in time?"""
    return run_sync(_with_client, url, secret, allow_private, lambda c: c.get_info(timeout_ms))


def call_move(
    url: str,
    secret: str | None,
    body: dict[str, Any],
    timeout_ms: int,
    allow_private: bool = False,
) -> Answer:
    """One `POST U/move` from sync code, e.g. to put a scripted position to a live bot."""
    return run_sync(_with_client, url, secret, allow_private, lambda c: c.move(body, timeout_ms))


async def run_protocol_check(
    report: check.CheckReport,
    *,
    secret: str | None,
    allow_private: bool = False,
    resolve: Resolve | None = None,
) -> check.CheckReport:
    """The protocol check (`games.protocol_check`) of the bot at `report.url`, each request under
    `report.timeout_ms`, through a `BotClient` (address policy, signing, size cap).

    Fills `report` as it goes, so a caller that stops waiting (an overall deadline) keeps the
    judgements made so far. A URL the address policy refuses is one failed `url` line, with
    no request sent.
    """
    client = BotClient(report.url, secret, allow_private=allow_private, resolve=resolve)
    if client.url_fault is not None:
        report.add("url", check.FAIL, client.url_fault.message)
        return report
    timeout_ms = report.timeout_ms
    try:
        return await check.run_async(
            report, lambda call: client.answer(call, timeout_ms), signed=bool(secret)
        )
    finally:
        await client.aclose()
