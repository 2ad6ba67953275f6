"""The reliability suite reuses the league fixtures (example bots on loopback, ``make_bot``).

Its leagues are rated, so their creator is staff and their bots passed the protocol check.
"""

import pytest

from tests.leagues.conftest import example_servers
from tests.leagues.conftest import make_bot as any_bot

__all__ = ["example_servers", "any_bot", "make_bot", "user"]


@pytest.fixture
def user(db):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user(username="ana", is_staff=True)


@pytest.fixture
def make_bot(any_bot):  # noqa: F811
    def make(example: str, **fields):
        fields.setdefault("health", "healthy")
        return any_bot(example, **fields)

    return make
