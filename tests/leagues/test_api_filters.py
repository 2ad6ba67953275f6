"""The API list filters (django-filter): what each selects, our 400 for a bad value, the schema."""

import pytest
from django.contrib.auth import get_user_model

from tests.leagues.conftest import example_bot
from tests.performance.data import rows_made, rows_restore
from tournaments.api.filters import (
    ERROR_BAD_ID,
    ERROR_BOT_REQUIRED,
    ERROR_POOL_NONE,
    ERROR_UNKNOWN_BOT,
)
from tournaments.messages import VALIDATION_FAILED
from tournaments.models import Game, League, Match, RatingPoint
from tournaments.services.league_creation import league_create
from tournaments.services.league_schedules import league_start

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def made_leagues(django_db_setup, django_db_blocker, example_servers):
    """A finished rated league of three checked bots (eager Celery plays it) and an open one of
    another pool, made by staff: played once for the module (tests/performance/data.py
    ``rows_made``)."""

    def make():
        user = get_user_model().objects.create_user(username="staff", is_staff=True)
        bots = [
            example_bot(example_servers, name, health="healthy")
            for name in ("greedy", "random", "random7")
        ]
        ids = [b.id for b in bots]
        played = league_create(creator=user, name="played", bot_ids=ids, rated=True)
        league_start(league_id=played.id, user=user)
        trio = league_create(creator=user, name="trio", players=3, bot_ids=ids)
        return League.objects.get(pk=played.id), trio, bots

    return rows_made(django_db_blocker, make)


@pytest.fixture
def leagues(db, made_leagues):
    """The module's leagues, restored in this test's database."""
    made, rows = made_leagues
    rows_restore(rows)
    return made


def ids(response) -> list[int]:
    assert response.status_code == 200, response.json()
    return [item["id"] for item in response.json()["results"]]


def test_each_filter_selects_what_it_names(api_client, leagues):
    played, trio, bots = leagues
    first_match = played.matches.order_by("number").first()
    bot_games = Game.objects.filter(seats__bot=bots[0]).distinct().order_by("id")

    assert ids(api_client.get("/api/leagues/?status=finished")) == [played.id]
    assert ids(api_client.get("/api/leagues/?pool=classic/3p")) == [trio.id]
    assert ids(api_client.get("/api/leagues/?pool=classic/3p&status=finished")) == []
    assert len(ids(api_client.get(f"/api/matches/?league={played.id}&status=finished"))) == 3
    assert ids(api_client.get(f"/api/matches/?league={trio.id}")) == []
    assert ids(api_client.get(f"/api/games/?match={first_match.id}")) == list(
        first_match.games.order_by("id").values_list("id", flat=True)
    )
    # a bot's games: newest first (its latest results on top), unless ordering says otherwise
    newest_first = [g.id for g in reversed(bot_games)]
    assert ids(api_client.get(f"/api/games/?bot={bots[0].id}")) == newest_first
    assert ids(api_client.get(f"/api/games/?bot={bots[0].id}&ordering=id")) == newest_first[::-1]
    league_games = list(
        Game.objects.filter(league=played).order_by("id").values_list("id", flat=True)
    )
    assert ids(api_client.get(f"/api/games/?league={played.id}")) == league_games
    assert ids(api_client.get(f"/api/games/?league={played.id}&ordering=-id")) == league_games[::-1]
    assert len(bot_games) == 4  # two duplicate sets of two games
    assert ids(api_client.get(f"/api/games/?league={played.id}&status=aborted")) == []
    history = api_client.get(f"/api/rankings/history/?bot={bots[0].id}&pool=classic/2p")
    points = RatingPoint.objects.filter(bot=bots[0], pool="classic/2p").order_by("id")
    assert ids(history) == list(points.values_list("id", flat=True)) and points.exists()
    assert ids(api_client.get(f"/api/rankings/history/?bot={bots[0].id}&pool=classic/3p")) == []


