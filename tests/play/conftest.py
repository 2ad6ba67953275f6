"""Example bots on loopback for a person to play, and helpers that play legal moves."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import pytest

from bots_sdk.examples import greedy
from bots_sdk.examples import random as random_bot
from bots_sdk.server import ServerHandle, serve_in_thread

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
