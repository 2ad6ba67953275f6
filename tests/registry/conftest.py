"""Fixtures for the bot registry: real bots on loopback and a second user.

Timeouts are shortened for every test here so a bot that never answers costs half a second.
"""

from collections.abc import Callable, Iterator
from contextlib import ExitStack

import pytest

from bots_sdk import serve_in_thread
from bots_sdk.examples import greedy
from tests.conftest import USER_PASSWORD
from tests.fakebots.http_bots import misbehaving as misbehaving_bot
from tests.fakebots.players import Switchable

TIMEOUT_MS = 500


@pytest.fixture(autouse=True)
def _short_timeouts(settings) -> None:
    settings.ESCOBA_BOT_VERIFY_TIMEOUT_MS = TIMEOUT_MS
    settings.ESCOBA_BOT_CHECK_TIMEOUT_MS = TIMEOUT_MS
    settings.ESCOBA_ALLOW_PRIVATE_BOT_URLS = True


@pytest.fixture
def greedy_bot() -> Iterator[str]:
    """The URL of the SDK's greedy example bot, served on loopback without a secret."""
    with serve_in_thread(greedy.choose, name="greedy") as handle:
        yield handle.url


@pytest.fixture
def switchable_bot() -> Iterator[Switchable]:
    bot = Switchable()
    with serve_in_thread(bot.choose, name="switchable") as handle:
        bot.url = handle.url
        yield bot


@pytest.fixture
def misbehaving() -> Iterator[Callable[[str], str]]:
    """`misbehaving("slow")` starts a misbehaving server (tests/fakebots/http_bots.py), its URL."""
    with ExitStack() as stack:
        yield lambda mode: stack.enter_context(misbehaving_bot(mode))


@pytest.fixture
def other_user(db):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user(username="bruno", password=USER_PASSWORD)


@pytest.fixture
def other_client(other_user):
    from knox.models import AuthToken
    from rest_framework.test import APIClient

    client = APIClient()
    token = AuthToken.objects.create(user=other_user)[1]
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client
