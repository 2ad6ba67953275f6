"""GET /api/health/ without a broker (unit) and with real Redis and worker (integration)."""

import time

import pytest

from config.celery_app import app
from scripts.private_redis import free_port


@pytest.fixture(autouse=True)
def fresh_looks(settings):
    """Every request looks again, unless a test turns the process's cached look on."""
    settings.ESCOBA_HEALTH_CACHE_S = 0


@pytest.fixture
def unreachable_broker():
    saved = app.conf.broker_url
    app.conf.broker_url = f"redis://127.0.0.1:{free_port()}/0"
    yield
    app.conf.broker_url = saved


@pytest.mark.django_db
def test_health_reports_a_missing_redis_quickly(client, unreachable_broker):
    started = time.monotonic()
    response = client.get("/api/health/")

    assert time.monotonic() - started < 3
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "degraded"
    assert body["checks"]["database"]["ok"] is True
    assert body["checks"]["redis"] == {"ok": False, "error": "ConnectionError"}
    assert body["checks"]["worker"]["ok"] is False


@pytest.mark.django_db
def test_health_is_503_when_the_database_is_down(client, unreachable_broker, monkeypatch):
    from tournaments.api import health

    monkeypatch.setattr(
        health, "check_database", lambda: {"ok": False, "error": "OperationalError"}
    )

    response = client.get("/api/health/")

    assert response.status_code == 503
    assert response.json()["status"] == "degraded"


@pytest.mark.django_db
def test_health_has_its_own_throttle_not_the_anonymous_one(client, unreachable_broker, monkeypatch):
    from rest_framework.throttling import AnonRateThrottle

    monkeypatch.setitem(AnonRateThrottle.THROTTLE_RATES, "anon", "1/minute")
    monkeypatch.setitem(AnonRateThrottle.THROTTLE_RATES, "health", "3/minute")

    health = [client.get("/api/health/") for _ in range(4)]
    schema = [client.get("/api/schema/").status_code for _ in range(2)]

    assert [response.status_code for response in health] == [200, 200, 200, 429]
    assert health[-1]["Retry-After"]
    assert health[-1].json()["code"] == "throttled"
    assert schema == [200, 429]


@pytest.mark.django_db
def test_a_burst_of_probes_costs_one_look(client, unreachable_broker, monkeypatch, settings):
    """130 probes in a row (as tried against a running service): one look at Redis and the
    workers, not 130 broadcast pings; the answers are the same."""
    from tournaments.api import health

    settings.ESCOBA_HEALTH_CACHE_S = 60
    monkeypatch.setattr(health.last_look, "taken", -float("inf"))
    monkeypatch.setitem(health.HealthThrottle.THROTTLE_RATES, "health", "1000/minute")
    looks = []
    real_look = health.check_redis
    monkeypatch.setattr(health, "check_redis", lambda: looks.append(1) or real_look())

    answers = [client.get("/api/health/") for _ in range(130)]

    assert len(looks) == 1
    assert {response.status_code for response in answers} == {200}
    assert all(response.json() == answers[0].json() for response in answers)


@pytest.mark.integration
def test_health_sees_redis_and_the_worker(client, celery_worker_process):
    response = client.get("/api/health/")

    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok", body
    assert body["checks"]["worker"]["workers"] == [celery_worker_process.hostname]
