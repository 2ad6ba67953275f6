"""Cached reads: served without SQL, revalidated with ETags, dropped when a result is recorded."""

from collections.abc import Iterator

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from benchmarks.pool_data import LEAGUE_OWNER, _bots, league_play
from tests.performance.data import rows_for_a_module
from tournaments.models import Game, League

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def read_cache_on(settings):
    """The test settings turn cached reads off (their cache is per process); here they are on,
    from an empty cache (row ids made by a test come again in the next test's savepoint)."""
    settings.ESCOBA_READ_CACHE_S = 300
    cache.clear()
    yield
    cache.clear()


@pytest.fixture(scope="module")
def played(django_db_setup, django_db_blocker) -> Iterator[League]:
    """A finished rated league of 4 bots, played through the services, its pool fitted: played
    once for the module; each test reads it in a savepoint of its own (tests/performance/data.py
    ``rows_for_a_module``), so what a test adds or changes is gone before the next."""

    def play() -> League:
        league_play(bot_ids=_bots(4), name="cached")
        return League.objects.get(name="cached")

    with rows_for_a_module(django_db_blocker, play) as league:
        yield league


def _rankings(client: APIClient) -> list:
    response = client.get("/api/rankings/?pool=classic/2p")
    assert response.status_code == 200
    return response.json()["results"]


def test_cached_rankings_cost_no_sql_and_a_recorded_result_invalidates_them(
    played, django_capture_on_commit_callbacks
):
    client = APIClient()
    first = _rankings(client)
    assert first and all(row["sets"] == 3 for row in first)
    with CaptureQueriesContext(connection) as queries:
        assert _rankings(client) == first
    assert len(queries) == 0

    # Another league of the same bots: its results are recorded and the pool refitted.
    with django_capture_on_commit_callbacks(execute=True):
        league_play(bot_ids=_bots(4), name="again")
    after = _rankings(client)
    assert all(row["sets"] == 6 for row in after)


def test_a_cached_rating_history_costs_no_sql_and_a_new_fit_extends_it(
    played, django_capture_on_commit_callbacks
):
    bot = Game.objects.filter(league=played).first().seating[0]
    client = APIClient()
    path = f"/api/rankings/history/?bot={bot}"
    first = client.get(path).json()["results"]
    assert first
    with CaptureQueriesContext(connection) as queries:
        assert client.get(path).json()["results"] == first
    assert len(queries) == 0

    with django_capture_on_commit_callbacks(execute=True):
        league_play(bot_ids=_bots(4), name="again")
    after = client.get(path).json()["results"]
    assert len(after) > len(first) and after[: len(first)] == first


@pytest.mark.parametrize(
    "path",
    [
        "/api/rankings/?pool=classic/2p",
        "/api/rankings/history/?bot={bot}",
        "/api/leagues/{league}/",
        "/api/leagues/",
        "/api/games/?league={league}",
        "/api/games/{game}/",
        "/",
        "/leagues/{league}/",
        "/bots/{bot}/",
        "/games/{game}/",
    ],
)
def test_a_matching_etag_is_answered_304_without_sql(played, path):
    game = Game.objects.filter(league=played).first()
    path = path.format(league=played.id, game=game.id, bot=game.seating[0])
    client = APIClient()
    first = client.get(path)
    assert first.status_code == 200
    etag = first["ETag"]
    with CaptureQueriesContext(connection) as queries:
        again = client.get(path, HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304 and again.content == b""
    assert again["ETag"] == etag
    assert len(queries) == 0
    assert client.get(path, HTTP_IF_NONE_MATCH='"something-else"').status_code == 200


def test_a_finished_game_changes_the_etag_of_its_league(played, django_capture_on_commit_callbacks):
    """A league page revalidated after one of its games is stored is sent again in full."""
    client = APIClient()
    path = f"/leagues/{played.id}/"
    etag = client.get(path)["ETag"]
    game = Game.objects.filter(league=played).order_by("id").first()
    game.status = Game.Status.PENDING
    game.save(update_fields=["status"])
    from benchmarks.pool_data import play_record
    from games.engine import Ruleset
    from tournaments.services.game_results import game_finish

    record = play_record(Ruleset.from_dict(played.ruleset), game.seed)
    game.log.delete()
    with django_capture_on_commit_callbacks(execute=True):
        assert game_finish(game_id=game.id, record=record)
    again = client.get(path, HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 200 and again["ETag"] != etag


def test_the_league_list_is_served_from_the_cache_until_a_league_is_made_or_changes(
    played, django_capture_on_commit_callbacks
):
    from tournaments.services.league_creation import league_create
    from tournaments.services.league_states import league_cancel

    client = APIClient()

    def names_and_statuses() -> list[tuple[str, str]]:
        response = client.get("/api/leagues/")
        assert response.status_code == 200
        return [(row["name"], row["status"]) for row in response.json()["results"]]

    assert names_and_statuses() == [("cached", "finished")]
    with CaptureQueriesContext(connection) as queries:
        assert names_and_statuses() == [("cached", "finished")]
    assert len(queries) == 0

    owner = get_user_model().objects.get(username=LEAGUE_OWNER)
    with django_capture_on_commit_callbacks(execute=True):
        made = league_create(creator=owner, name="newer", bot_ids=_bots(4), rated=False)
    assert names_and_statuses() == [("newer", "open"), ("cached", "finished")]
    with django_capture_on_commit_callbacks(execute=True):
        league_cancel(league_id=made.id, user=owner)
    assert names_and_statuses() == [("newer", "cancelled"), ("cached", "finished")]


def test_signed_in_pages_are_not_cached(played):
    user = get_user_model().objects.create_user("reader", password="a-long-password-1")
    client = APIClient()
    client.force_login(user)
    response = client.get(f"/leagues/{played.id}/")
    assert response.status_code == 200
    assert "ETag" not in response
    assert b"reader" in response.content
