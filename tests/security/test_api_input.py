"""Hostile input to every route: NUL bytes, huge and negative ids, wrong types. The answer is a
4xx with our error body, never a 5xx and never a changed row."""

import pytest
from rest_framework.test import APIClient

from tournaments.models import Bot, League

pytestmark = pytest.mark.django_db

BAD_IDS = [
    "0", "-1", "9223372036854775808", "1" * 40, "1e3", "1.0", "%00", "1%00", "abc", "%E2%80%8B1",
]  # fmt: skip
ID_ROUTES = [
    "/api/bots/{id}/", "/api/bots/{id}/checks/", "/api/leagues/{id}/",
    "/api/leagues/{id}/crosstable/", "/api/matches/{id}/", "/api/games/{id}/",
    "/api/games/{id}/log/", "/games/{id}/", "/bots/{id}/", "/leagues/{id}/",
    "/leagues/{id}/games/",
]  # fmt: skip
BAD_QUERIES = [
    "/api/games/?league={value}", "/api/games/?match={value}", "/api/matches/?league={value}",
    "/api/rankings/?pool={value}", "/api/rankings/history/?bot={value}",
    "/api/leagues/?status={value}", "/api/bots/?mine={value}", "/?pool={value}",
]  # fmt: skip
BAD_VALUES = ["%00", "a%00b", "9223372036854775808", "-5", "%FF%FE", "x" * 3000, "[]", "{}"]


@pytest.fixture
def client(user_client) -> APIClient:
    return user_client


def assert_refused(response, allowed=(400, 404)) -> None:
    assert response.status_code in allowed, (response.status_code, response.content[:300])
    if response["Content-Type"].startswith("application/json"):
        body = response.json()
        assert {"detail", "code"} <= set(body), body


@pytest.mark.parametrize("route", ID_ROUTES)
@pytest.mark.parametrize("bad_id", BAD_IDS)
def test_bad_ids_are_404(client, route, bad_id):
    assert_refused(client.get(route.format(id=bad_id)), allowed=(404,))


@pytest.mark.parametrize("route", BAD_QUERIES)
@pytest.mark.parametrize("value", BAD_VALUES)
def test_bad_query_values_are_refused_or_ignored(client, route, value):
    response = client.get(route.format(value=value))
    if response.status_code != 200:
        assert_refused(response, allowed=(400,))


BODIES = [
    {"name": "nul\x00byte", "url": "http://127.0.0.1:9/"},
    {"name": "ok", "url": "http://127.0.0.1:9/\x00"},
    {"name": ["list"], "url": {"not": "a string"}},
    {"name": 12, "url": 12, "description": 12},
    {"name": "x" * 100_000, "url": "http://127.0.0.1:9/"},
    {"name": None},
]
LEAGUE_BODIES = [
    {"name": "nul\x00", "players": 2},
    {"name": "x", "players": "two"},
    {"name": "x", "players": 2**70},
    {"name": "x", "move_timeout_ms": -1},
    {"name": "x", "max_faults": 10**30},
    {"name": "x", "bots": ["1", None, {"id": 1}]},
    {"name": "x", "bots": [2**63, 2**64]},
    {"name": "x", "ruleset": {"name": "classic\x00", "options": {"target": "fifteen"}}},
    {"name": "x", "ruleset": {"name": "classic", "options": {"players": 4}}},
    {"name": "x", "games_per_pairing": 10**9},
]


@pytest.mark.parametrize("body", BODIES)
def test_hostile_bot_bodies_are_400(client, body, loopback_only):
    assert_refused(client.post("/api/bots/", body, format="json"), allowed=(400,))
    assert not Bot.objects.exists()


@pytest.mark.parametrize("body", LEAGUE_BODIES)
def test_hostile_league_bodies_are_400(client, body):
    assert_refused(client.post("/api/leagues/", body, format="json"), allowed=(400,))
    assert not League.objects.exists()


@pytest.mark.parametrize(
    "raw", [b"\x00", b"[]", b"null", b"123", b'"text"', b"{", b'{"name": "\\u0000"}', b"\xff\xfe"]
)
@pytest.mark.parametrize("route", ["/api/bots/", "/api/leagues/", "/api/auth/token/"])
def test_bodies_that_are_not_objects_are_400(client, route, raw):
    response = client.generic("POST", route, raw, content_type="application/json")
    assert_refused(response, allowed=(400,))


def test_huge_entry_id_is_refused(client, user, make_bot):
    from tournaments.services.league_creation import league_create

    league = league_create(creator=user, name="x", bot_ids=[make_bot("greedy", owner=user).id])
    for bot in (2**63, -1, "1\x00", [1]):
        response = client.post(f"/api/leagues/{league.id}/entries/", {"bot": bot}, format="json")
        assert_refused(response, allowed=(400,))
