"""The Celery app's configuration, and tasks through a real redis-server and worker."""

import pytest
import redis
from django.conf import settings
from django.contrib.auth import get_user_model

from config.celery_app import app
from tournaments.diagnostics import ping


def test_celery_reads_django_settings_and_speaks_json_only():
    assert app.conf.task_serializer == "json"
    assert app.conf.result_serializer == "json"
    assert app.conf.accept_content == ["json"]
    assert app.conf.broker_url == settings.REDIS_URL


def test_time_limits_and_redelivery_are_consistent():
    assert 0 < app.conf.task_soft_time_limit < app.conf.task_time_limit
    assert app.conf.broker_transport_options["visibility_timeout"] > app.conf.task_time_limit
    assert app.conf.task_reject_on_worker_lost is True
    assert app.conf.worker_prefetch_multiplier == 1


def test_ping_is_registered_and_acks_late():
    registered = app.tasks["diagnostics.ping"]
    assert registered.name == ping.name
    assert registered.acks_late is True


@pytest.mark.django_db
def test_unit_tests_run_tasks_eagerly():
    get_user_model().objects.create_user(username="rosa")

    result = ping.delay("rosa")

    assert result.get(timeout=1) == {
        "pong": True,
        "host": result.result["host"],
        "users": 1,
        "found": True,
    }


@pytest.mark.integration
def test_redis_url_fixture_serves_a_private_redis(redis_url):
    client = redis.Redis.from_url(redis_url)
    assert redis_url.startswith("redis://127.0.0.1:")
    assert client.ping() is True
    client.close()


@pytest.mark.integration
def test_a_task_runs_in_the_worker_and_sees_committed_rows(celery_worker_process):
    get_user_model().objects.create_user(username="worker-sees-me")

    result = ping.delay("worker-sees-me")

    assert result.get(timeout=30) == {
        "pong": True,
        "host": result.result["host"],
        "users": 1,
        "found": True,
    }
    assert "diagnostics.ping" in celery_worker_process.log_text()


@pytest.mark.integration
def test_a_killed_worker_can_be_restarted(celery_worker_process):
    first_pid = celery_worker_process.process.pid

    celery_worker_process.kill()
    assert not celery_worker_process.is_alive
    result = ping.delay()
    celery_worker_process.restart()

    assert celery_worker_process.process.pid != first_pid
    assert result.get(timeout=30)["pong"] is True


@pytest.mark.postgres
@pytest.mark.integration
def test_the_worker_shares_the_postgres_test_database(celery_worker_process):
    from django.db import connection

    get_user_model().objects.create_user(username="on-postgres")

    result = ping.delay("on-postgres")

    assert connection.vendor == "postgresql"
    assert result.get(timeout=30)["found"] is True
