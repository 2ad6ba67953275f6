"""Loopback servers shared by the bot tests: one thread per module hosts every server."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
import uvloop

from tests.fakebots.hostile import HostileBots
from tests.fakebots.loops import ServerThread


@pytest.fixture(scope="module")
def servers() -> Iterator[ServerThread]:
    thread = ServerThread()
    yield thread
    thread.stop()


@pytest.fixture(scope="module")
def hostile(servers: ServerThread) -> tuple[str, HostileBots]:
    """The base URL of the misbehaving server (add `<behaviour>/`) and its handler."""
    bots = HostileBots()
    port = servers.start_raw(bots)
    return f"http://127.0.0.1:{port}", bots


@pytest.fixture(params=["asyncio", "uvloop"])
def each_event_loop(request: pytest.FixtureRequest) -> Iterator[str]:
    """The test once on asyncio's own loop (the SDK's, the web's) and once on uvloop's (the
    games worker's, tournaments/bot_calls/game_loop.py): `asyncio.run` makes the one named."""
    before = asyncio.get_event_loop_policy()
    policy = (
        uvloop.EventLoopPolicy() if request.param == "uvloop" else asyncio.DefaultEventLoopPolicy()
    )
    asyncio.set_event_loop_policy(policy)
    yield request.param
    asyncio.set_event_loop_policy(before)
