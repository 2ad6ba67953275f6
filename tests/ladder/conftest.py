"""The ladder tests reuse the league fixtures (example bots on loopback, ``make_bot``)."""

import pytest

from tests.leagues.conftest import example_servers, make_bot, staff
from tests.ratings.conftest import record_sets

__all__ = ["example_servers", "make_bot", "no_play", "record_sets", "staff"]


@pytest.fixture
def no_play(monkeypatch):
    """Keep scheduled sets pending: the test looks at what was scheduled, not at the games.

    Returns the list of match ids that would have been sent to the workers.
    """
    from tournaments import queueing

    sent: list[int] = []
    monkeypatch.setattr(queueing, "matches_enqueue", lambda ids, **_: sent.extend(ids))
    return sent
