"""The throttles' counters on a real Redis (tournaments/rate_limits.py): DRF's sliding window,
checked and counted by one script in one round trip per limit, shared by every process.

The other throttle tests run on the per-process test cache, where the throttles are DRF's own;
here the same limits hold on production's cache backend, and one anonymous read costs one Redis
command.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import redis
from django.core.cache.backends.locmem import LocMemCache
from django.test import RequestFactory
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient
from rest_framework.throttling import SimpleRateThrottle

from config.redis_cache import RedisCache
from tests.clients import client_for
from tournaments.api.throttling import ScopedRateThrottle, _anon_covers_user
from tournaments.rate_limits import AuthThrottle, WindowThrottle

ROOT = Path(__file__).resolve().parents[2]
READ = "/api/rankings/"


@pytest.fixture
def redis_cache(settings, redis_url) -> dict:
    """Production's cache backend on the private Redis, under a prefix of this test's own."""
    caches = {
        "default": {
            "BACKEND": "config.redis_cache.RedisCache",
            "LOCATION": redis_url,
            "KEY_PREFIX": f"throttle-test-{uuid.uuid4().hex}",
        }
    }
    settings.CACHES = caches
    return caches


@pytest.fixture
def clock(monkeypatch) -> list[float]:
    """The throttles' time, moved by the test: ``clock[0]`` seconds."""
    now = [1_800_000_000.0]
    monkeypatch.setattr(SimpleRateThrottle, "timer", staticmethod(lambda: now[0]))
    return now


def _monitored(caches: dict, act) -> list[list[str]]:
    """The commands on this test's cache keys clients sent Redis while ``act()`` ran (a
    script's own calls left out; so are other processes' commands, a worker's polling)."""
    url, prefix = caches["default"]["LOCATION"], caches["default"]["KEY_PREFIX"]
    marker, sent = f"end-{uuid.uuid4().hex}", []
    speaker = redis.Redis.from_url(url)
    speaker.ping()  # connected before: its handshake is not among the commands watched
    with redis.Redis.from_url(url).monitor() as monitor:
        act()
        speaker.echo(marker)
        while True:
            command = monitor.next_command()
            if marker in command["command"]:
                return sent
            if command["client_type"] != "lua" and prefix in command["command"]:
                sent.append(command["command"].split())


@pytest.mark.django_db
def test_the_121st_anonymous_read_in_a_minute_is_refused_and_told_when_to_come_back(
    redis_cache, clock
):
    client, answers, start = APIClient(), [], clock[0]
    for n in range(121):
        clock[0] = start + n / 4
        answers.append(client.get(READ))

    assert [answer.status_code for answer in answers[:120]] == [200] * 120
    refused = answers[120]
    assert refused.status_code == 429 and refused.json()["code"] == "throttled"
    # DRF's advice: the oldest of the 120 leaves the window 60 s after it came, 30 s from now.
    assert refused["Retry-After"] == "30"
    clock[0] = start + 59.9
    assert client.get(READ).status_code == 429
    clock[0] = start + 60  # the first read is 60 s old: out of the window
    assert client.get(READ).status_code == 200


@pytest.mark.django_db
def test_a_refused_read_is_not_counted(redis_cache, rates, clock):
    rates(anon="2/minute")
    client = APIClient()
    first = [client.get(READ).status_code for _ in range(2)]
    for _ in range(30):  # hammering while refused buys nothing and costs nothing
        clock[0] += 1
        assert client.get(READ).status_code == 429

    clock[0] += 30.5  # the first two are 60.5 s old: the window is empty again

    assert first == [200, 200]
    assert [client.get(READ).status_code for _ in range(3)] == [200, 200, 429]


@pytest.mark.django_db
def test_a_signed_in_user_counts_in_the_user_limit_only(redis_cache, rates, user, redis_url):
    rates(anon="1/minute", user="3/minute")
    signed_in = client_for(user)

    answers = [signed_in.get(READ).status_code for _ in range(4)]

    assert answers == [200, 200, 200, 429]
    assert APIClient().get(READ).status_code == 200, "the address's anonymous count is untouched"
    keys = redis.Redis.from_url(redis_url).keys(f"{redis_cache['default']['KEY_PREFIX']}:*")
    assert sorted(key.decode().split(":", 2)[2] for key in keys) == [
        "throttle:anon:127.0.0.1",
        f"throttle:user:{user.pk}",
    ]


@pytest.mark.django_db
def test_an_anonymous_read_is_one_redis_command(redis_cache):
    client = APIClient()
    client.get(READ, REMOTE_ADDR="192.0.2.1")  # the script is loaded once per Redis

    sent = _monitored(redis_cache, lambda: [client.get(READ) for _ in range(5)])

    assert [command[0] for command in sent] == ["EVALSHA"] * 5, sent
    assert all("throttle:anon:127.0.0.1" in command[3] for command in sent), sent


@pytest.mark.django_db
def test_a_signed_in_read_is_one_redis_command(redis_cache, user):
    client = client_for(user)
    client.get(READ)

    sent = _monitored(redis_cache, lambda: [client.get(READ) for _ in range(3)])

    assert [command[0] for command in sent] == ["EVALSHA"] * 3, sent
    assert all(f"throttle:user:{user.pk}" in command[3] for command in sent), sent


