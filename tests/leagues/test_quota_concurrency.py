"""Hostile: one user fires the same quota-limited request from many threads at once, each with its
own database connection (as several web processes would), and the quota still holds: the count is
read under the user's row lock (``services.quotas.user_lock``).

PostgreSQL only (``export "$(ESCOBA_PG_DIR=/tmp/pg-x scripts/postgres.sh start)"``): on SQLite
every writing transaction takes the database's single write lock when it begins, which
serializes these requests whatever the code does.
"""

import threading
from collections import Counter
from collections.abc import Callable

import pytest
from django.db import connection
from knox.models import AuthToken
from rest_framework.test import APIClient

from tournaments import queueing
from tournaments.models import Challenge, League, VersionTest
from tournaments.services.league_creation import league_create

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

REQUESTS = 16


@pytest.fixture(autouse=True)
def _nothing_played(monkeypatch):
    """What a started league would play is beside the point: its matches are never sent."""
    monkeypatch.setattr(queueing, "league_schedule_enqueue_on_commit", lambda league_id: None)
    monkeypatch.setattr(queueing, "matches_enqueue_on_commit", lambda ids: None)


def fire_at_once(post: Callable[[APIClient, int], object], user) -> Counter:
    """``post(client, i)`` from ``REQUESTS`` threads released together; the status codes."""
    token = AuthToken.objects.create(user=user)[1]
    barrier = threading.Barrier(REQUESTS)
    codes: list[int] = []
    lock = threading.Lock()

    def one(number: int) -> None:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
        try:
            barrier.wait(timeout=30)
            code = post(client, number).status_code
            with lock:
                codes.append(code)
        finally:
            connection.close()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(REQUESTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return Counter(codes)


def test_concurrent_challenges_stay_within_the_daily_quota(user, make_bot, settings):
    settings.ESCOBA_CHALLENGES_PER_DAY = 3
    mine = make_bot("greedy", owner=user)
    opponent = make_bot("random", owner=user)

    codes = fire_at_once(
        lambda client, _: client.post(
            "/api/challenges/", {"bot": mine.id, "opponent": opponent.id, "sets": 1}, format="json"
        ),
        user,
    )

    assert codes == Counter({201: 3, 429: REQUESTS - 3})
    assert Challenge.objects.filter(creator=user).count() == 3


def test_concurrent_version_tests_stay_within_the_daily_quota(user, make_bot, settings):
    settings.ESCOBA_TESTS_PER_DAY = 2
    candidate = make_bot("greedy", owner=user)
    baseline = make_bot("random", owner=user)
    payload = {
        "candidate": candidate.id,
        "baseline": baseline.id,
        "elo0": 0,
        "elo1": 50,
        "alpha": 0.05,
        "beta": 0.05,
        "max_sets": 10,
    }

    codes = fire_at_once(lambda client, _: client.post("/api/tests/", payload, format="json"), user)

    assert codes == Counter({201: 2, 429: REQUESTS - 2})
    assert VersionTest.objects.filter(creator=user).count() == 2


def test_concurrent_starts_stay_within_the_running_leagues_quota(user, make_bot, settings):
    settings.ESCOBA_RUNNING_LEAGUES_PER_USER = 2
    bots = [make_bot("greedy"), make_bot("random")]
    leagues = [
        league_create(creator=user, name=f"race {i}", bot_ids=[b.id for b in bots])
        for i in range(REQUESTS)
    ]

    codes = fire_at_once(
        lambda client, i: client.post(f"/api/leagues/{leagues[i].id}/start/"), user
    )

    assert codes == Counter({202: 2, 429: REQUESTS - 2})
    assert League.objects.filter(creator=user, status=League.Status.RUNNING).count() == 2


def test_concurrent_starts_stay_within_the_queued_games_quota(user, make_bot, settings):
    settings.ESCOBA_QUEUED_GAMES_PER_USER = 7  # three leagues of 2 games fit, a fourth does not
    settings.ESCOBA_RUNNING_LEAGUES_PER_USER = REQUESTS
    bots = [make_bot("greedy"), make_bot("random")]
    leagues = [
        league_create(creator=user, name=f"queue {i}", bot_ids=[b.id for b in bots])
        for i in range(REQUESTS)
    ]

    codes = fire_at_once(
        lambda client, i: client.post(f"/api/leagues/{leagues[i].id}/start/"), user
    )

    assert codes == Counter({202: 3, 429: REQUESTS - 3})
