"""The live tests' fixtures: the worker's publisher on its own loop, and uvicorn serving the
site on the test database and a private Redis."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.live.feeds import Feeds
from tests.live.servers import AsgiServer
from tournaments.live_feed import LiveFeeds


@pytest.fixture
def feeds(settings, redis_url) -> Iterator[LiveFeeds]:
    settings.REDIS_URL = redis_url
    running = Feeds()
    yield running.feeds
    running.stop()


@pytest.fixture
def asgi(transactional_db, redis_url, tmp_path) -> Iterator[Callable[..., AsgiServer]]:
    """Start uvicorn with these settings (a keep-alive every second besides); stopped after."""
    started: list[AsgiServer] = []

    def start(**settings: str) -> AsgiServer:
        log = tmp_path / f"uvicorn-{len(started)}.log"
        started.append(AsgiServer(redis_url, log, ESCOBA_LIVE_HEARTBEAT_S="1", **settings))
        return started[-1]

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="module")
def shared_server(django_db_setup, redis_url, tmp_path_factory) -> Iterator[AsgiServer]:
    """uvicorn (a keep-alive every second) started once for the tests of a module that stay
    within the usual limits on open streams: starting one takes seconds. It reads the test
    database, so its tests still ask for ``transactional_db`` (their rows committed)."""
    log = tmp_path_factory.mktemp("uvicorn") / "uvicorn.log"
    running = AsgiServer(redis_url, log, ESCOBA_LIVE_HEARTBEAT_S="1")
    yield running
    running.stop()


@pytest.fixture
def server(asgi) -> AsgiServer:
    """uvicorn keeping at most three streams open."""
    return asgi(ESCOBA_LIVE_MAX_STREAMS="3")
