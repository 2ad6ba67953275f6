"""Live games and pages over Server-Sent Events: async views for an ASGI server (config/asgi.py).

Two kinds of stream, both ``text/event-stream``, both ending with an ``end`` event after which the
browser closes its ``EventSource``:

``/live/games/<id>/``
    A game move by move. The worker appends each play to the game's Redis list and publishes it
    (tournaments/live.py); this view subscribes, reads the list, and replays the moves through
    the engine from the game's seed, so it sends only what everyone at the table sees (the
    table, the plays, each round's score; never a hand, the deck or the seed). Events:
    ``snapshot`` (the game so far as an escoba-log/1 document whose deals are hidden: ``null``
    per card), ``play`` (one play and what it changed), ``reset`` (the service stopped the game;
    it will be played again from the start), ``stalled`` (moves were lost while Redis was down;
    the stored log follows at the end), ``end`` (``status`` and the stored log's address).
    Every ``snapshot`` and ``play`` has ``id: <run>.<n>``; a browser that reconnects sends it back
    as ``Last-Event-ID`` and gets only what it missed (or a fresh snapshot when the game was
    restarted since). A game whose deal another game still in play shares (a duplicate set's:
    ``observers.game_sight``) is not streamed at all: 409 ``set_in_play``.

``/live/<topic>/<id>/`` (``league``; more topics with ``live_topic_register``)
    A page part that changes: ``changed`` carries the part's version (``id:`` too), at once and
    after every change; the browser compares it with the ``data-live-version`` it rendered and
    fetches the part again when it differs (web/static/web/js/patch.js, ``followLive``).
    Notifications that come in a burst are sent as one.

Under WSGI (gunicorn's sync workers, the test live server) an endless stream would hold a
worker for good, so both views answer 503 there and the pages fetch their updates instead.

Bounds: each stream holds its own Redis connections (a subscription and one for reads), closed
when the browser goes away or the stream ends; the streams of a process read the database from
``ESCOBA_LIVE_DB_THREADS`` shared threads, so they hold that many database connections in all,
not one each; one process keeps at most
``ESCOBA_LIVE_MAX_STREAMS`` streams open and answers the next with a 503 in the project's JSON
error body, one client address at most ``ESCOBA_LIVE_MAX_STREAMS_PER_CLIENT`` of them (a 429);
a stream lasts ``ESCOBA_LIVE_STREAM_MAX_S`` at most (the browser reconnects and resumes). A
comment every ``ESCOBA_LIVE_HEARTBEAT_S`` keeps proxies from closing a quiet stream.
When Redis goes away the stream stays open, says so in a comment, and subscribes again with
backoff once Redis is back, then reads the list again: nothing already sent is sent twice.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import orjson
from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.handlers.asgi import ASGIRequest
from django.db import close_old_connections
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.urls import reverse
from django.views.decorators.http import require_GET
from redis.exceptions import RedisError

from games.engine import Game as EngineGame
from games.engine import Move, Ruleset
from tournaments import observers
from tournaments.live import live_game_key, live_redis, live_topic_key
from tournaments.models import Game
from tournaments.rate_limits import client_address
from tournaments.selectors import pages as page_selectors

logger = logging.getLogger(__name__)
_T = TypeVar("_T")

TOO_MANY_STREAMS = (
    "Too many live views are open on this server right now; try again in a minute "
    "(the page itself still works)."
)
TOO_MANY_FROM_CLIENT = (
    "Your address has too many live views open on this server; close some and try again "
    "(the page itself still works)."
)
NO_SUCH_GAME = "There is no game with this id."
SET_IN_PLAY = (
    "Another game dealt the same cards is being played: nothing of this game is shown until "
    "it is over."
)
NO_SUCH_PAGE = "There is nothing live with this name and id."
NEEDS_ASGI = (
    "Live streams are served by the ASGI server (make run, compose); this server speaks WSGI, "
    "so the page fetches its updates instead."
)
# What the browser waits before reconnecting a stream that broke (the SSE `retry:` field).
RETRY_MS = 2000
# Notifications of a page that arrive within this many seconds are answered with one version.
COALESCE_S = 0.5
REDIS_BACKOFF_MAX_S = 10.0


def _error(status: int, code: str, detail: str, **headers: str) -> JsonResponse:
    """The project's one JSON error body (tournaments/api/errors.py), from an async view."""
    response = JsonResponse({"detail": detail, "code": code, "errors": {}}, status=status)
    for name, value in headers.items():
        response[name] = value
    return response


