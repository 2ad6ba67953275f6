"""Example bots on loopback for a person to play, shorter games where a test needs a whole game
but not a long one, and a test database that does not wait for the disk."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from contextlib import ExitStack

import pytest

from bots_sdk.examples import greedy
from bots_sdk.examples import random as random_bot
from bots_sdk.server import ServerHandle, serve_in_thread
from tests.play.helpers import short_games as short_games_of

_names = itertools.count(1)


@pytest.fixture(scope="session")
def play_servers() -> Iterator[dict[str, ServerHandle]]:
    servers = {
        "greedy": serve_in_thread(greedy.choose, name="greedy"),
        "random": serve_in_thread(random_bot.make_random(3), name="random"),
    }
    yield servers
    for server in servers.values():
        server.stop()


@pytest.fixture
def make_bot(db, play_servers) -> Callable[..., object]:
    """``make_bot("greedy", owner=user)``: a registered bot at that example server's URL."""
    from django.contrib.auth import get_user_model

    from tournaments.models import Bot

    def make(example: str = "greedy", *, owner=None, **fields) -> Bot:
        if owner is None:
            owner = get_user_model().objects.create_user(username=f"author{next(_names)}")
        return Bot.objects.create(
            owner=owner,
            name=f"{example}-{next(_names)}",
            url=play_servers[example].url,
            secret="whsec_" + "A" * 32,
            **fields,
        )

    return make


@pytest.fixture
def short_games() -> Iterator[Callable[..., None]]:
    """``short_games(target=1)``: the person's games created after the call play under these
    ruleset options (see ``tests.play.helpers.short_games``)."""
    with ExitStack() as stack:
        yield lambda **options: stack.enter_context(short_games_of(**options))
