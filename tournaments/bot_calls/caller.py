"""The hardened HTTP client that calls bots.

Bot replies are hostile input, and a league worker runs dozens of games in one event loop, so a
call must never raise, never hang and never hurt other games. Each call:

- runs under one total deadline (connect, headers and body together, `deadlines.CallDeadline`),
  so a bot that drips a byte at a time is cut off at the deadline rather than per read, and a
  stall of our own process across the deadline is never charged to the bot;
- reads at most `max_bytes` of decoded body (a gzip bomb stops there) and never follows redirects;
- connects only to addresses checked by `bot_calls.addresses`, resolved once per new connection by
  `PinnedResolver`, while the URL keeps the host name for the Host header and TLS (SNI);
- ignores proxy settings from the environment and cookies from bots;
- is signed per Standard Webhooks with the bot's own secret (`games.signing.Signer`);
- ends as a `Reply`: the decoded JSON, or a typed `Fault`, plus the measured latency.

Each bot gets its own `BotClient` with its own connector, so keep-alive connections are reused
across that bot's calls and never shared between bots. `Caller` keeps one client per bot.

Every call the service makes to a bot goes through here: moves and notices (the runner),
registration (`check_bot_info`) and the protocol check (`run_protocol_check`, the pure
`games.check` with a `BotClient` as its transport).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import aiohttp
import orjson
from aiohttp.abc import AbstractResolver, ResolveResult
from asgiref.sync import async_to_sync
from yarl import URL

from games import check
from games.engine import Move
from games.signing import Signer
from games.wire import (
    BotInfo,
    Debug,
    ProtocolError,
    WrongProtocolError,
    move_reply_debug,
    parse_info_reply,
    parse_move_reply,
)

from .addresses import AddressError, BotURL, Resolve, parse_bot_url, resolve_checked
from .deadlines import CallDeadline
from .faults import Fault, FaultKind

logger = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = 64 * 1024
DEFAULT_INFO_TIMEOUT_MS = 3000
USER_AGENT = "EscobaArena/1 (+escoba/1 bot caller)"

T = TypeVar("T")


@dataclass(frozen=True)
class Reply:
    """One HTTP exchange: the body (decoded JSON from `exchange`, bytes from `fetch`), or the
    fault that stopped it."""

    data: Any = None
    fault: Fault | None = None
    latency_ms: float = 0.0


@dataclass(frozen=True)
class MoveReply:
    """A `POST U/move`: the bot's move (not yet checked for legality), or the fault, and the
    reply's private `debug` text when it had one (kept even when the move was unusable)."""

    move: Move | None
    fault: Fault | None
    latency_ms: float
    debug: Debug | None = None


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


class _FaultError(Exception):
    """Internal: carries a fault out of the middle of an exchange."""

    def __init__(self, kind: FaultKind, detail: str) -> None:
        super().__init__(detail)
        self.fault = Fault(kind, detail)


