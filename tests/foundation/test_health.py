"""GET /api/health/ without a broker (unit) and with real Redis and worker (integration)."""

import time

import pytest

from config.celery_app import app
from scripts.private_redis import free_port


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
def test_health_is_never_throttled(client, unreachable_broker, monkeypatch):
    from rest_framework.throttling import AnonRateThrottle

    monkeypatch.setitem(AnonRateThrottle.THROTTLE_RATES, "anon", "1/minute")

    health = {client.get("/api/health/").status_code for _ in range(3)}
    schema = [client.get("/api/schema/").status_code for _ in range(2)]

    assert health == {200}
    assert schema == [200, 429]


@pytest.mark.integration
def test_health_sees_redis_and_the_worker(client, celery_worker_process):
    response = client.get("/api/health/")

    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok", body
    assert body["checks"]["worker"]["workers"] == [celery_worker_process.hostname]
