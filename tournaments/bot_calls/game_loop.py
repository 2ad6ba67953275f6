"""The worker process's games: one asyncio event loop in a background thread, one shared caller.

Games are I/O bound on bots, so every worker process keeps one event loop in a thread of its
own, with one ``Caller`` (keep-alive connections per bot, shared by every game in the process).
A match run, in a worker thread, hands its games to the loop (``GameLoop.submit``) and waits on
the futures it gets back, storing each finished game from its own thread.

``stopping`` is set once the process begins to stop: the worker's warm shutdown sets it
(``tournaments.tasks``), and so does the interpreter's exit, which closes the bots' connections.
A game that fails while it is set may have failed because of that (``services.matches``).

Both are per process: the pid checks make a forked pool child start its own loop and its own
flag rather than use its parent's.

The loop is uvloop's (libuv, the event loop of Node.js, written in C), not asyncio's own: a
games loop turns over once or more per move, and asyncio's pure-Python selector loop (its
`_run_once`, the transports' reads and writes, the handles) took about a tenth of the worker's
CPU a move (docs/benchmarks.md, "Bot caller"). Tasks, futures and `CallDeadline` are asyncio's
on both. One difference: after a stall inside a callback, libuv waits for its next timer as if
no time had passed, unless I/O wakes it first (in a games worker, with calls in flight, it
does); a deadline looked at late gets its grace (`deadlines`), so that is never the bot's fault.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import logging
import os
import threading
from collections.abc import Callable, Coroutine
from typing import Any, Generic, TypeVar

import uvloop

from tournaments.bot_calls.caller import Caller

logger = logging.getLogger(__name__)

Feeds = TypeVar("Feeds")
Result = TypeVar("Result")
# How long closing the bots' connections may hold up the interpreter's exit.
CLOSE_TIMEOUT_S = 2.0


class Stopping:
    """Set once this process begins to stop; match runs wait on ``future`` with their games."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._future: concurrent.futures.Future = concurrent.futures.Future()

    @property
    def future(self) -> concurrent.futures.Future:
        with self._lock:
            if self._pid != os.getpid():
                self._pid, self._future = os.getpid(), concurrent.futures.Future()
            return self._future

    def begin(self) -> None:
        future = self.future
        with self._lock:
            if not future.done():
                future.set_result(True)

    def clear(self) -> None:
        with self._lock:
            self._pid, self._future = os.getpid(), concurrent.futures.Future()

    def __bool__(self) -> bool:
        return self.future.done()


stopping = Stopping()


class GameLoop(Generic[Feeds]):
    """The process's event loop thread, its caller and its ``Feeds`` (what tells viewers about
    the games: made by ``make_feeds`` on the loop), all started on first use.

    ``make_caller`` and ``make_feeds`` are the service's: this module knows neither settings
    nor Redis.
    """

    def __init__(
        self,
        *,
        make_caller: Callable[[], Caller],
        make_feeds: Callable[[asyncio.AbstractEventLoop], Feeds],
    ) -> None:
        self._make_caller = make_caller
        self._make_feeds = make_feeds
        self._lock = threading.Lock()
        self._pid: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._caller: Caller | None = None
        self._feeds: Feeds | None = None

    @property
    def feeds(self) -> Feeds | None:
        """This process's feeds, once a game was submitted here (None before)."""
        return self._feeds if self._pid == os.getpid() else None

    def started(self) -> tuple[asyncio.AbstractEventLoop, Caller, Feeds]:
        """The loop, caller and feeds of this process, started now if they were not."""
        with self._lock:
            if self._pid != os.getpid() or self._loop is None:
                loop = uvloop.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="escoba-games", daemon=True)
                thread.start()
                self._loop, self._pid = loop, os.getpid()
                self._caller = self._make_caller()
                self._feeds = self._make_feeds(loop)
                atexit.register(self._close)
            assert self._caller is not None and self._feeds is not None
            return self._loop, self._caller, self._feeds

    def submit(
        self, play: Callable[[Caller, Feeds], Coroutine[Any, Any, Result]]
    ) -> concurrent.futures.Future[Result]:
        """Run ``play(caller, feeds)`` on the loop; its future completes with the result."""
        loop, caller, feeds = self.started()
        return asyncio.run_coroutine_threadsafe(play(caller, feeds), loop)

    def _close(self) -> None:
        """Close the bots' keep-alive connections at exit, so none is left dangling.

        A game still being played would see its calls fail: ``stopping`` makes that ours.
        """
        stopping.begin()
        if self._loop is None or self._caller is None or self._pid != os.getpid():
            return
        closing = asyncio.run_coroutine_threadsafe(self._caller.aclose(), self._loop)
        try:
            closing.result(timeout=CLOSE_TIMEOUT_S)
        except Exception:  # exiting anyway: a bot that will not close must not block it
            logger.debug("closing the bot connections failed", exc_info=True)
        self._loop.call_soon_threadsafe(self._loop.stop)