def test_the_ladder_is_of_one_pool_and_ranks_within_it(api_client, leagues):
    default = api_client.get("/api/rankings/").json()
    assert default == api_client.get("/api/rankings/?pool=classic/2p").json()
    assert [row["rank"] for row in default["results"]] == [1, 2, 3]
    assert {row["pool"] for row in default["results"]} == {"classic/2p"}
    assert api_client.get("/api/rankings/?pool=classic/3p").json()["count"] == 0


@pytest.mark.parametrize(
    ("path", "field", "message"),
    [
        ("/api/games/?league=abc", "league", ERROR_BAD_ID),
        ("/api/games/?match=0", "match", ERROR_BAD_ID),
        ("/api/games/?bot=9223372036854775808", "bot", ERROR_BAD_ID),
        ("/api/games/?bot=%D9%A1", "bot", ERROR_BAD_ID),  # an Arabic-Indic digit one
        ("/api/games/?status=won", "status", "One of pending, finished, aborted."),
        ("/api/games/?bot=1&ordering=name", "ordering", "One of id, -id."),
        ("/api/matches/?league=1.0", "league", ERROR_BAD_ID),
        ("/api/matches/?status=%00", "status", "One of pending, running, finished, cancelled."),
        ("/api/leagues/?status=x", "status", "One of open, running, paused, finished, cancelled."),
        ("/api/leagues/?pool=classic", "pool", ERROR_POOL_NONE),
        ("/api/rankings/?pool=classic/5p", "pool", ERROR_POOL_NONE),
        ("/api/rankings/?pool=a%00b", "pool", ERROR_POOL_NONE),
        ("/api/rankings/history/", "bot", ERROR_BOT_REQUIRED),
        ("/api/rankings/history/?bot=-3", "bot", ERROR_BAD_ID),
        ("/api/rankings/history/?bot=987654", "bot", ERROR_UNKNOWN_BOT),
        ("/api/rankings/history/?bot=1&pool=2p", "pool", ERROR_POOL_NONE),
    ],
)
def test_a_bad_value_is_our_400_naming_the_parameter(api_client, path, field, message):
    response = api_client.get(path)

    body = response.json()
    assert response.status_code == 400
    assert (body["detail"], body["code"]) == (VALIDATION_FAILED, "invalid")
    assert body["errors"][field] == [message]


def test_detail_routes_ignore_list_filters(api_client, leagues):
    played, _, _ = leagues
    match = Match.objects.filter(league=played).first()
    game = Game.objects.filter(league=played).first()

    assert api_client.get(f"/api/leagues/{played.id}/?status=open").status_code == 200
    assert api_client.get(f"/api/matches/{match.id}/?league=abc").status_code == 200
    assert api_client.get(f"/api/games/{game.id}/?league=abc").status_code == 200


def test_the_schema_lists_every_filter_with_its_type():
    from drf_spectacular.generators import SchemaGenerator

    paths = SchemaGenerator().get_schema(request=None, public=True)["paths"]

    def parameters(path: str) -> dict[str, dict]:
        return {p["name"]: p for p in paths[path]["get"]["parameters"] if p["in"] == "query"}

    games = parameters("/api/games/")
    assert {"league", "match", "bot", "status", "ordering"} <= set(games)
    assert "newest first" in games["ordering"]["description"]
    assert games["league"]["schema"]["type"] == "integer"
    assert games["status"]["schema"]["enum"] == ["aborted", "finished", "pending"]
    assert {"league", "status"} <= set(parameters("/api/matches/"))
    assert {"status", "pool"} <= set(parameters("/api/leagues/"))
    assert parameters("/api/rankings/")["pool"]["schema"]["type"] == "string"
    history = parameters("/api/rankings/history/")
    assert history["bot"]["required"] is True and history["bot"]["schema"]["type"] == "integer"
    assert "status" not in {
        p["name"] for p in paths["/api/games/{id}/"]["get"].get("parameters", [])
    }
