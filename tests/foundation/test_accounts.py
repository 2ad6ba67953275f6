"""Sign-up, tokens and authentication through the API."""

import pytest
from django.contrib.auth import get_user_model
from rest_framework.throttling import ScopedRateThrottle

from tests.conftest import USER_PASSWORD
from tournaments import messages

pytestmark = pytest.mark.django_db

REGISTER = "/api/auth/register/"
TOKEN = "/api/auth/token/"
ME = "/api/auth/me/"


def test_register_returns_a_working_token(api_client):
    response = api_client.post(REGISTER, {"username": "maria", "password": USER_PASSWORD})

    assert response.status_code == 201
    token = response.json()["token"]
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    me = api_client.get(ME)
    assert me.status_code == 200
    assert me.json() == {"username": "maria", "is_staff": False}
    assert get_user_model().objects.get(username="maria").check_password(USER_PASSWORD)


def test_register_refuses_a_taken_username_whatever_its_case(api_client, user):
    response = api_client.post(
        REGISTER, {"username": user.username.upper(), "password": "x9!kQ2#pLm"}
    )

    assert response.status_code == 400
    assert response.json()["errors"] == {"username": [messages.USERNAME_TAKEN]}


@pytest.mark.parametrize(
    ("password", "fragment"),
    [("short1!", "too short"), ("password123", "too common"), ("83749275619", "entirely numeric")],
)
def test_register_applies_django_password_validators(api_client, password, fragment):
    response = api_client.post(REGISTER, {"username": "luis", "password": password})

    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid"
    assert body["detail"] == messages.VALIDATION_FAILED
    assert any(fragment in text for text in body["errors"]["password"])
    assert not get_user_model().objects.filter(username="luis").exists()


def test_register_rejects_a_password_like_the_username(api_client):
    response = api_client.post(REGISTER, {"username": "carmencita", "password": "carmencita1"})

    assert response.status_code == 400
    assert any("similar" in text for text in response.json()["errors"]["password"])


def test_register_reports_every_missing_field(api_client):
    response = api_client.post(REGISTER, {}, format="json")

    assert response.status_code == 400
    assert set(response.json()["errors"]) == {"username", "password"}


def test_register_rejects_an_invalid_username(api_client):
    response = api_client.post(REGISTER, {"username": "no spaces!", "password": USER_PASSWORD})

    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["username"]


def test_token_gives_a_new_working_token_and_the_first_keeps_working(api_client):
    """Tokens are stored hashed (docs/security.md): an old one cannot be handed out again."""
    registered = api_client.post(REGISTER, {"username": "pepa", "password": USER_PASSWORD}).json()

    response = api_client.post(TOKEN, {"username": "pepa", "password": USER_PASSWORD})

    assert response.status_code == 200
    assert set(response.json()) == {"token"} and response.json() != registered
    for token in (registered["token"], response.json()["token"]):
        api_client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
        assert api_client.get(ME).json()["username"] == "pepa"


def test_token_creates_a_token_for_users_made_elsewhere(api_client, user):
    response = api_client.post(TOKEN, {"username": user.username, "password": USER_PASSWORD})

    assert response.status_code == 200
    assert len(response.json()["token"]) == 64


@pytest.mark.parametrize("username", ["ana", "nobody"])
def test_token_refuses_wrong_credentials_without_saying_which(api_client, user, username):
    response = api_client.post(TOKEN, {"username": username, "password": "wrong-password"})

    assert response.status_code == 400
    assert response.json()["errors"] == {"non_field_errors": [messages.INVALID_CREDENTIALS]}


def test_token_refuses_inactive_users(api_client, user):
    user.is_active = False
    user.save()

    response = api_client.post(TOKEN, {"username": user.username, "password": USER_PASSWORD})

    assert response.status_code == 400


def test_me_needs_authentication(api_client):
    response = api_client.get(ME)

    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"
    assert response.json()["errors"] == {}


def test_a_bad_token_is_refused(api_client):
    api_client.credentials(HTTP_AUTHORIZATION="Token " + "0" * 40)

    response = api_client.get(ME)

    assert response.status_code == 401
    assert response.json()["code"] == "authentication_failed"


def test_session_authentication_works_for_the_browsable_api(client, user):
    client.login(username=user.username, password=USER_PASSWORD)

    response = client.get(ME)

    assert response.status_code == 200
    assert response.json()["username"] == user.username


def test_authentication_endpoints_are_throttled(api_client, monkeypatch):
    monkeypatch.setitem(ScopedRateThrottle.THROTTLE_RATES, "auth", "3/minute")
    statuses = [
        api_client.post(TOKEN, {"username": "x", "password": "y"}).status_code for _ in range(4)
    ]

    assert statuses == [400, 400, 400, 429]
    throttled = api_client.post(REGISTER, {"username": "x", "password": "y"})
    assert throttled.status_code == 429
    assert throttled.json()["code"] == "throttled"
    assert "Retry-After" in throttled.headers
