"""Loopback servers shared by the bot tests: one thread per module hosts every server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

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
