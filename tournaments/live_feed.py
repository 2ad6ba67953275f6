"""What the worker publishes while games are played, for the browser's live streams
(web/game_streams.py, web/page_streams.py).

Games in play: each game has one Redis list and one pub/sub channel, both named
``live_game_key(game_id)``. Every entry is appended to the list (the game so far, for a viewer
who arrives late or comes back after a lost connection) and published on the channel (for the
viewers following it). An entry is a small JSON object, numbered within its run by ``n``:

- ``{"run": r, "n": 0, "kind": "start"}``: the game is being played (again: a game the service
  had to stop is replayed from its seed, with a new run token, and its list starts afresh);
- ``{"run": r, "n": k, "kind": "play", "seat": s, "move": "7o:3c+5e", "fault": null}``: the
  k-th play; ``fault`` is the fault's kind when the referee played a fallback move;
- ``{"run": r, "n": k, "kind": "forfeit", "seat": s}``: the seat forfeited the game;
- ``{"run": r, "n": k, "kind": "end", "status": "finished" | "aborted" | "replay"}``: the game
  was stored (its log is readable), stopped, or handed back to be played again later.

Only moves are published, never a hand, the deck or the seed: the web side replays them from the
seed it reads from the database (``games.public_view.PublicGame``, once per game per web
process: web/game_replays.py), and sends browsers what everyone at the table sees. A bot cannot
learn more from a live view than from its own move requests.

Pages: ``live_topic_key(topic, key)`` (``league``, and any other page that registers a topic in
web/page_streams.py) carries a bare "changed" message; the page's stream tells its browsers to
fetch the changed part again.

Publishing never blocks a game and never fails one: entries are handed to a flusher on the
worker's event loop, which sends whatever is waiting as one Lua script call (one command and
one reply for the whole batch, however many plays are in it). While Redis is
unreachable entries are dropped (logged once per outage): the stored log stays the truth, and a
viewer sees the game whole when it ends.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

import orjson
import redis.asyncio
from django.conf import settings
from redis.commands.core import AsyncScript
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

KEY_PREFIX = "escoba:live"

# One batch of entries in one command (`EVALSHA`), in the order they were handed over. ARGV[1] is
# the TTL and ARGV[2] the batch, one line per entry: what to do (`d`elete, `a`ppend, `p`ublish),
# the key, a tab and the payload (JSON entries hold no raw newline; keys hold no tab). KEYS lists
# every key the batch touches, as Redis asks of a script. As three commands per play (RPUSH,
# EXPIRE, PUBLISH) in a pipeline, packing the commands and parsing their replies in redis-py cost
# the worker more CPU than the rest of a move but the HTTP call; as three arguments per entry,
# packing them still cost about a tenth of the worker's CPU a move: one argument for the whole
# batch is split by Redis, in C.
_FLUSH_SCRIPT = """
local ttl = ARGV[1]
local batch = ARGV[2]
local appended = {}
local count = 0
local start = 1
while start <= #batch do
  local stop = string.find(batch, "\\n", start, true) or (#batch + 1)
  local tab = string.find(batch, "\\t", start, true)
  local what = string.sub(batch, start, start)
  local key = string.sub(batch, start + 1, tab - 1)
  local payload = string.sub(batch, tab + 1, stop - 1)
  if what == "d" then
    redis.call("DEL", key)
  elseif what == "a" then
    redis.call("RPUSH", key, payload)
    redis.call("PUBLISH", key, payload)
    appended[key] = true
  else
    redis.call("PUBLISH", key, payload)
  end
  count = count + 1
  start = stop + 1
end
for key in pairs(appended) do
  redis.call("EXPIRE", key, ttl)
end
return count
"""


def live_game_key(game_id: int) -> str:
    """The Redis list and channel of one game's live entries."""
    return f"{KEY_PREFIX}:game:{game_id}"


def live_topic_key(topic: str, key: int | str) -> str:
    """The Redis channel of a page that changes (``league``, 12)."""
    return f"{KEY_PREFIX}:{topic}:{key}"


def live_redis() -> redis.asyncio.Redis:
    """A new asyncio Redis client on ``REDIS_URL``, with the project's timeouts. Its connections
    are made on first use and made again after Redis comes back."""
    return redis.asyncio.Redis.from_url(
        settings.REDIS_URL,
        socket_connect_timeout=settings.REDIS_CONNECT_TIMEOUT_S,
        socket_timeout=settings.REDIS_SOCKET_TIMEOUT_S,
        health_check_interval=30,
    )


class LiveFeeds:
    """The live entries of one worker process's games, sent from its games event loop.

    Thread-safe: ``start``, ``end`` and ``notify`` may be called from any thread (the match task's
    thread); ``play`` and ``forfeit`` are called by the runner, on the loop. Entries reach Redis in
    the order they were handed over.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._waiting: list[bytes] = []  # the batch's lines, see _FLUSH_SCRIPT
        self._keys: dict[str, None] = {}  # the keys they touch, in order
        self._wake = asyncio.Event()
        # game id -> [run token, last n, its key, an entry line's start: b"a" + key + b"\t"]
        self._runs: dict[int, list[Any]] = {}
        self._client: redis.asyncio.Redis | None = None
        self._flusher: asyncio.Task | None = None
        self._script: AsyncScript | None = None
        self._failing = False

    # -- what the service calls -----------------------------------------------------------

    def start(self, game_id: int) -> None:
        self._call(self._start, game_id)

    def play(self, game_id: int, *, seat: int, move: str, fault: str | None) -> None:
        self._call(self._play, game_id, seat, move, fault)

    def forfeit(self, game_id: int, *, seat: int) -> None:
        self._call(self._entry, game_id, {"kind": "forfeit", "seat": seat})

    def end(self, game_id: int, status: str) -> None:
        """The game was stored (``finished``), stopped (``aborted``) or handed back (``replay``)."""
        self._call(self._end, game_id, status)

    def notify(self, topic: str, key: int | str) -> None:
        """Tell the pages of ``topic`` ``key`` (a league) that they changed."""
        self._call(self._send, "p", live_topic_key(topic, key), b"changed")

    # -- on the loop ----------------------------------------------------------------------

    def _call(self, function: Any, *args: Any) -> None:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            function(*args)
        elif not self._loop.is_closed():
            self._loop.call_soon_threadsafe(function, *args)

    def _start(self, game_id: int) -> None:
        run = uuid.uuid4().hex[:12]
        key = live_game_key(game_id)
        self._runs[game_id] = [run, 0, key, b"a" + key.encode() + b"\t"]
        payload = orjson.dumps({"run": run, "n": 0, "kind": "start"})
        self._send("d", key, b"")
        self._send("a", key, payload)

    def _play(self, game_id: int, seat: int, move: str, fault: str | None) -> None:
        """A play's entry: ``_entry``'s, made without its dict merge (a move's hot path)."""
        state = self._runs.get(game_id)
        if state is None:
            return
        n = state[1] = state[1] + 1
        entry = {"run": state[0], "n": n, "kind": "play", "seat": seat, "move": move,
                 "fault": fault}  # fmt: skip
        self._queue(state[2], state[3] + orjson.dumps(entry))

    def _entry(self, game_id: int, entry: dict[str, Any]) -> None:
        state = self._runs.get(game_id)
        if state is None:
            return
        n = state[1] = state[1] + 1
        self._send("a", live_game_key(game_id), orjson.dumps({"run": state[0], "n": n, **entry}))

    def _end(self, game_id: int, status: str) -> None:
        self._entry(game_id, {"kind": "end", "status": status})
        self._runs.pop(game_id, None)

    def _send(self, what: str, key: str, payload: bytes) -> None:
        self._queue(key, b"%s%s\t%s" % (what.encode(), key.encode(), payload))

    def _queue(self, key: str, line: bytes) -> None:
        """Keep one line of the next batch (see ``_FLUSH_SCRIPT``) and wake the flusher."""
        self._keys[key] = None
        self._waiting.append(line)
        self._wake.set()
        if self._flusher is None or self._flusher.done():
            self._flusher = self._loop.create_task(self._flush_forever())

    async def _flush_forever(self) -> None:
        ttl = settings.ESCOBA_LIVE_TTL_S
        while True:
            await self._wake.wait()
            self._wake.clear()
            batch, self._waiting = self._waiting, []
            keys, self._keys = list(self._keys), {}
            if self._client is None:
                self._client = live_redis()
                self._script = self._client.register_script(_FLUSH_SCRIPT)
            try:
                await self._script(keys=keys, args=[ttl, b"\n".join(batch)])
            except (RedisError, OSError) as error:
                if not self._failing:
                    logger.warning("live entries dropped: Redis is unreachable (%s)", error)
                self._failing = True
            else:
                if self._failing:
                    logger.warning("live entries are published again")
                self._failing = False