class PinnedResolver(AbstractResolver):
    """Resolves only the bot's own host, and only to addresses that pass the address policy.

    The connector asks once per new connection and connects to exactly what we return, so the
    address checked is the address used: a DNS answer cannot change in between.
    """

    def __init__(self, target: BotURL, *, allow_private: bool, resolve: Resolve | None) -> None:
        self._target = target
        self._allow_private = allow_private
        self._resolve = resolve

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        if host.rstrip(".") != self._target.host:
            raise AddressError(f"{host} is not this bot's host")
        addresses = await resolve_checked(
            self._target, allow_private=self._allow_private, resolve=self._resolve
        )
        return [
            ResolveResult(
                hostname=host,
                host=str(ip),
                port=port,
                family=socket.AF_INET6 if ip.version == 6 else socket.AF_INET,
                proto=0,
                flags=socket.AI_NUMERICHOST,
            )
            for ip in addresses
        ]

    async def close(self) -> None:
        return None


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
    ) -> None:
        self.url = url
        self.max_bytes = max_bytes
        self._allow_private = allow_private
        self._resolve = resolve
        self._signer = Signer(secret) if secret else None
        self._session: aiohttp.ClientSession | None = None
        self.url_fault: Fault | None = None
        self.target: BotURL | None = None
        # The checked URL of `U` (key None) and of each `U/name`, parsed once, not per call.
        self._urls: dict[str | None, URL] = {}
        try:
            self.target = parse_bot_url(url, allow_private=allow_private)
        except AddressError as error:
            self.url_fault = Fault(FaultKind.ADDRESS, str(error))

    def _session_for_loop(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            assert self.target is not None
            connector = aiohttp.TCPConnector(
                resolver=PinnedResolver(
                    self.target, allow_private=self._allow_private, resolve=self._resolve
                ),
                use_dns_cache=False,
                limit=0,
                keepalive_timeout=30,
            )
            self._session = aiohttp.ClientSession(
                connector=connector,
                trust_env=False,
                cookie_jar=aiohttp.DummyCookieJar(),
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=None, sock_read=None),
                headers={"User-Agent": USER_AGENT},
                max_headers=64,
            )
        return self._session

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _headers(self, body: bytes, signature: str | None = None) -> dict[str, str]:
        headers = {} if self._signer is None else self._signer.headers(body, signature=signature)
        if body:
            headers["Content-Type"] = "application/json"
        return headers

    def _url(self, name: str | None) -> URL:
        url = self._urls.get(name)
        if url is None:
            assert self.target is not None
            text = self.target.url if name is None else self.target.endpoint(name)
            url = self._urls[name] = URL(text)
        return url

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

    async def move(self, body: dict[str, Any], timeout_ms: int) -> MoveReply:
        """`POST U/move`: a well-formed move, or a fault. Legality is for the engine to judge."""
        reply = await self.fetch("POST", "move", orjson.dumps(body), timeout_ms)
        if reply.fault is not None:
            return MoveReply(None, reply.fault, reply.latency_ms)
        raw = reply.data
        move, fault, debug = (
            _move_outcome(raw) if len(raw) <= CACHED_REPLY_BYTES else _move_outcome.__wrapped__(raw)
        )
        return MoveReply(move, fault, reply.latency_ms, debug)

    async def exchange(self, method: str, name: str | None, body: bytes, timeout_ms: int) -> Reply:
        """One request under one total deadline, its reply's JSON decoded; every failure
        becomes a `Fault`."""
        reply = await self.fetch(method, name, body, timeout_ms)
        if reply.fault is not None:
            return reply
        data, fault = _json(reply.data)
        return Reply(data=data, fault=fault, latency_ms=reply.latency_ms)

    async def fetch(self, method: str, name: str | None, body: bytes, timeout_ms: int) -> Reply:
        """One request under one total deadline: the reply's body as bytes (`Reply.data`), or
        the fault that stopped it. The latency is the bot's: decoding is not in it."""
        if self.url_fault is not None:
            return Reply(fault=self.url_fault)
        url = self._url(name)
        started = time.perf_counter()
        try:
            async with CallDeadline(timeout_ms / 1000):
                data = await self._send(method, url, body)
        except TimeoutError:
            fault = Fault(FaultKind.TIMEOUT, f"no complete answer within {timeout_ms} ms")
        except _FaultError as error:
            fault = error.fault
        except AddressError as error:
            fault = Fault(FaultKind.ADDRESS, str(error))
        except (aiohttp.ClientError, OSError) as error:
            fault = Fault(FaultKind.CONNECT, _describe(error))
        except Exception as error:  # a bot must never crash a worker, whatever it sends
            logger.warning("unexpected error calling %s", url, exc_info=True)
            fault = Fault(FaultKind.CONNECT, _describe(error))
        else:
            return Reply(data=data, latency_ms=_since(started))
        return Reply(fault=fault, latency_ms=_since(started))

    async def _send(self, method: str, url: URL, body: bytes) -> Any:
        session = self._session_for_loop()
        response = await session.request(
            method,
            url,
            data=body or None,
            headers=self._headers(body),
            allow_redirects=False,
        )
        complete = False
        try:
            if 300 <= response.status < 400:
                location = response.headers.get("Location", "")[:200]
                raise _FaultError(FaultKind.REDIRECT, f"HTTP {response.status} to {location!r}")
            if response.status != 200:
                raise _FaultError(FaultKind.HTTP_STATUS, f"HTTP {response.status}")
            raw = await self._read_capped(response)
            complete = True
        finally:
            if complete:
                response.release()
            else:
                # Unread bytes are still coming: this connection cannot be reused.
                response.close()
        return raw

    async def _read_capped(self, response: aiohttp.ClientResponse) -> bytes:
        declared = response.content_length
        if (
            declared is not None
            and declared > self.max_bytes
            and "Content-Encoding" not in (response.headers)
        ):
            raise _FaultError(FaultKind.TOO_LARGE, f"{declared} bytes declared")
        body = await self._read_upto(response)
        if len(body) > self.max_bytes:
            raise _FaultError(FaultKind.TOO_LARGE, f"more than {self.max_bytes} bytes")
        return body

    async def _read_upto(self, response: aiohttp.ClientResponse) -> bytes:
        """The body, or its first chunks once they pass `max_bytes` (a gzip bomb stops there)."""
        body = bytearray()
        content = response.content
        # A small reply is usually whole after the first read: checking for the end first
        # saves an empty read per call.
        while not content.at_eof():
            chunk = await content.readany()
            if not chunk:
                break
            body += chunk
            if len(body) > self.max_bytes:
                break
        return bytes(body)

    async def answer(self, call: check.Call, timeout_ms: int) -> check.Answer:
        """One call of the protocol check (`games.check`), under the same deadline, address
        policy and size cap as a move, but answered whatever it is: the check judges the status
        and the body itself, in its own words."""
        if self.url_fault is not None:
            return check.Answer(error=self.url_fault.message, error_type="AddressError")
        body = b"" if call.body is None else orjson.dumps(call.body)
        url = self._url(call.route or None)
        started = time.perf_counter()
        try:
            async with CallDeadline(timeout_ms / 1000):
                status, payload = await self._send_raw(call, url, body)
        except TimeoutError:
            error = check.too_slow(timeout_ms)
            return check.Answer(error=error, error_type="TimeoutError", timed_out=True)
        except Exception as error:  # a bot must never crash a check, whatever it does
            if not isinstance(error, aiohttp.ClientError | OSError | AddressError):
                logger.warning("unexpected error checking %s", url, exc_info=True)
            name = type(error).__name__
            return check.Answer(error=f"{name}: {_describe(error)}", error_type=name)
        return check.Answer(status, payload, _since(started))

    async def _send_raw(self, call: check.Call, url: URL, body: bytes) -> tuple[int, bytes]:
        forged = check.FORGED_SIGNATURE if call.forged else None
        session = self._session_for_loop()
        response = await session.request(
            call.method,
            url,
            data=body or None,
            headers=self._headers(body, forged),
            allow_redirects=False,
        )
        complete = False
        try:
            payload = await self._read_upto(response)
            complete = len(payload) <= self.max_bytes
        finally:
            if complete:
                response.release()
            else:
                response.close()
        return response.status, payload


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
    """A move reply's body as the runner takes it: the move, or the `bad_json` or `bad_schema`
    fault, and the private debug text (kept whatever became of the move). Values only (frozen
    and interned), so a cached outcome can be handed to any number of games."""
    data, fault = _json(raw)
    if fault is not None:
        return None, fault, None
    debug = move_reply_debug(data)
    try:
        return parse_move_reply(data), None, debug
    except ProtocolError as error:
        return None, Fault(FaultKind.BAD_SCHEMA, str(error)), debug


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
) -> MoveReply:
    """One `POST U/move` from sync code, e.g. to put a scripted position to a live bot."""
    return run_sync(_with_client, url, secret, allow_private, lambda c: c.move(body, timeout_ms))


async def run_protocol_check(
    report: check.CheckReport,
    *,
    secret: str | None,
    allow_private: bool = False,
    resolve: Resolve | None = None,
) -> check.CheckReport:
    """The protocol check of `games.check` against the bot at `report.url`, each request under
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
