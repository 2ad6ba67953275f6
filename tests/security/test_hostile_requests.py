"""Hostile requests get the API's one error body and the right status, never a 500 or a page of
HTML: forged forwarding headers, deeply nested JSON, huge bodies, wrong content types.

Throttles key on the real client address. With no trusted proxy (``ESCOBA_TRUSTED_PROXIES``
unset, DRF's ``NUM_PROXIES`` 0) ``X-Forwarded-For`` is ignored; with N trusted proxies, the
address the N-th proxy from us saw counts, whatever a client wrote before it.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from tests.conftest import USER_PASSWORD
from tournaments import messages
from tournaments.api.parsers import MAX_JSON_DEPTH, json_depth_exceeds
from tournaments.models import Bot, League

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
DEEP_ARRAY = b"[" * 1000 + b"]" * 1000
DEEP_OBJECT = b'{"a": ' * 1000 + b"1" + b"}" * 1000
DEEP_FIELD = b'{"username": "x", "password": ' + b"[" * 1000 + b"]" * 1000 + b"}"
VERY_DEEP = b"[" * 100_000
TEN_MB = b'{"username": "' + b"x" * (10 * 1024 * 1024) + b'"}'


def forged(n: int) -> str:
    return f"203.0.{n // 256}.{n % 256}"


def assert_error_body(response, status: int, code: str) -> dict:
    assert response.status_code == status, (response.status_code, response.content[:300])
    assert response["Content-Type"].startswith("application/json"), response["Content-Type"]
    body = response.json()
    assert set(body) == {"detail", "code", "errors"} and body["code"] == code, body
    return body


# -- forwarding headers -----------------------------------------------------------------------


def test_forged_forwarded_for_does_not_reset_the_password_throttle(user):
    client = APIClient()
    guesses = [
        client.post("/api/auth/token/", {"username": "ana", "password": f"guess{n}"}).status_code
        for n in range(10)
    ]
    assert set(guesses) == {400}
    forged_guesses = [
        client.post(
            "/api/auth/token/",
            {"username": "ana", "password": f"guess{n}"},
            HTTP_X_FORWARDED_FOR=forged(n),
        ).status_code
        for n in range(40)
    ]
    assert set(forged_guesses) == {429}
    right = client.post(
        "/api/auth/token/",
        {"username": "ana", "password": USER_PASSWORD},
        HTTP_X_FORWARDED_FOR=forged(999),
    )
    assert_error_body(right, 429, "throttled")


def test_forged_forwarded_for_does_not_lift_the_anonymous_limit():
    client = APIClient()
    statuses = [
        client.get("/api/rankings/", HTTP_X_FORWARDED_FOR=forged(n)).status_code for n in range(150)
    ]
    assert statuses.count(200) == 120
    assert set(statuses[120:]) == {429}


def test_behind_a_trusted_proxy_the_address_it_saw_counts(settings, user):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    client = APIClient()

    def guess(n: int, real: str) -> int:
        # The proxy appends the address it saw; whatever comes before is the client's.
        header = f"{forged(n)}, {real}"
        body = {"username": "ana", "password": f"guess{n}"}
        return client.post("/api/auth/token/", body, HTTP_X_FORWARDED_FOR=header).status_code

    assert {guess(n, "198.51.100.7") for n in range(10)} == {400}
    assert {guess(n, "198.51.100.7") for n in range(10, 30)} == {429}
    assert guess(30, "198.51.100.8") == 400, "another client behind the proxy has its own count"


@pytest.mark.parametrize(
    ("environment", "expected"), [({}, 0), ({"ESCOBA_TRUSTED_PROXIES": "2"}, 2)]
)
def test_the_trusted_proxy_count_comes_from_the_environment(environment, expected):
    script = (
        "import django; from django.conf import settings; django.setup(); "
        "print(settings.REST_FRAMEWORK['NUM_PROXIES'])"
    )
    base = {k: v for k, v in os.environ.items() if k != "ESCOBA_TRUSTED_PROXIES"}
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=base | {"DJANGO_SETTINGS_MODULE": "config.settings.local"} | environment,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == str(expected)


# -- JSON bodies --------------------------------------------------------------------------------


@pytest.fixture
def routes(user, user_client, make_bot) -> list[tuple[APIClient, str, str]]:
    """(client, method, path) of every JSON write, the anonymous ones included."""
    bot = make_bot("greedy", owner=user)
    league = League.objects.create(
        name="open", creator=user, ruleset={}, pool="classic/2p", players=2, seed=1
    )
    anonymous = APIClient()
    return [
        (anonymous, "POST", "/api/auth/register/"),
        (anonymous, "POST", "/api/auth/token/"),
        (user_client, "POST", "/api/bots/"),
        (user_client, "PATCH", f"/api/bots/{bot.id}/"),
        (user_client, "POST", "/api/leagues/"),
        (user_client, "POST", f"/api/leagues/{league.id}/entries/"),
    ]


@pytest.mark.parametrize(
    "raw",
    [DEEP_ARRAY, DEEP_OBJECT, DEEP_FIELD, VERY_DEEP],
    ids=["array", "object", "field", "100k"],
)
def test_deeply_nested_json_is_a_400_in_our_words(routes, raw):
    for client, method, path in routes:
        response = client.generic(method, path, raw, content_type="application/json")
        body = assert_error_body(response, 400, "parse_error")
        assert body["detail"] == messages.JSON_TOO_DEEP.format(depth=MAX_JSON_DEPTH), path
    assert Bot.objects.count() == 1
    assert League.objects.count() == 1


def nested(depth: int) -> dict:
    """A registration body nested exactly ``depth`` levels deep (the object is the first)."""
    value: object = 1
    for _ in range(depth - 1):
        value = [value]
    return {"username": f"deep{depth}", "password": USER_PASSWORD, "extra": value}


def test_json_is_read_up_to_the_depth_limit_and_refused_past_it():
    assert not json_depth_exceeds(nested(MAX_JSON_DEPTH), MAX_JSON_DEPTH)
    assert json_depth_exceeds(nested(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)
    client = APIClient()
    deepest = client.post("/api/auth/register/", nested(MAX_JSON_DEPTH), format="json")
    assert deepest.status_code == 201, deepest.content
    too_deep = client.post("/api/auth/register/", nested(MAX_JSON_DEPTH + 1), format="json")
    assert_error_body(too_deep, 400, "parse_error")


def test_invalid_json_says_where_not_what_the_library_said():
    response = APIClient().generic(
        "POST", "/api/auth/register/", b'{"username": "ana",\n "password": }', "application/json"
    )
    body = assert_error_body(response, 400, "parse_error")
    assert body["detail"] == messages.JSON_INVALID.format(line=2, column=14)


def test_a_ten_megabyte_body_is_a_413_with_our_body(user_client):
    for client, path in ((APIClient(), "/api/auth/register/"), (user_client, "/api/bots/")):
        response = client.generic("POST", path, TEN_MB, content_type="application/json")
        body = assert_error_body(response, 413, "too_large")
        assert body["detail"] == messages.BODY_TOO_LARGE.format(limit=2621440)


@pytest.mark.parametrize("content_type", ["text/plain", "application/xml", "application/x-yaml"])
def test_a_body_we_do_not_read_is_a_415_in_our_words(user_client, content_type):
    for client, path in ((APIClient(), "/api/auth/register/"), (user_client, "/api/leagues/")):
        response = client.generic("POST", path, b"name: x", content_type=content_type)
        body = assert_error_body(response, 415, "unsupported_media_type")
        assert body["detail"] == messages.UNSUPPORTED_MEDIA_TYPE.format(media_type=content_type)


def test_a_bad_request_outside_any_view_gets_our_body_under_the_api(client):
    response = client.get("/api/rankings/", HTTP_HOST="evil.example")
    assert_error_body(response, 400, "bad_request")
    page = client.get("/", HTTP_HOST="evil.example")
    assert page.status_code == 400 and page["Content-Type"].startswith("text/html")


PROBE = """
import json, django
django.setup()
from django.test import Client
client = Client(raise_request_exception=False)
answers = {}
for name, raw in (("deep", b"[" * 1000 + b"]" * 1000),
                  ("big", b'{"username": "' + b"x" * (10 * 1024 * 1024) + b'"}')):
    response = client.post("/api/auth/register/", raw, content_type="application/json")
    content = response.content[:300].decode()
    answers[name] = [response.status_code, response["Content-Type"], content]
