"""Who may do what: tokens where they are needed, owners only for their bots, creators only for
their leagues, no secret or private URL in anyone else's answers, throttles, and CSRF on forms.

ana owns a bot and a league; bruno is another signed-in user; anonymous has no credentials.
"""

import re

import pytest
from django.test import Client
from rest_framework.test import APIClient

from tests.conftest import USER_PASSWORD
from tests.fakebots.http_bots import refused_url
from tournaments.models import Bot, League
from tournaments.services.league_creation import league_create

pytestmark = pytest.mark.django_db

SECRET = "whsec_" + "A" * 32  # what tests/leagues/conftest.py's make_bot signs with


@pytest.fixture
def world(user, other_user, make_bot, user_client, other_client, api_client):
    bot = make_bot("greedy", owner=user)
    rival = make_bot("random", owner=other_user)
    league = league_create(creator=user, name="ana's league", bot_ids=[bot.id, rival.id])
    return {
        "bot": bot, "rival": rival, "league": league,
        "owner": user_client, "other": other_client, "anonymous": api_client,
    }  # fmt: skip


# (method, path, body): every API write, on ana's objects.
WRITES = [
    ("patch", "/api/bots/{bot}/", {"description": "mine now"}),
    ("delete", "/api/bots/{bot}/", None),
    ("post", "/api/bots/{bot}/pause/", None),
    ("post", "/api/bots/{bot}/resume/", None),
    ("post", "/api/bots/{bot}/rotate-secret/", None),
    ("post", "/api/bots/{bot}/check/", None),
    ("get", "/api/bots/{bot}/checks/", None),
    ("post", "/api/leagues/{league}/start/", None),
    ("post", "/api/leagues/{league}/pause/", None),
    ("post", "/api/leagues/{league}/resume/", None),
    ("post", "/api/leagues/{league}/cancel/", None),
]


def send(client: APIClient, method: str, path: str, body, world) -> int:
    url = path.format(bot=world["bot"].id, league=world["league"].id)
    return getattr(client, method)(url, body, format="json").status_code


@pytest.mark.parametrize("method, path, body", WRITES)
def test_anonymous_needs_a_token(world, method, path, body):
    assert send(world["anonymous"], method, path, body, world) == 401


@pytest.mark.parametrize("method, path, body", WRITES)
def test_another_user_may_not_touch_ana_s_bot_or_league(world, method, path, body):
    before = Bot.objects.values().get(pk=world["bot"].id)
    league_before = League.objects.values().get(pk=world["league"].id)
    assert send(world["other"], method, path, body, world) == 403
    assert Bot.objects.values().get(pk=world["bot"].id) == before
    assert League.objects.values().get(pk=world["league"].id) == league_before


@pytest.mark.parametrize(
    "method, path, body",
    [
        ("post", "/api/bots/", {"name": "x", "url": "http://127.0.0.1:9/"}),
        ("post", "/api/leagues/", {"name": "x"}),
        ("post", "/api/leagues/{league}/entries/", {"bot": 1}),
        ("get", "/api/auth/me/", None),
    ],
)
def test_creating_anything_needs_a_token(world, method, path, body):
    assert send(world["anonymous"], method, path, body, world) == 401


def test_bruno_cannot_enter_ana_s_bot_into_his_league(world, other_user):
    league = league_create(creator=other_user, name="bruno's", bot_ids=[world["rival"].id])
    response = world["other"].post(
        f"/api/leagues/{league.id}/entries/", {"bot": world["bot"].id}, format="json"
    )
    assert response.status_code == 403
    assert not league.entries.filter(bot=world["bot"]).exists()


def test_a_bad_token_is_not_anonymous_access(world):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token " + "0" * 40)
    assert client.get("/api/leagues/").status_code == 401


READS = [
    "/api/bots/", "/api/bots/?mine=1", "/api/bots/{bot}/", "/api/leagues/",
    "/api/leagues/{league}/", "/api/leagues/{league}/crosstable/", "/api/matches/",
    "/api/games/", "/api/rankings/",
    "/", "/leagues/", "/leagues/{league}/", "/bots/{bot}/",
]  # fmt: skip


@pytest.mark.parametrize("who", ["other", "anonymous"])
def test_no_one_else_ever_sees_ana_s_secret_or_url(world, who):
    client = world[who]
    ana_url = re.escape(world["bot"].url)
    for path in READS:
        response = client.get(path.format(bot=world["bot"].id, league=world["league"].id))
        assert response.status_code == 200, path
        text = response.content.decode()
        assert "whsec_" not in text, path
        assert not re.search(ana_url, text), path


def test_the_owner_sees_the_url_but_never_the_secret_again(world):
    for path in READS:
        response = world["owner"].get(path.format(bot=world["bot"].id, league=world["league"].id))
        assert SECRET not in response.content.decode(), path
    assert world["owner"].get(f"/api/bots/{world['bot'].id}/").json()["url"] == world["bot"].url


def test_anonymous_reads_are_throttled(world):
    statuses = [world["anonymous"].get("/api/rankings/").status_code for _ in range(125)]
    assert statuses[:120] == [200] * 120
    assert statuses[-1] == 429


def test_password_guessing_is_throttled(user):
    client = APIClient()
    guesses = [
        client.post("/api/auth/token/", {"username": "ana", "password": f"guess{n}"}).status_code
        for n in range(12)
    ]
    assert set(guesses[:10]) == {400}
    assert guesses[-1] == 429
    right = client.post("/api/auth/token/", {"username": "ana", "password": USER_PASSWORD})
    assert right.status_code == 429, "the throttle must hold even for the right password"


def test_calls_to_bots_are_throttled_per_user(world, loopback_only):
    bot = world["bot"]
    bot.url = refused_url()  # a check then fails fast with "connect": no bot is bothered
    bot.save(update_fields=["url"])
    statuses = [world["owner"].post(f"/api/bots/{bot.id}/check/").status_code for _ in range(32)]
    assert statuses[:30] == [200] * 30 and statuses[-1] == 429


@pytest.fixture
def csrf_client(user) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


@pytest.mark.parametrize(
    "path, data",
    [
        ("/my/bots/", {"name": "x", "url": "http://127.0.0.1:9/"}),
        ("/my/bots/{bot}/check/", {}),
        ("/accounts/logout/", {}),
    ],
)
def test_browser_forms_refuse_a_post_without_the_csrf_token(world, csrf_client, path, data):
    response = csrf_client.post(path.format(bot=world["bot"].id), data)
    assert response.status_code == 403
    assert Bot.objects.count() == 2


def test_login_and_signup_forms_need_the_csrf_token():
    client = Client(enforce_csrf_checks=True)
    assert client.post("/accounts/login/", {"username": "ana", "password": "x"}).status_code == 403
    signup = {"username": "eve", "password1": USER_PASSWORD, "password2": USER_PASSWORD}
    assert client.post("/accounts/signup/", signup).status_code == 403


def test_the_csrf_token_from_the_form_is_accepted(world, csrf_client):
    page = csrf_client.get("/my/bots/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode())
    assert token, "the form carries a CSRF token"
    response = csrf_client.post(
        f"/my/bots/{world['bot'].id}/check/", {"csrfmiddlewaretoken": token.group(1)}
    )
    assert response.status_code != 403


def test_session_cookie_alone_cannot_write_through_the_api(world, user):
    """The API accepts the browser's session too: then DRF demands the CSRF token as well."""
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    response = client.post(f"/api/bots/{world['bot'].id}/pause/")
    assert response.status_code == 403
    assert Bot.objects.get(pk=world["bot"].id).status == "active"