@pytest.mark.django_db
def test_a_stricter_user_limit_still_holds_anonymous_readers(redis_cache, rates):
    """``user`` at 3 an hour is stricter than ``anon`` at 5 a minute over an hour: an anonymous
    address is counted in both, and the user limit refuses the 4th read."""
    rates(anon="5/minute", user="3/hour")
    client, statuses = APIClient(), []

    sent = _monitored(
        redis_cache, lambda: statuses.extend(client.get(READ).status_code for _ in range(3))
    )

    assert statuses == [200] * 3
    assert [client.get(READ).status_code for _ in range(2)] == [429, 429]
    assert len(sent) == 6  # two limits, one command each
    assert "throttle:user:127.0.0.1" in " ".join(sum(sent, []))


@pytest.mark.parametrize(
    "anon, user, covered",
    [
        ("120/minute", "600/minute", True),
        ("600/minute", "600/minute", True),
        ("120/hour", "600/minute", True),
        ("700/minute", "600/minute", False),
        ("120/minute", "1000/hour", False),
        (None, "600/minute", False),
        ("120/minute", None, False),
    ],
)
def test_the_user_limit_leaves_anonymous_requests_only_to_a_stricter_anon_limit(
    anon, user, covered
):
    assert _anon_covers_user(anon, user) is covered


@pytest.mark.django_db
def test_every_password_door_shares_one_counter_on_redis(redis_cache, user, client):
    api = APIClient()
    for n in range(5):
        api.post("/api/auth/token/", {"username": "ana", "password": f"guess{n}"})
    for n in range(5):
        client.post("/accounts/login/", {"username": "ana", "password": f"guess{n}"})

    assert api.post("/api/auth/token/", {"username": "ana", "password": "x"}).status_code == 429
    assert client.post("/accounts/login/", {"username": "ana", "password": "x"}).status_code == 429


def test_a_scoped_view_counts_with_the_door_of_the_same_scope(redis_cache, rates):
    rates(auth="3/minute")
    request = RequestFactory().post("/", REMOTE_ADDR="198.51.100.9")
    request.user = None
    view = type("View", (), {"throttle_scope": "auth"})()

    assert AuthThrottle().allow_request(request, None)
    assert AuthThrottle().allow_request(request, None)
    assert ScopedRateThrottle().allow_request(request, view)
    assert not AuthThrottle().allow_request(request, None)
    assert not ScopedRateThrottle().allow_request(request, view)


@pytest.mark.django_db
def test_an_unreachable_redis_lets_reads_through_and_says_so(settings, caplog):
    from tests.fakebots.http_bots import refused_url

    nowhere = refused_url().replace("http://", "redis://") + "/0"
    settings.CACHES = {"default": {"BACKEND": "config.redis_cache.RedisCache", "LOCATION": nowhere}}
    client = APIClient()

    with caplog.at_level(logging.WARNING, logger="tournaments.rate_limits"):
        answers = [client.get(READ).status_code for _ in range(3)]

    assert answers == [200] * 3
    assert "throttle counters unreachable" in caplog.text


_ANOTHER_PROCESS = """
import json, sys
import django
django.setup()
from django.test import RequestFactory
from django.test.utils import override_settings
override_settings(CACHES=json.loads(sys.argv[1])).enable()
from rest_framework.throttling import SimpleRateThrottle
from tournaments.api.throttling import AnonRateThrottle
SimpleRateThrottle.THROTTLE_RATES["anon"] = "5/minute"
request = RequestFactory().get("/", REMOTE_ADDR="127.0.0.1")
request.user = None
print(json.dumps([AnonRateThrottle().allow_request(request, None) for _ in range(3)]))
"""


@pytest.mark.django_db
def test_two_processes_share_the_counters(redis_cache, rates):
    rates(anon="5/minute")
    other = subprocess.run(
        [sys.executable, "-c", _ANOTHER_PROCESS, json.dumps(redis_cache)],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    client = APIClient()

    assert json.loads(other.stdout.strip().splitlines()[-1]) == [True, True, True]
    assert [client.get(READ).status_code for _ in range(3)] == [200, 200, 429]


class _Window(WindowThrottle):
    scope = "window"
    rate = "1/minute"

    def get_cache_key(self, request, view) -> str:
        return self.cache_format % {"scope": self.scope, "ident": "x"}


class _DrfWindow(SimpleRateThrottle):
    rate = "1/minute"

    def get_cache_key(self, request, view) -> str:
        return "window"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rate=st.tuples(st.integers(0, 5), st.sampled_from(["minute", "hour", "day"])),
    gaps=st.lists(
        st.one_of(st.sampled_from([0.0, 0.5, 1.0]), st.floats(0, 1.5, allow_nan=False)),
        min_size=1,
        max_size=25,
    ),
)
def test_the_window_on_redis_decides_and_advises_as_drfs_own(redis_url, rate, gaps):
    """Any rate, any rhythm of requests (gaps in fractions of the period; bursts at one
    instant and a request exactly one period after another included): the Redis window
    allows, refuses and advises ``Retry-After`` exactly as DRF's pickled one on the
    per-process cache."""
    ours = RedisCache(redis_url, {"KEY_PREFIX": f"window-{uuid.uuid4().hex}"})
    theirs = LocMemCache(f"window-{uuid.uuid4().hex}", {})
    now = 1_800_000_000.0
    for gap in gaps:
        duration = {"minute": 60, "hour": 3600, "day": 86400}[rate[1]]
        now += gap * duration
        decisions = []
        for throttle_class, backend in ((_Window, ours), (_DrfWindow, theirs)):
            throttle = throttle_class()
            throttle.rate = f"{rate[0]}/{rate[1]}"
            throttle.num_requests, throttle.duration = throttle.parse_rate(throttle.rate)
            throttle.cache, throttle.timer = backend, (lambda at=now: at)
            allowed = throttle.allow_request(None, None)
            decisions.append((allowed, throttle.wait()))
        assert decisions[0] == pytest.approx(decisions[1])