print(json.dumps(answers))
"""


@pytest.mark.parametrize("module", ["config.settings.local", "config.settings.production"])
def test_hostile_bodies_under_local_and_production_settings(module, tmp_path):
    """DEBUG on (local) or off (production): the same JSON answers, never Django's pages."""
    names = {"DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "DATABASE_URL", "REDIS_URL"}
    environment = {k: v for k, v in os.environ.items() if k not in names} | {
        "DJANGO_SETTINGS_MODULE": module,
        "SECRET_KEY": "probe-" + "0123456789abcdefghijklmnopqrstuvwxyz" * 2,
        "ESCOBA_SECRETS_KEY": "jSS0JCi7ZMV_JmrK_ztJ2BCsnmOQEbW22kfEvb24uNQ=",
        "ALLOWED_HOSTS": "testserver",
        "SECURE_SSL_REDIRECT": "false",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'probe.sqlite3'}",
        # Nothing listens there: the throttles let requests through, as when Redis is down.
        "REDIS_URL": "redis://127.0.0.1:1/0",
    }
    result = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=environment,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    answers = json.loads(result.stdout.strip().splitlines()[-1])
    for name, (status, content_type, content) in answers.items():
        assert content_type.startswith("application/json"), (name, content_type, content)
        assert status == {"deep": 400, "big": 413}[name], (name, status, content)
        assert json.loads(content)["code"] == {"deep": "parse_error", "big": "too_large"}[name]
