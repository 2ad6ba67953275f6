"""Server-Sent Events plumbing shared by the live streams (web/game_streams.py,
web/page_streams.py): the event and comment lines, the streaming response, the per-process and
per-address limits on open streams, and the few database threads every stream reads through.

Under WSGI (a sync server, the test live server) an endless stream would hold a worker for good,
so the stream views answer 503 there (``NEEDS_ASGI``) and the pages fetch their updates instead.

Bounds: one process keeps at most ``ESCOBA_LIVE_MAX_STREAMS`` streams open and answers the next
with a 503 in the project's JSON error body, one client address at most
``ESCOBA_LIVE_MAX_STREAMS_PER_CLIENT`` of them (a 429). The streams of a process read the
database from ``ESCOBA_LIVE_DB_THREADS`` shared threads, so they hold that many database
connections in all, not one each.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import orjson
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from django.http import HttpRequest, JsonResponse, StreamingHttpResponse
from redis.exceptions import RedisError

from tournaments.rate_limits import client_address

_T = TypeVar("_T")

TOO_MANY_STREAMS = (
    "Too many live views are open on this server right now; try again in a minute "
    "(the page itself still works)."
)
TOO_MANY_FROM_CLIENT = (
    "Your address has too many live views open on this server; close some and try again "
    "(the page itself still works)."
)
NEEDS_ASGI = (
    "Live streams are served by the ASGI server (make run, compose); this server speaks WSGI, "
    "so the page fetches its updates instead."
)
# What the browser waits before reconnecting a stream that broke (the SSE `retry:` field).
RETRY_MS = 2000
RETRY = f"retry: {RETRY_MS}\n\n".encode()
REDIS_BACKOFF_MAX_S = 10.0


def sse(event: str, data: Any, event_id: str | None = None) -> bytes:
    """One Server-Sent Event: ``data`` as one line of JSON."""
    head = f"id: {event_id}\n" if event_id is not None else ""
    return b"%sevent: %s\ndata: %s\n\n" % (head.encode(), event.encode(), orjson.dumps(data))


def comment(text: str) -> bytes:
    """A comment line: the browser ignores it; it keeps proxies from closing a quiet stream and
    tells a reader what the stream is doing."""
    return f": {text}\n\n".encode()


def error(status: int, code: str, detail: str, **headers: str) -> JsonResponse:
    """The project's one JSON error body (tournaments/api/errors.py), from an async view."""
    response = JsonResponse({"detail": detail, "code": code, "errors": {}}, status=status)
    for name, value in headers.items():
        response[name] = value
    return response


class Slots:
    """How many streams this process has open: at most ``ESCOBA_LIVE_MAX_STREAMS``, of them at
    most ``ESCOBA_LIVE_MAX_STREAMS_PER_CLIENT`` for one client address, so one address cannot
    take every slot."""

    def __init__(self) -> None:
        self.open = 0
        self.by_client: dict[str, int] = {}

    def take(self, request: HttpRequest) -> Slot | JsonResponse:
        """A slot for the request's stream, or the answer that says why there is none."""
        client = client_address(request)
        if self.by_client.get(client, 0) >= settings.ESCOBA_LIVE_MAX_STREAMS_PER_CLIENT:
            return error(429, "live_too_many", TOO_MANY_FROM_CLIENT, **{"Retry-After": "60"})
        if self.open >= settings.ESCOBA_LIVE_MAX_STREAMS:
            return error(503, "live_busy", TOO_MANY_STREAMS, **{"Retry-After": "60"})
        self.open += 1
        self.by_client[client] = self.by_client.get(client, 0) + 1
        return Slot(self, client)


class Slot:
    """One open stream's place; ``release`` gives it back (once, however often it is called)."""

    def __init__(self, slots: Slots, client: str) -> None:
        self._slots: Slots | None = slots
        self._client = client

    def release(self) -> None:
        if self._slots is not None:
            self._slots.open -= 1
            left = self._slots.by_client.pop(self._client) - 1
            if left:
                self._slots.by_client[self._client] = left
            self._slots = None


# Every live stream of this process, games and pages alike.
streams = Slots()


class EventStream(StreamingHttpResponse):
    """An event stream that gives its slot back however it ends (``close`` is called after the
    last byte; the generator's own ``finally`` when the browser goes away first)."""

    def __init__(self, events: AsyncIterator[bytes], slot: Slot) -> None:
        super().__init__(events, content_type="text/event-stream; charset=utf-8")
        self._slot = slot
        self["Cache-Control"] = "no-cache, no-store"
        self["X-Accel-Buffering"] = "no"  # a buffering proxy (nginx) passes each event at once

    def close(self) -> None:
        self._slot.release()
        super().close()


@functools.cache
def _db_threads() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(settings.ESCOBA_LIVE_DB_THREADS, thread_name_prefix="live-db")


def db_read(read: Callable[..., _T]) -> Callable[..., Awaitable[_T]]:
    """``read`` as a coroutine function, run on the streams' few database threads.

    Not in the request's own thread, where ``sync_to_async`` would run it: a stream lasts up to
    ``ESCOBA_LIVE_STREAM_MAX_S``, and a connection opened in its request's thread stays open
    for all of it, one per viewer; a hundred viewers would use up PostgreSQL's connections and
    stop the whole service. These threads keep one connection each for every stream of the
    process, and before each read drop one that broke or outlived ``CONN_MAX_AGE``, as Django
    does when a request starts.
    """

    def run(*args: Any) -> _T:
        close_old_connections()
        return read(*args)

    return sync_to_async(run, thread_sensitive=False, executor=_db_threads())


async def quietly(closing: Awaitable[Any]) -> None:
    """Close a Redis connection that may already be broken: a close must not raise."""
    try:
        await closing
    except (RedisError, OSError):
        pass
