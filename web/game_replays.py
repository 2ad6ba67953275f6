"""One public replay per game per web process, shared by every stream of that game in it.

A game's live entries (tournaments/live_feed.py) reach a process once, however many browsers
follow the game there: the first viewer's stream starts the game's ``GameReplay``, which holds
the process's one subscription to the game's channel, reads its list once, replays the moves
through one ``games.public_view.PublicGame``, and renders each event once (bytes). Each viewer
has a bounded queue of those rendered events; the replay puts every event into every queue
without waiting, so a viewer that cannot keep up fills its own queue and is dropped (its stream
tells it to reconnect, and it resumes with ``Last-Event-ID`` from the shared state) instead of
holding the others back. The last viewer to leave stops the replay.

A viewer that arrives late (or comes back) gets what it needs from the shared state at once: the
plays it missed of this run (it named the run in ``Last-Event-ID``), else the game so far as one
``snapshot`` (rendered once per play count, whoever asks).

The replay also watches the end for its viewers: the game's ``end`` entry, or, when the channel
has been quiet for ``ESCOBA_LIVE_HEARTBEAT_S``, the game's status in the database (one read per
game, not per viewer: the entry may have been lost while Redis was down); each quiet interval it
sends its viewers a keep-alive comment. When Redis goes away it tells them so, subscribes again
with backoff once Redis is back, and reads the list again: nothing already sent is sent twice.

Who may see the game is decided per viewer before it joins (web/game_streams.py asks
``tournaments.observers``); what the replay holds is only what every seat sees.
"""

from __future__ import annotations

import asyncio
import logging

import orjson
import redis.asyncio
from django.conf import settings
from django.urls import reverse
from redis.asyncio.client import PubSub
from redis.exceptions import RedisError

from games.engine import Ruleset
from games.public_view import PublicGame
from tournaments import observers
from tournaments.live_feed import live_game_key, live_redis
from tournaments.models import Game
from tournaments.selectors import pages as page_selectors
from web.sse import REDIS_BACKOFF_MAX_S, comment, db_read, quietly, sse

logger = logging.getLogger(__name__)

# Events waiting for one viewer at most; one more and the viewer is dropped (it reconnects and
# resumes). At 50 plays a second that is two seconds behind.
VIEWER_BACKLOG = 100
# Entries of a run that came before one they follow, held until it comes: two processes may
# append one game's entries, each after its own commit (a person's game: the web process for the
# person's move, a worker for the bots'), so entry n + 1 can overtake entry n. More waiting than
# this and a lost entry is taken for granted: the viewers are told the game stalled.
ENTRIES_AHEAD = 8
# How long Redis may take to confirm a subscription before it counts as unreachable.
REDIS_SUBSCRIBE_S = 5.0
KEEP_ALIVE = comment("keep-alive")
RECONNECTING = comment("the live feed is reconnecting")
STALLED = sse(
    "stalled", {"message": "Some moves were lost on the way; the whole game appears when it ends."}
)
RESET = sse(
    "reset",
    {"message": "The service stopped this game; it will be played again from the start."},
)


def parse_event_id(value: str | None) -> tuple[str | None, int]:
    """``Last-Event-ID`` (``<run>.<n>``) as (run, n); (None, 0) when absent or not ours."""
    if not value:
        return None, 0
    run, _, number = value.strip().partition(".")
    if not run or not number.isdigit() or len(number) > 9:
        return None, 0
    return run, int(number)


def end_event(game_id: int, status: str) -> bytes:
    """The ``end`` event: the game's status and, once stored, its log's address."""
    log_url = reverse("api:game-log", args=[game_id]) if status == Game.Status.FINISHED else None
    return sse("end", {"status": status, "log_url": log_url})


async def _let_viewers_write() -> None:
    """Let every viewer woken by the last entry write it before the next is taken: entries
    read in one burst (a batch from the worker, the list after an outage) would otherwise all be
    queued before any viewer ran, and fill the queues of viewers that keep up well."""
    await asyncio.sleep(0)


async def _subscribed(pubsub: PubSub, key: str) -> None:
    """Subscribe, and wait until Redis says so: the list is read after that, or an entry
    appended after the read and published before the subscription took would be missed (the
    two commands go over two connections, which Redis may serve in either order)."""
    await pubsub.subscribe(key)
    while True:
        message = await pubsub.get_message(timeout=REDIS_SUBSCRIBE_S)
        if message is None:
            raise RedisError("no answer to the subscription")
        if message["type"] == "subscribe":
            return


