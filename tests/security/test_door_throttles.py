"""Every door is throttled like the API, per client address by the trusted-proxy rule.

Hostile bursts as tried against a running service: 20 wrong passwords at the web login and at
the admin's, 30 sign-ups in a row, bot registrations and checks from the web page, and a crowd of
live streams from one address. A form past its limit answers 429 with a page in our words and
``Retry-After``; the counters are the API's, so changing doors buys nothing.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from benchmarks.pool_data import _bots
from tests.conftest import USER_PASSWORD
from tests.live.servers import AsgiServer
from tournaments.services.league_creation import league_create
from web.sse import TOO_MANY_FROM_CLIENT
from web.throttling import TOO_MANY_TRIES

pytestmark = pytest.mark.django_db


def _assert_throttled_page(response) -> None:
    assert response.status_code == 429
    assert int(response["Retry-After"]) > 0
    assert response["Content-Type"].startswith("text/html")
    assert TOO_MANY_TRIES in response.content.decode()


@pytest.mark.parametrize("path", ["/accounts/login/", "/admin/login/"])
def test_a_login_burst_is_throttled_and_the_right_password_waits_too(client, user, path):
    answers = [
        client.post(path, {"username": "ana", "password": f"guess{n}"}).status_code
        for n in range(20)
    ]

    assert answers[:10] == [200] * 10  # the form again, with its error
    assert set(answers[10:]) == {429}
    right = client.post(path, {"username": "ana", "password": USER_PASSWORD})
    _assert_throttled_page(right)
    assert "_auth_user_id" not in client.session
    assert client.get(path).status_code == 200, "reading the form is never counted"


def test_a_forged_forwarded_for_does_not_reset_the_web_login_throttle(client, user):
    for n in range(10):
        client.post("/accounts/login/", {"username": "ana", "password": f"guess{n}"})

    forged = client.post(
        "/accounts/login/",
        {"username": "ana", "password": "guess"},
        HTTP_X_FORWARDED_FOR="203.0.113.7",
    )

    assert forged.status_code == 429


def test_every_door_counts_in_the_same_password_limit(client, user):
    api = APIClient()
    for n in range(4):
        api.post("/api/auth/token/", {"username": "ana", "password": f"guess{n}"})
    for n in range(3):
        client.post("/accounts/login/", {"username": "ana", "password": f"guess{n}"})
    for n in range(3):
        client.post("/admin/login/", {"username": "ana", "password": f"guess{n}"})

    assert api.post("/api/auth/token/", {"username": "ana", "password": "x"}).status_code == 429
    _assert_throttled_page(client.post("/accounts/login/", {"username": "ana", "password": "x"}))


def test_a_signup_burst_makes_at_most_the_limit_of_accounts(client, rates):
    """30 sign-ups in a row from one address: 10 accounts (ESCOBA_THROTTLE_SIGNUP, 10/hour),
    however the password limit is set; the API's sign-up shares the count."""
    rates(auth="1000/minute")
    answers = [
        client.post(
            "/accounts/signup/",
            {
                "username": f"mass{n}",
                "password": "a long passphrase 1",
                "password_again": "a long passphrase 1",
            },
        )
        for n in range(30)
    ]

    assert all(answer.status_code != 429 for answer in answers[:10])
    for answer in answers[10:]:
        _assert_throttled_page(answer)
    assert int(answers[-1]["Retry-After"]) > 60  # an hour's limit: minutes, not seconds
    made = get_user_model().objects.filter(username__startswith="mass").count()
    assert made == 10
    api = APIClient().post(
        "/api/auth/register/", {"username": "more", "password": "a long passphrase 1"}
    )
    assert api.status_code == 429 and api.json()["code"] == "throttled"


def test_registering_and_checking_bots_from_the_page_share_the_api_limit(client, user, rates):
    rates(bot_calls="3/minute")
    client.force_login(user)
    bad = {"name": "b", "url": "not a url"}

    answers = [client.post("/my/bots/", bad).status_code for _ in range(2)]
    api = APIClient()
    api.force_authenticate(user)
    third = api.post("/api/bots/", bad, format="json").status_code

    assert answers == [200, 200] and third == 400
    _assert_throttled_page(client.post("/my/bots/", bad))
    assert client.get("/my/bots/").status_code == 200


# -- live streams -----------------------------------------------------------------------------


@pytest.fixture
def asgi_server(transactional_db, redis_url, tmp_path) -> Iterator[AsgiServer]:
    """uvicorn behind one trusted proxy (so a test can speak for several addresses)."""
    server = AsgiServer(
        redis_url,
        tmp_path / "uvicorn.log",
        ESCOBA_LIVE_HEARTBEAT_S="1",
        ESCOBA_LIVE_MAX_STREAMS="20",
        ESCOBA_LIVE_MAX_STREAMS_PER_CLIENT="4",
        ESCOBA_TRUSTED_PROXIES="1",
    )
    yield server
    server.stop()


def _open(server: AsgiServer, path: str, address: str) -> http.client.HTTPConnection:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    connection.request("GET", path, headers={"X-Forwarded-For": address})
    return connection


@pytest.mark.integration
def test_a_crowd_of_streams_from_one_address_takes_only_its_share(asgi_server):
    """One address opening streams without end gets its 4, then 429s; the next visitor still
    gets a stream (the per-process cap alone let one address take every slot)."""
    owner = get_user_model().objects.create_user("owner", password="a-long-password-1")
    league = league_create(creator=owner, name="watched", bot_ids=_bots(2), rated=False)
    path = f"/live/league/{league.pk}/"
    crowd = [_open(asgi_server, path, "198.51.100.1") for _ in range(10)]
    try:
        answers = [connection.getresponse() for connection in crowd]
        statuses = [answer.status for answer in answers]
        assert statuses.count(200) == 4 and statuses.count(429) == 6, statuses
        refused = next(answer for answer in answers if answer.status == 429)
        assert refused.getheader("Retry-After") == "60"
        assert json.loads(refused.read()) == {
            "detail": TOO_MANY_FROM_CLIENT, "code": "live_too_many", "errors": {},
        }  # fmt: skip

        visitor = _open(asgi_server, path, "198.51.100.2")
        assert visitor.getresponse().status == 200
        visitor.close()
    finally:
        for connection in crowd:
            connection.close()