class _Slots:
    """How many streams this process has open: at most ``ESCOBA_LIVE_MAX_STREAMS``, of them at
    most ``ESCOBA_LIVE_MAX_STREAMS_PER_CLIENT`` for one client address, so one address cannot
    take every slot."""

    def __init__(self) -> None:
        self.open = 0
        self.by_client: dict[str, int] = {}

    def take(self, request: HttpRequest) -> _Slot | JsonResponse:
        """A slot for the request's stream, or the answer that says why there is none."""
        client = client_address(request)
        if self.by_client.get(client, 0) >= settings.ESCOBA_LIVE_MAX_STREAMS_PER_CLIENT:
            return _error(429, "live_too_many", TOO_MANY_FROM_CLIENT, **{"Retry-After": "60"})
        if self.open >= settings.ESCOBA_LIVE_MAX_STREAMS:
            return _error(503, "live_busy", TOO_MANY_STREAMS, **{"Retry-After": "60"})
        self.open += 1
        self.by_client[client] = self.by_client.get(client, 0) + 1
        return _Slot(self, client)


class _Slot:
    def __init__(self, slots: _Slots, client: str) -> None:
        self._slots: _Slots | None = slots
        self._client = client

    def release(self) -> None:
        if self._slots is not None:
            self._slots.open -= 1
            left = self._slots.by_client.pop(self._client) - 1
            if left:
                self._slots.by_client[self._client] = left
            self._slots = None


streams = _Slots()


@functools.cache
def _db_threads() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(settings.ESCOBA_LIVE_DB_THREADS, thread_name_prefix="live-db")


def _db_read(read: Callable[..., _T]) -> Callable[..., Awaitable[_T]]:
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


class _EventStream(StreamingHttpResponse):
    """An event stream that gives its slot back however it ends (``close`` is called after the
    last byte; the generator's own ``finally`` when the browser goes away first)."""

    def __init__(self, events: AsyncIterator[str], slot: _Slot) -> None:
        super().__init__(events, content_type="text/event-stream; charset=utf-8")
        self._slot = slot
        self["Cache-Control"] = "no-cache, no-store"
        self["X-Accel-Buffering"] = "no"  # a buffering proxy (nginx) passes each event at once

    def close(self) -> None:
        self._slot.release()
        super().close()


def sse(event: str, data: Any, event_id: str | None = None) -> str:
    """One Server-Sent Event: ``data`` as one line of JSON."""
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {event}\ndata: {orjson.dumps(data).decode()}\n\n"


def _comment(text: str) -> str:
    return f": {text}\n\n"


class PublicGame:
    """A game replayed from its seed and the published moves, showing only what is public.

    ``doc`` is the game so far as an escoba-log/1 document without the seed, whose ``deals`` hold
    ``null`` for each card dealt (the viewer shows the backs), with ``meta[r][p]`` holding each
    play's fault. Each fact comes from the engine: plays and escobas from the seats' public
    history, a round's score from the engine's log when the round ends.
    """

    def __init__(self, ruleset: Ruleset, seed: int) -> None:
        self.game = EngineGame.new(ruleset, seed)
        log = self.game.log()
        self.sizes = self._hand_sizes()
        self.doc: dict[str, Any] = {
            "format": log["format"],
            "ruleset": log["ruleset"],
            "seats": log["seats"],
            "rounds": [self._header(log["rounds"][0])],
            "result": None,
            "meta": [[]],
            "live": True,
        }

    def _hand_sizes(self) -> list[int]:
        return [seat.hand_size for seat in self.game.view(0).seats]

    def _header(self, round_log: dict[str, Any]) -> dict[str, Any]:
        """A new round as everyone sees it: dealer, table, lucky deal, and one hidden deal."""
        return {
            "dealer": round_log["dealer"],
            "table": round_log["table"],
            "lucky_deal": round_log["lucky_deal"],
            "deals": [[[None] * size for size in self.sizes]],
            "plays": [],
            "leftover": None,
            "score": None,
            "totals": None,
        }

    def play(self, move: str, fault: str | None) -> dict[str, Any]:
        """Play ``move``; the change as the ``play`` event carries it."""
        rounds = self.doc["rounds"]
        index = len(rounds) - 1
        number = self.game.round
        self.game.apply(Move.from_str(move))
        change: dict[str, Any] = {"round": index, "meta": {"fault": fault}}
        if not self.game.is_over and self.game.round == number:
            view = self.game.view(0)
            last = view.history[-1]
            play = {
                "seat": last.seat,
                "card": str(last.card),
                "capture": [str(card) for card in last.capture],
                "escoba": last.escoba,
            }
            sizes = [seat.hand_size for seat in view.seats]
            if sum(sizes) > sum(self.sizes):  # the hands were empty: a new deal
                deal = [[None] * size for size in sizes]
                rounds[index]["deals"].append(deal)
                change["deal"] = deal
            self.sizes = sizes
        else:
            log = self.game.log()
            ended = log["rounds"][index]
            play = ended["plays"][-1]
            change["round_end"] = {key: ended[key] for key in ("leftover", "score", "totals")}
            rounds[index].update(change["round_end"])
            if len(log["rounds"]) > index + 1:
                self.sizes = self._hand_sizes()
                header = self._header(log["rounds"][index + 1])
                rounds.append(header)
                self.doc["meta"].append([])
                change["next_round"] = header
            self.doc["result"] = change["result"] = log["result"]
        rounds[index]["plays"].append(play)
        self.doc["meta"][index].append(change["meta"])
        change["play"] = play
        return change

    def forfeit(self, seat: int) -> dict[str, Any]:
        self.game.forfeit(seat, reason="faults")
        self.doc["result"] = self.game.log()["result"]
        return {"round": len(self.doc["rounds"]) - 1, "forfeit": seat, "result": self.doc["result"]}


