"""A game watched while it is played: ``/live/games/<id>/``, Server-Sent Events from an async view
for the ASGI server (config/asgi.py).

The worker publishes each play (tournaments/live_feed.py); this process replays the game once for
all its viewers (web/game_replays.py, ``games.public_view.PublicGame``), so a stream sends only
what everyone at the table sees (the table, the plays, each round's score; never a hand, the deck
or the seed). Events:

- ``snapshot``: the game so far as an escoba-log/1 document whose deals are hidden (``null`` per
  card);
- ``play``: one play and what it changed;
- ``reset``: the service stopped the game; it will be played again from the start;
- ``stalled``: moves were lost while Redis was down; the stored log follows at the end;
- ``end``: ``status`` and the stored log's address; the browser then closes its ``EventSource``.

Every ``snapshot`` and ``play`` has ``id: <run>.<n>``; a browser that reconnects sends it back as
``Last-Event-ID`` and gets only what it missed (or a fresh snapshot when the game was restarted
since). Who may watch is asked per viewer, as it connects (``observers.game_sight``): a game whose
deal another game still in play shares (a duplicate set's) is not streamed at all (409
``set_in_play``); the stream names no bot, so a rated game in play shows no more than any other.

Bounds: a stream lasts ``ESCOBA_LIVE_STREAM_MAX_S`` at most (the browser reconnects and
resumes); a viewer that falls ``VIEWER_BACKLOG`` events behind is told to reconnect, and resumes
the same way; the shared replay sends a keep-alive comment every quiet
``ESCOBA_LIVE_HEARTBEAT_S``, and says so in a comment while Redis is unreachable.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from django.conf import settings
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET

from tournaments import observers
from tournaments.models import Game
from tournaments.selectors import pages as page_selectors
from web.game_replays import Viewer, end_event, replays
from web.sse import NEEDS_ASGI, RETRY, EventStream, Slot, comment, db_read, error, streams

NO_SUCH_GAME = "There is no game with this id."
SET_IN_PLAY = (
    "Another game dealt the same cards is being played: nothing of this game is shown until "
    "it is over."
)
FELL_BEHIND = comment("this stream fell behind; reconnect to go on")
TIME_IS_UP = comment("this stream ends here; reconnect to go on")


async def _viewer_events(game: Game, viewer: Viewer, slot: Slot) -> AsyncIterator[bytes]:
    """One browser's stream: what the game's shared replay queues for it, a queue's worth at a
    time (one write for every event that waited)."""
    replay = replays.join(game, viewer)
    queue = viewer.queue
    loop = asyncio.get_running_loop()
    time_is_up = loop.call_later(settings.ESCOBA_LIVE_STREAM_MAX_S, viewer.send, TIME_IS_UP)
    try:
        yield RETRY
        while True:
            chunks = [await queue.get()]
            while chunks[-1] is not None and chunks[-1] is not TIME_IS_UP and not queue.empty():
                chunks.append(queue.get_nowait())
            if viewer.dropped:
                yield FELL_BEHIND
                return
            over = chunks[-1] is None or chunks[-1] is TIME_IS_UP
            if chunks[-1] is None:
                chunks.pop()
            yield b"".join(chunks)
            if over:
                return
    finally:
        time_is_up.cancel()
        replay.leave(viewer)
        slot.release()


@require_GET
async def game_events(request: HttpRequest, game_id: int) -> HttpResponse:
    """``GET /live/games/<id>/``: the game's event stream (see the module docstring)."""
    if not isinstance(request, ASGIRequest):
        return error(503, "live_needs_asgi", NEEDS_ASGI)
    game = await db_read(page_selectors.game_find)(game_id)
    if game is None:
        return error(404, "not_found", NO_SUCH_GAME)
    if observers.game_sight(game).sealed:
        return error(409, "set_in_play", SET_IN_PLAY)
    slot = streams.take(request)
    if isinstance(slot, JsonResponse):
        return slot
    if game.status != Game.Status.PENDING:

        async def ended() -> AsyncIterator[bytes]:
            try:
                yield end_event(game.pk, game.status)
            finally:
                slot.release()

        return EventStream(ended(), slot)
    viewer = Viewer(request.headers.get("Last-Event-ID"))
    return EventStream(_viewer_events(game, viewer, slot), slot)
