"""An event loop in a thread that serves raw TCP handlers and aiohttp apps on loopback: the
wire-level fake bots (tests/fakebots/hostile.py, tests/fakebots/simple.py) run in it.

The servers live in another thread so that a server which stalls on purpose cannot slow down the
client under test, and so timings measured by the client are honest.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from typing import Any

from aiohttp import web

RawHandler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class ServerThread:
    """An event loop in a daemon thread that hosts servers until `stop()`."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        self._cleanups: list[Callable[[], Awaitable[None]]] = []

    def run(self, coro: Awaitable[Any]) -> Any:
        future: Future = asyncio.run_coroutine_threadsafe(coro, self.loop)  # type: ignore[arg-type]
        return future.result(timeout=10)

    def start_raw(self, handler: RawHandler) -> int:
        """Serve raw TCP on 127.0.0.1 with `handler(reader, writer)`; returns the port."""

        async def start() -> int:
            server = await asyncio.start_server(handler, "127.0.0.1", 0)

            async def close() -> None:
                server.close()
                await asyncio.sleep(0)

            self._cleanups.append(close)
            return server.sockets[0].getsockname()[1]

        return self.run(start())

    def start_app(self, app: web.Application) -> int:
        """Serve an aiohttp application on 127.0.0.1; returns the port."""

        async def start() -> int:
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            self._cleanups.append(runner.cleanup)
            return site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

        return self.run(start())

    def stop(self) -> None:
        async def cleanup() -> None:
            for close in reversed(self._cleanups):
                await close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        self.run(cleanup())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)
        self.loop.close()
