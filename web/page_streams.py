"""Live pages over Server-Sent Events: ``/live/<topic>/<id>/`` (``league``; more topics with
``live_topic_register``), an async view for the ASGI server (config/asgi.py).

A page part that changes: ``changed`` carries the part's version (``id:`` too), at once and
after every change; the browser compares it with the ``data-live-version`` it rendered and
fetches the part again when it differs (web/static/web/js/patch.js, ``followLive``).
Notifications that come in a burst are sent as one. When the part is over (``version`` says so)
the stream sends ``end`` and the browser closes its ``EventSource``.

Each stream subscribes to its page's channel (``live_topic_key``) on a Redis connection of its
own, closed when the browser goes away or the stream ends; a stream lasts
``ESCOBA_LIVE_STREAM_MAX_S`` at most (the browser reconnects), and a comment every
``ESCOBA_LIVE_HEARTBEAT_S`` keeps proxies from closing a quiet one. When Redis goes away the
stream stays open, says so in a comment, and subscribes again with backoff.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable

from django.conf import settings
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET
from redis.exceptions import RedisError

from tournaments.live_feed import live_redis, live_topic_key
from tournaments.selectors import pages as page_selectors
from web.sse import (
    NEEDS_ASGI,
    REDIS_BACKOFF_MAX_S,
    RETRY,
    EventStream,
    Slot,
    comment,
    db_read,
    error,
    quietly,
    sse,
    streams,
)

logger = logging.getLogger(__name__)

NO_SUCH_PAGE = "There is nothing live with this name and id."
# Notifications of a page that arrive within this many seconds are answered with one version.
COALESCE_S = 0.5

# topic -> the selector of its version: (version, over) or None when the id names nothing.
LIVE_TOPICS: dict[str, Callable[[int], tuple[str, bool] | None]] = {
    "league": page_selectors.league_live_version,
}


def live_topic_register(topic: str, version: Callable[[int], tuple[str, bool] | None]) -> None:
    """Make ``/live/<topic>/<id>/`` a page stream: ``version(id)`` says what the page shows now
    (the page renders the same string in ``data-live-version``); the worker calls
    ``LiveFeeds.notify(topic, id)`` (or anyone publishes on ``live_topic_key``) when it changes."""
    LIVE_TOPICS[topic] = version


async def _topic_events(
    topic: str, key: int, first: tuple[str, bool], slot: Slot
) -> AsyncIterator[bytes]:
    version_of = db_read(LIVE_TOPICS[topic])
    client = live_redis()
    deadline = time.monotonic() + settings.ESCOBA_LIVE_STREAM_MAX_S
    heartbeat = settings.ESCOBA_LIVE_HEARTBEAT_S
    backoff = 0.5
    version, over = first
    try:
        yield RETRY
        yield sse("changed", {"version": version}, version)
        while not over and time.monotonic() < deadline:
            pubsub = client.pubsub()
            try:
                await pubsub.subscribe(live_topic_key(topic, key))
                backoff = 0.5
                while not over and time.monotonic() < deadline:
                    message = await pubsub.get_message(
                        ignore_subscribe_messages=True, timeout=heartbeat
                    )
                    if message is not None:
                        await asyncio.sleep(COALESCE_S)
                        while await pubsub.get_message(ignore_subscribe_messages=True, timeout=0):
                            pass
                    now = await version_of(key)
                    if now is None:
                        over = True
                        break
                    if now[0] != version:
                        version, over = now
                        yield sse("changed", {"version": version}, version)
                    elif message is None:
                        yield comment("keep-alive")
                    over = over or now[1]
            except (RedisError, OSError) as failure:
                logger.info("live %s %s: Redis unreachable (%s); retrying", topic, key, failure)
                yield comment("the live feed is reconnecting")
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, REDIS_BACKOFF_MAX_S)
            finally:
                await quietly(pubsub.aclose())
        if over:
            yield sse("end", {"version": version})
        else:
            yield comment("this stream ends here; reconnect to go on")
    finally:
        await quietly(client.aclose())
        slot.release()


@require_GET
async def topic_events(request: HttpRequest, topic: str, key: int) -> HttpResponse:
    """``GET /live/<topic>/<id>/``: a page part's versions (see the module docstring)."""
    if not isinstance(request, ASGIRequest):
        return error(503, "live_needs_asgi", NEEDS_ASGI)
    if topic not in LIVE_TOPICS:
        return error(404, "not_found", NO_SUCH_PAGE)
    first = await db_read(LIVE_TOPICS[topic])(key)
    if first is None:
        return error(404, "not_found", NO_SUCH_PAGE)
    slot = streams.take(request)
    if isinstance(slot, JsonResponse):
        return slot
    return EventStream(_topic_events(topic, key, first, slot), slot)