class Viewer:
    """One browser following a game: the rendered events waiting for it (``None`` last when the
    stream ends), and whether it was dropped for falling behind."""

    def __init__(self, last_event_id: str | None) -> None:
        self.seen_run, self.seen_n = parse_event_id(last_event_id)
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue(VIEWER_BACKLOG)
        self.dropped = False

    def send(self, chunk: bytes | None) -> bool:
        """Queue ``chunk`` without waiting; False (and dropped) when the queue is full."""
        try:
            self.queue.put_nowait(chunk)
        except asyncio.QueueFull:
            self.dropped = True
            return False
        return True


class GameReplay:
    """A game's public replay in this process, and the viewers it fans out to."""

    def __init__(self, replays: GameReplays, game: Game) -> None:
        self._replays, self.game_id = replays, game.pk
        self._ruleset, self._seed = Ruleset.from_dict(game.league.ruleset), game.seed
        self.viewers: set[Viewer] = set()
        self.run: str | None = None
        self.n = 0
        self._public: PublicGame | None = None
        self._plays: list[bytes] = []  # the run's rendered play events: n = index + 1
        self._snapshot: tuple[int, bytes] | None = None
        self._note: bytes | None = None  # why there is no run to show (stalled, reset)
        self._ahead: dict[int, dict] = {}  # entries of this run ahead of the next one
        self._end: bytes | None = None
        self._ready = False  # the list was read: viewers can be caught up
        self._ended = False  # the game's end entry was read
        self._closed = False
        self._redis_down = False
        self._task = asyncio.get_running_loop().create_task(self._follow())

    # -- viewers ----------------------------------------------------------------------------

    def join(self, viewer: Viewer) -> None:
        """Add ``viewer``; once the list was read, queue what it lacks at once."""
        if self._closed:
            if self._end is not None:
                viewer.send(self._end)
            viewer.send(None)
            return
        self.viewers.add(viewer)
        if self._ready:
            self._catch_up(viewer)

    def leave(self, viewer: Viewer) -> None:
        self.viewers.discard(viewer)
        if not self.viewers:
            self._close(None)

    def _catch_up(self, viewer: Viewer) -> None:
        """What a viewer that just arrived needs, from the shared state, as one chunk: the plays
        it missed of this run (it named the run in ``Last-Event-ID``), or else the game so far."""
        parts = [RECONNECTING] if self._redis_down else []
        if self.run is None:
            if self._note is not None:
                parts.append(self._note)
        elif viewer.seen_run == self.run and viewer.seen_n <= self.n:
            parts.extend(self._plays[viewer.seen_n :])
        else:
            parts.append(self._snapshot_event())
        if parts:
            viewer.send(b"".join(parts))

    def _snapshot_event(self) -> bytes:
        if self._snapshot is None or self._snapshot[0] != self.n:
            assert self._public is not None
            data = {"n": self.n, "log": self._public.doc}
            self._snapshot = (self.n, sse("snapshot", data, f"{self.run}.{self.n}"))
        return self._snapshot[1]

    def _broadcast(self, chunk: bytes | None) -> None:
        """``chunk`` (rendered once) to every viewer; one whose queue is full is dropped."""
        dropped = [viewer for viewer in self.viewers if not viewer.send(chunk)]
        if dropped:
            self.viewers.difference_update(dropped)
            logger.info("live game %s: %d viewer(s) fell behind", self.game_id, len(dropped))
            if not self.viewers:
                self._close(None)

    def _event(self, event: bytes) -> None:
        """An event of the game: to the viewers once they were caught up (before that, their
        catch-up will hold it)."""
        if self._ready:
            self._broadcast(event)

    def _close(self, end: bytes | None) -> None:
        """No more of this replay: ``end`` (if any) and the end of the stream to every viewer;
        a viewer that joins in the meantime gets the same."""
        if self._closed:
            return
        self._closed, self._end = True, end
        if end is not None:
            self._broadcast(end)
        self._broadcast(None)
        self.viewers.clear()
        self._replays.forget(self)
        if self._task is not asyncio.current_task():
            self._task.cancel()

    # -- entries ----------------------------------------------------------------------------

    async def _take(self, raw: bytes | str) -> None:
        """Apply one entry (once, in order, from the list or the channel) and send what it
        changed to the viewers; an entry ahead of the next one waits for it (``ENTRIES_AHEAD``)."""
        try:
            entry = orjson.loads(raw)
            run, n, kind = entry["run"], entry["n"], entry["kind"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            logger.warning("live: an entry that is not ours: %r", raw[:200])
            return
        if kind == "start":
            if run != self.run:
                await self._start(run)
            return
        if run != self.run or n <= self.n:
            return  # another run's, or already applied
        if n > self.n + 1:
            self._ahead[n] = entry
            if len(self._ahead) > ENTRIES_AHEAD:
                self._stall()
            return
        self._apply(entry)
        while self.run == run and self.n + 1 in self._ahead:
            self._apply(self._ahead.pop(self.n + 1))

    def _apply(self, entry: dict) -> None:
        """Apply the run's next entry."""
        run, n, kind = entry["run"], entry["n"], entry["kind"]
        self.n = n
        if kind == "end":
            if entry.get("status") == "replay":
                self.run, self._public, self._plays, self._note = None, None, [], RESET
                self._ahead.clear()
                self._event(RESET)
            else:
                self._ended = True
            return
        assert self._public is not None
        try:
            if kind == "forfeit":
                change = self._public.forfeit(entry["seat"])
            else:
                change = self._public.play(entry["move"], entry.get("fault"))
        except Exception:  # a move the engine refuses: the feed and the seed disagree
            logger.exception("live: entry %s of run %s does not replay", n, run)
            self._stall()
            return
        event = sse("play", {"n": n, **change}, f"{run}.{n}")
        self._plays.append(event)
        self._event(event)

    async def _start(self, run: str) -> None:
        """A new run of the game. Its row is read again: a game played again is dealt afresh
        (a new seed), and who may see it is asked again (``observers.game_sight``); when nothing
        of it may be shown, the viewers' streams end (coming back, they are told why)."""
        game = await db_read(page_selectors.game_find)(self.game_id)
        if game is None or observers.game_sight(game).sealed:
            self._close(None)
            return
        self._ruleset, self._seed = Ruleset.from_dict(game.league.ruleset), game.seed
        self._public, self.run, self.n = PublicGame(self._ruleset, self._seed), run, 0
        self._plays, self._snapshot, self._note = [], None, None
        self._ahead.clear()
        if self._ready:
            self._broadcast(self._snapshot_event())

    def _stall(self) -> None:
        if self._note is STALLED and self.run is None:
            return
        self.run, self._public, self._plays, self._note = None, None, [], STALLED
        self._ahead.clear()
        self._event(STALLED)

    # -- the subscription ---------------------------------------------------------------------

    async def _follow(self) -> None:
        client = live_redis()  # its own: a pool shared by every game would run out
        try:
            await self._follow_subscribed(client)
        except Exception:  # a bug of ours: the viewers reconnect to a new replay, not hang
            logger.exception("live game %s: the replay failed", self.game_id)
            self._close(None)
        finally:
            await quietly(client.aclose())

    async def _follow_subscribed(self, client: redis.asyncio.Redis) -> None:
        key = live_game_key(self.game_id)
        game_status = db_read(page_selectors.game_status)
        heartbeat = settings.ESCOBA_LIVE_HEARTBEAT_S
        backoff = 0.5
        while not self._closed:
            pubsub = client.pubsub()
            try:
                await _subscribed(pubsub, key)
                for raw in await client.lrange(key, 0, -1):
                    await self._take(raw)
                    await _let_viewers_write()
                if not self._ready:
                    self._ready = True
                    for viewer in list(self.viewers):
                        self._catch_up(viewer)
                self._redis_down, backoff = False, 0.5
                while not self._ended and not self._closed:
                    message = await pubsub.get_message(
                        ignore_subscribe_messages=True, timeout=heartbeat
                    )
                    if message is not None:
                        await self._take(message["data"])
                        await _let_viewers_write()
                        continue
                    status = await game_status(self.game_id)
                    if status not in (None, Game.Status.PENDING):
                        break
                    self._broadcast(KEEP_ALIVE)
                else:
                    status = await game_status(self.game_id) if self._ended else None
                if not self._closed:
                    # The end entry was read, or the game is over without one (lost in an outage).
                    self._close(end_event(self.game_id, status or Game.Status.ABORTED))
            except (RedisError, OSError) as failure:
                if not self._redis_down:  # once per outage
                    logger.warning(
                        "live game %s: Redis unreachable (%r); retrying", self.game_id, failure
                    )
                self._redis_down = True
                self._broadcast(RECONNECTING)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, REDIS_BACKOFF_MAX_S)
            finally:
                await quietly(pubsub.aclose())


class GameReplays:
    """This process's game replays, by game id."""

    def __init__(self) -> None:
        self._by_game: dict[int, GameReplay] = {}

    def join(self, game: Game, viewer: Viewer) -> GameReplay:
        """The game's replay, started if no viewer of this process follows it yet, with
        ``viewer`` among its viewers."""
        replay = self._by_game.get(game.pk)
        if replay is None:
            replay = self._by_game[game.pk] = GameReplay(self, game)
        replay.join(viewer)
        return replay

    def forget(self, replay: GameReplay) -> None:
        if self._by_game.get(replay.game_id) is replay:
            del self._by_game[replay.game_id]


# This process's replays (one event loop per process: uvicorn's).
replays = GameReplays()