class GameFollower:
    """Turns a game's live entries into the events one browser still needs.

    ``seen`` is what the browser already has (``Last-Event-ID``: run and number); entries are
    applied once each, in order, whether they come from the list or the channel.
    """

    def __init__(self, ruleset: Ruleset, seed: int, last_event_id: str | None) -> None:
        self.ruleset, self.seed = ruleset, seed
        self.public: PublicGame | None = None
        self.run: str | None = None
        self.n = 0
        self.seen_run, self.seen_n = _parse_event_id(last_event_id)
        self.stalled = False
        self.ended = False
        self._backlog: list[tuple[int, str]] = []

    def take(self, raw: bytes | str, *, catching_up: bool) -> list[str]:
        """Apply one entry; the events to send now (none while ``catching_up``: ``caught_up``)."""
        try:
            entry = orjson.loads(raw)
            run, n, kind = entry["run"], entry["n"], entry["kind"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            logger.warning("live: an entry that is not ours: %r", raw[:200])
            return []
        if kind == "start":
            if run == self.run:
                return []
            self.public, self.run, self.n = PublicGame(self.ruleset, self.seed), run, 0
            self.stalled, self._backlog = False, []
            return [] if catching_up else [self._snapshot()]
        if run != self.run or n <= self.n:
            return []  # another run's, or already applied
        if n > self.n + 1:
            return self._stall(catching_up)
        self.n = n
        if kind == "end":
            return self._end(entry.get("status"), catching_up)
        assert self.public is not None
        try:
            if kind == "forfeit":
                change = self.public.forfeit(entry["seat"])
            else:
                change = self.public.play(entry["move"], entry.get("fault"))
        except Exception:  # a move the engine refuses: the feed and the seed disagree
            logger.exception("live: entry %s of run %s does not replay", n, run)
            return self._stall(catching_up)
        event = sse("play", {"n": n, **change}, f"{run}.{n}")
        if catching_up:
            self._backlog.append((n, event))
            return []
        if self.seen_run == run and n <= self.seen_n:
            return []
        self.seen_run, self.seen_n = run, n
        return [event]

    def caught_up(self) -> list[str]:
        """After the list was read: the plays the browser missed (it named this run in
        ``Last-Event-ID``), or else the whole game so far in one snapshot."""
        backlog, self._backlog = self._backlog, []
        if self.run is None or self.public is None or self.stalled:
            return []
        if self.seen_run == self.run and self.seen_n <= self.n:
            missed = [event for n, event in backlog if n > self.seen_n]
            self.seen_n = self.n
            return missed
        return [self._snapshot()]

    def _snapshot(self) -> str:
        assert self.public is not None
        self.seen_run, self.seen_n = self.run, self.n
        return sse("snapshot", {"n": self.n, "log": self.public.doc}, f"{self.run}.{self.n}")

    def _stall(self, catching_up: bool) -> list[str]:
        was = self.stalled
        self.stalled, self.run = True, None
        if was:
            return []
        message = "Some moves were lost on the way; the whole game appears when it ends."
        return [sse("stalled", {"message": message})]

    def _end(self, status: Any, catching_up: bool) -> list[str]:
        if status == "replay":
            self.run, self.public = None, None
            message = "The service stopped this game; it will be played again from the start."
            return [sse("reset", {"message": message})]
        self.ended = True
        return []


def _parse_event_id(value: str | None) -> tuple[str | None, int]:
    if not value:
        return None, 0
    run, _, number = value.strip().partition(".")
    if not run or not number.isdigit() or len(number) > 9:
        return None, 0
    return run, int(number)


def _end_event(game_id: int, status: str) -> str:
    log_url = reverse("api:game-log", args=[game_id]) if status == Game.Status.FINISHED else None
    return sse("end", {"status": status, "log_url": log_url})


async def _game_events(game_id: int, follower: GameFollower, slot: _Slot) -> AsyncIterator[str]:
    key = live_game_key(game_id)
    client = live_redis()
    deadline = time.monotonic() + settings.ESCOBA_LIVE_STREAM_MAX_S
    heartbeat = settings.ESCOBA_LIVE_HEARTBEAT_S
    backoff = 0.5
    try:
        yield f"retry: {RETRY_MS}\n\n"
        while time.monotonic() < deadline:
            pubsub = client.pubsub()
            try:
                await pubsub.subscribe(key)
                for raw in await client.lrange(key, 0, -1):
                    for event in follower.take(raw, catching_up=True):
                        yield event
                for event in follower.caught_up():
                    yield event
                backoff = 0.5
                while not follower.ended and time.monotonic() < deadline:
                    message = await pubsub.get_message(
                        ignore_subscribe_messages=True, timeout=heartbeat
                    )
                    if message is None:
                        status = await _db_read(page_selectors.game_status)(game_id)
                        if status not in (None, Game.Status.PENDING):
                            follower.ended = True
                            break
                        yield _comment("keep-alive")
                        continue
                    for event in follower.take(message["data"], catching_up=False):
                        yield event
                if follower.ended:
                    status = await _db_read(page_selectors.game_status)(game_id)
                    yield _end_event(game_id, status or Game.Status.ABORTED)
                    return
            except (RedisError, OSError) as error:
                logger.info("live game %s: Redis unreachable (%s); retrying", game_id, error)
                yield _comment("the live feed is reconnecting")
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, REDIS_BACKOFF_MAX_S)
            finally:
                await _quietly(pubsub.aclose())
        yield _comment("this stream ends here; reconnect to go on")
    finally:
        await _quietly(client.aclose())
        slot.release()


