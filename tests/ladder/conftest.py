"""The ladder tests reuse the league fixtures (example bots on loopback, ``make_bot``)."""

import pytest

from tests.leagues.conftest import example_servers, make_bot

__all__ = ["example_servers", "make_bot", "no_play"]


@pytest.fixture
def no_play(monkeypatch):
    """Keep scheduled sets pending: the test looks at what was scheduled, not at the games.

    Returns the list of match ids that would have been sent to the workers.
    """
    from tournaments import tasks

    sent: list[int] = []
    monkeypatch.setattr(tasks, "enqueue_matches", lambda ids: sent.extend(ids))
    return sent
