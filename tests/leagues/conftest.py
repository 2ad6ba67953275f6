"""Example bots served on loopback, and registered bots that point at them."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import pytest

from bots_sdk.examples import expert, greedy
from bots_sdk.examples import random as random_bot
from bots_sdk.server import ServerHandle, serve_in_thread

EXAMPLES = {
    "greedy": greedy.choose,
    "random": random_bot.choose,
    "expert": expert.choose,
    "random7": random_bot.make_random(7),
}


@pytest.fixture(scope="session")
def example_servers() -> Iterator[dict[str, ServerHandle]]:
    """One server per example bot for the whole session (starting one takes milliseconds, but
    several tests share them, as a real league's bots serve many games)."""
    servers = {name: serve_in_thread(choose, name=name) for name, choose in EXAMPLES.items()}
    yield servers
    for server in servers.values():
        server.stop()


_owners = itertools.count(1)


def example_bot(servers: dict[str, ServerHandle], example: str, *, owner=None, name=None, **fields):
    """A registered bot at that example server's URL, with a new owner unless one is given.

    Made straight in the database: registration (and its URL check) is the registry's business.
    """
    from django.contrib.auth import get_user_model

    from tournaments.models import Bot

    if owner is None:
        owner = get_user_model().objects.create_user(username=f"owner{next(_owners)}")
    return Bot.objects.create(
        owner=owner,
        name=name or f"{example}-{next(_owners)}",
        url=servers[example].url,
        secret="whsec_" + "A" * 32,
        **fields,
    )


@pytest.fixture
def make_bot(db, example_servers) -> Callable[..., object]:
    """``make_bot("greedy", owner=user)``: a registered bot at that example server's URL
    (``example_bot``)."""

    def make(example: str, *, owner=None, name: str | None = None, **fields) -> object:
        return example_bot(example_servers, example, owner=owner, name=name, **fields)

    return make


@pytest.fixture
def staff(db):
    """A staff account: only staff (and the arena itself) create rated leagues."""
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user(username="staff", is_staff=True)


@pytest.fixture
def make_rated_bot(make_bot) -> Callable[..., object]:
    """``make_rated_bot("greedy")``: a registered bot that passed the protocol check, so it may
    enter rated play."""

    def make(example: str, **fields) -> object:
        fields.setdefault("health", "healthy")
        return make_bot(example, **fields)

    return make


def migrate(targets):
    """Migrate the test database to ``targets`` and return the apps as they were then."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.fixture
def latest_schema_after():
    """For migration tests: later tests need every migration applied again."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
