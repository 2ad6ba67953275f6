"""Deployment: production refuses published and short secret keys, trusts proxy headers only
when a setting names the proxy, and the read cache never serves one host's or scheme's answer
to another (a poisoned pagination link)."""

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from rest_framework.test import APIClient

from benchmarks.pool_data import _bots
from config.secret_key import (
    DEV_SECRETS_KEY,
    KNOWN_PLACEHOLDER_KEYS,
    SECRET_KEY_PLACEHOLDER,
    SECRET_KEY_TOO_SHORT,
    SECRETS_KEY_MALFORMED,
    SECRETS_KEY_PUBLISHED,
)
from tournaments.api.pagination import KeysetPagination
from tournaments.services.league_creation import league_create

ROOT = Path(__file__).resolve().parents[2]
GOOD_KEY = "k" * 30 + "0123456789abcdefghijklmnopqrstuvwxyz"
# A fixed key, not a fresh one: test ids must be the same in every xdist worker's collection.
SECRETS_KEY = base64.urlsafe_b64encode(bytes(range(32))).decode()
NAMES = {"DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "DATABASE_URL", "ESCOBA_TRUSTED_PROXIES"}
NAMES |= {"ESCOBA_SECRETS_KEY"}


def production(**environment: str) -> subprocess.CompletedProcess:
    """Load the production settings in a clean interpreter; print what the tests look at."""
    script = (
        "import json, django; from django.conf import settings; django.setup(); "
        "print(json.dumps({'proxy_ssl': settings.SECURE_PROXY_SSL_HEADER, "
        "'num_proxies': settings.REST_FRAMEWORK['NUM_PROXIES']}))"
    )
    base = {key: value for key, value in os.environ.items() if key not in NAMES}
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=base
        | {
            "DJANGO_SETTINGS_MODULE": "config.settings.production",
            "ESCOBA_SECRETS_KEY": SECRETS_KEY,
        }
        | environment,
        capture_output=True,
        text=True,
        timeout=60,
    )


# The key docker-compose.yml used to fall back on: refused if someone still sets it.
COMPOSE_PLACEHOLDER = "change-me-compose-only"


@pytest.mark.parametrize(
    "key",
    [*sorted(KNOWN_PLACEHOLDER_KEYS), "django-insecure-" + "x" * 50],
)
def test_production_refuses_every_published_key(key):
    result = production(SECRET_KEY=key)

    assert result.returncode != 0
    assert SECRET_KEY_PLACEHOLDER in result.stderr


def test_the_compose_placeholder_is_among_the_refused_keys():
    assert COMPOSE_PLACEHOLDER in KNOWN_PLACEHOLDER_KEYS
    compose = (ROOT / "docker-compose.yml").read_text()
    assert "${SECRET_KEY:?" in compose, "compose must not fall back on a published key"


@pytest.mark.parametrize("key", ["s3cret", "x" * 49, "ab" * 40])
def test_production_refuses_short_or_repetitive_keys(key):
    result = production(SECRET_KEY=key)

    assert result.returncode != 0
    assert SECRET_KEY_TOO_SHORT in result.stderr


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ("", "Set the environment variable ESCOBA_SECRETS_KEY."),
        (DEV_SECRETS_KEY, SECRETS_KEY_PUBLISHED),
        (f"{SECRETS_KEY},{DEV_SECRETS_KEY}", SECRETS_KEY_PUBLISHED),
        ("not-a-fernet-key", SECRETS_KEY_MALFORMED),
        ("c2hvcnQ=", SECRETS_KEY_MALFORMED),
    ],
)
def test_production_refuses_a_missing_published_or_malformed_secrets_key(keys, message):
    result = production(SECRET_KEY=GOOD_KEY, ESCOBA_SECRETS_KEY=keys)

    assert result.returncode != 0
    assert message in result.stderr


def test_without_a_named_proxy_no_forwarded_header_is_trusted():
    result = production(SECRET_KEY=GOOD_KEY)

    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout.strip().splitlines()[-1])
    assert loaded == {"proxy_ssl": None, "num_proxies": 0}


def test_a_named_proxy_is_trusted_for_the_scheme_and_the_address():
    result = production(SECRET_KEY=GOOD_KEY, ESCOBA_TRUSTED_PROXIES="1")

    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout.strip().splitlines()[-1])
    assert loaded == {"proxy_ssl": ["HTTP_X_FORWARDED_PROTO", "https"], "num_proxies": 1}


# -- the read cache ---------------------------------------------------------------------------


@pytest.fixture
def two_pages(db, settings, monkeypatch):
    """Two leagues, one a page, with cached reads on (the test settings turn them off)."""
    settings.ESCOBA_READ_CACHE_S = 300
    cache.clear()
    monkeypatch.setattr(KeysetPagination, "page_size", 1)  # the leagues list pages by cursor
    owner = get_user_model().objects.create_user("owner", password="a-long-password-1")
    bots = _bots(2)
    for name in ("first", "second"):
        league_create(creator=owner, name=name, bot_ids=bots, rated=False)
    yield
    cache.clear()


def _next_link(**headers: str) -> str:
    response = APIClient().get("/api/leagues/", **headers)
    assert response.status_code == 200
    return response.json()["next"]


def test_a_request_for_another_host_does_not_poison_the_cached_links(two_pages):
    assert _next_link(HTTP_HOST="localhost").startswith("http://localhost/")

    assert _next_link(HTTP_HOST="testserver").startswith("http://testserver/")
    assert _next_link(HTTP_HOST="localhost").startswith("http://localhost/")


def test_a_forged_scheme_does_not_poison_the_cached_links(two_pages, settings):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

    assert _next_link(HTTP_X_FORWARDED_PROTO="https").startswith("https://testserver")
    assert _next_link().startswith("http://testserver/")