async def _quietly(closing: Any) -> None:
    """Close a Redis connection that may already be broken: a close must not raise."""
    try:
        await closing
    except (RedisError, OSError):
        pass


@require_GET
async def game_events(request: HttpRequest, game_id: int) -> HttpResponse:
    """``GET /live/games/<id>/``: the game's event stream (see the module docstring)."""
    if not isinstance(request, ASGIRequest):
        return _error(503, "live_needs_asgi", NEEDS_ASGI)
    game = await _db_read(page_selectors.game_find)(game_id)
    if game is None:
        return _error(404, "not_found", NO_SUCH_GAME)
    if observers.game_sight(game).sealed:
        return _error(409, "set_in_play", SET_IN_PLAY)
    slot = streams.take(request)
    if isinstance(slot, JsonResponse):
        return slot
    if game.status != Game.Status.PENDING:

        async def ended() -> AsyncIterator[str]:
            try:
                yield _end_event(game.pk, game.status)
            finally:
                slot.release()

        return _EventStream(ended(), slot)
    follower = GameFollower(
        Ruleset.from_dict(game.league.ruleset), game.seed, request.headers.get("Last-Event-ID")
    )
    return _EventStream(_game_events(game.pk, follower, slot), slot)


# -- pages -----------------------------------------------------------------------------------

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
    topic: str, key: int, first: tuple[str, bool], slot: _Slot
) -> AsyncIterator[str]:
    version_of = _db_read(LIVE_TOPICS[topic])
    client = live_redis()
    deadline = time.monotonic() + settings.ESCOBA_LIVE_STREAM_MAX_S
    heartbeat = settings.ESCOBA_LIVE_HEARTBEAT_S
    backoff = 0.5
    version, over = first
    try:
        yield f"retry: {RETRY_MS}\n\n"
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
                        yield _comment("keep-alive")
                    over = over or now[1]
            except (RedisError, OSError) as error:
                logger.info("live %s %s: Redis unreachable (%s); retrying", topic, key, error)
                yield _comment("the live feed is reconnecting")
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, REDIS_BACKOFF_MAX_S)
            finally:
                await _quietly(pubsub.aclose())
        if over:
            yield sse("end", {"version": version})
        else:
            yield _comment("this stream ends here; reconnect to go on")
    finally:
        await _quietly(client.aclose())
        slot.release()


@require_GET
async def topic_events(request: HttpRequest, topic: str, key: int) -> HttpResponse:
    """``GET /live/<topic>/<id>/``: a page part's versions (see the module docstring)."""
    if not isinstance(request, ASGIRequest):
        return _error(503, "live_needs_asgi", NEEDS_ASGI)
    if topic not in LIVE_TOPICS:
        return _error(404, "not_found", NO_SUCH_PAGE)
    first = await _db_read(LIVE_TOPICS[topic])(key)
    if first is None:
        return _error(404, "not_found", NO_SUCH_PAGE)
    slot = streams.take(request)
    if isinstance(slot, JsonResponse):
        return slot
    return _EventStream(_topic_events(topic, key, first, slot), slot)
