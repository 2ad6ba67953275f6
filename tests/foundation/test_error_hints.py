"""Errors that say what to do (issue 39): the usual first mistakes of a bot author, each
answered with the fix in the API's own error body."""

import pytest
from knox.models import AuthToken
from rest_framework.test import APIClient

from games.engine.rulesets import Ruleset
from tournaments import messages
from tournaments.api.bot_serializers import ERROR_URL_NO_SCHEME
from tournaments.api.filters import ERROR_POOL_KNOWN, ERROR_POOL_NONE
from tournaments.models import Bot, League

pytestmark = pytest.mark.django_db


def test_a_bearer_token_is_told_the_scheme_is_token(user):
    key = AuthToken.objects.create(user=user)[1]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")

    response = client.get("/api/auth/me/")

    assert response.status_code == 401
    assert response.json() == {
        "detail": messages.AUTH_SCHEME.format(scheme="Bearer"),
        "code": "not_authenticated",
        "errors": {},
    }
    assert "Authorization: Token <key>" in response.json()["detail"]
    assert response["WWW-Authenticate"] == "Token"
    # the same key with the right scheme is accepted
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/auth/me/").status_code == 200


def test_no_header_and_a_wrong_token_keep_their_own_messages(user):
    client = APIClient()
    assert "scheme" not in client.get("/api/auth/me/").json()["detail"]
    client.credentials(HTTP_AUTHORIZATION="Token not-a-key")
    response = client.get("/api/auth/me/")
    assert response.status_code == 401 and "scheme" not in response.json()["detail"]


def _league(user, name: str, preset: str, players: int) -> League:
    ruleset = Ruleset.from_preset(preset, {"players": players}).to_dict()
    pool = f"{preset}/{players}p"
    return League.objects.create(
        name=name, creator=user, ruleset=ruleset, pool=pool, players=players, seed=1
    )


@pytest.mark.parametrize(
    "path",
    ["/api/rankings/?pool=classic/5p", "/api/leagues/?pool=classic", "/api/rankings/?pool=classic"],
)
def test_a_malformed_pool_lists_the_pools_that_exist(api_client, user, path):
    assert api_client.get(path).json()["errors"]["pool"] == [ERROR_POOL_NONE]
    _league(user, "duels", "classic", 2)
    _league(user, "trios", "primera", 3)

    response = api_client.get(path)

    assert response.status_code == 400
    assert response.json()["errors"]["pool"] == [
        ERROR_POOL_KNOWN.format(pools="classic/2p, primera/3p")
    ]


@pytest.mark.parametrize(
    ("url", "suggestion"),
    [
        ("127.0.0.1:8801", "http://127.0.0.1:8801/"),
        ("localhost:8801/bot/", "http://localhost:8801/bot/"),
        ("bot.example.org", "https://bot.example.org/"),
    ],
)
def test_a_bot_url_without_its_scheme_suggests_one(user_client, user, url, suggestion):
    response = user_client.post("/api/bots/", {"name": "mine", "url": url}, format="json")

    assert response.status_code == 400
    assert response.json()["errors"] == {"url": [ERROR_URL_NO_SCHEME.format(suggestion=suggestion)]}
    assert not Bot.objects.exists()


def test_a_bot_url_changed_to_one_without_its_scheme_suggests_one(user_client, user):
    bot = Bot.objects.create(owner=user, name="mine", url="http://127.0.0.1:9/")

    response = user_client.patch(f"/api/bots/{bot.pk}/", {"url": "127.0.0.1:8801"}, format="json")

    assert response.status_code == 400
    expected = ERROR_URL_NO_SCHEME.format(suggestion="http://127.0.0.1:8801/")
    assert response.json()["errors"] == {"url": [expected]}
