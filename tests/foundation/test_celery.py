"""The Celery app's configuration, and tasks through a real redis-server and worker."""

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.contrib.auth import get_user_model

from config.celery_app import app
from tests.conftest import celery_app_on_broker
from tournaments import queueing
from tournaments.diagnostics import ping
from tournaments.tasks import play_match

ROOT = Path(__file__).resolve().parents[2]


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
    # The test process is no task, whatever an earlier test in this xdist worker left in
    # Celery's "inside a task" flag (it then refuses a plain get()).
    assert result.get(timeout=30, disable_sync_subtasks=False)["found"] is True


def queue_of(task_name: str) -> str:
    return app.amqp.router.route({}, task_name)["queue"].name


def test_games_and_maintenance_have_their_own_queues():
    games = [queueing.PLAY_MATCH, queueing.RECOVER_MATCHES, queueing.SWEEP_MATCHES]
    maintenance = [
        queueing.TICK_LADDER,
        queueing.FILL_LADDER,
        queueing.CHECK_NEWCOMER,
        queueing.CHECK_DUE_BOTS,
        queueing.CHECK_BOT,
    ]
    future = ["ratings.fit", "diagnostics.ping"]  # rating fits, and anything not routed

    assert {queue_of(name) for name in games} == {queueing.GAMES_QUEUE}
    assert {queue_of(name) for name in maintenance + future} == {queueing.MAINTENANCE_QUEUE}
    baselines = [queueing.VALUE_GAME, queueing.CORRECT_SET, queueing.SWEEP_BASELINES]
    assert {queue_of(name) for name in baselines} == {queueing.BASELINES_QUEUE}
    assert {queue.name for queue in app.conf.task_queues} == {
        "games",
        "leagues",
        "challenges",
        "maintenance",
        "baselines",
    }
    assert set(games + maintenance + baselines) <= set(app.tasks)


def test_play_match_time_limits_follow_the_match_time_limit(settings):
    settings.ESCOBA_MATCH_TIME_LIMIT_S = 1000
    assert (play_match.soft_time_limit, play_match.time_limit) == (1030, 1060)

    settings.ESCOBA_MATCH_TIME_LIMIT_S = 20
    assert (play_match.soft_time_limit, play_match.time_limit) == (50, 80)
    assert queueing.play_match_limits() == (50, 80)


def test_a_longer_match_limit_set_in_the_environment_raises_the_task_limits_and_redelivery():
    """The way an operator changes it: a new process reads the environment."""
    script = (
        "import json, django; django.setup();"
        "from config.celery_app import app; from tournaments.tasks import play_match;"
        "print(json.dumps([play_match.soft_time_limit, play_match.time_limit,"
        " app.conf.broker_transport_options['visibility_timeout']]))"
    )
    env = {**os.environ, "ESCOBA_MATCH_TIME_LIMIT_S": "3600"}
    env.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    output = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True
    )

    soft, hard, visibility = json.loads(output.stdout.strip().splitlines()[-1])
    assert (soft, hard) == (3630, 3660)
    assert visibility > hard  # Redis must not hand the match to a second worker mid-run


def test_redelivery_waits_longer_than_a_match_may_take():
    visibility = app.conf.broker_transport_options["visibility_timeout"]
    assert visibility > play_match.time_limit > play_match.soft_time_limit


@pytest.mark.integration
def test_messages_go_to_their_queue_and_a_match_carries_the_limits_of_now(redis_url, settings, db):
    settings.ESCOBA_MATCH_TIME_LIMIT_S = 900
    client = redis.Redis.from_url(redis_url)
    client.flushall()

    with celery_app_on_broker(redis_url):
        queueing.matches_enqueue([41, 42])
        queueing.bot_checks_enqueue([7])

    games = [json.loads(raw)["headers"] for raw in client.lrange("games", 0, -1)]
    maintenance = [json.loads(raw)["headers"] for raw in client.lrange("maintenance", 0, -1)]
    client.close()
    assert [(h["task"], h["argsrepr"]) for h in games] == [
        ("leagues.play_match", "(42,)"),  # Redis lists are read newest first
        ("leagues.play_match", "(41,)"),
    ]
    assert all(h["timelimit"] == [960, 930] for h in games)
    assert [(h["task"], h["argsrepr"]) for h in maintenance] == [("bots.check_one", "(7,)")]


def test_a_started_worker_freezes_what_it_loaded_and_collects_less_often(settings):
    from celery.signals import worker_ready

    from config.celery_app import settle_garbage_collector

    settings.ESCOBA_WORKER_GC_THRESHOLD = (12_345, 67, 8)

    assert settle_garbage_collector in worker_ready._live_receivers(None)
    threshold = gc.get_threshold()
    loaded: list[object] = []  # stands for everything a worker has loaded when it is ready
    assert any(o is loaded for o in gc.get_objects())
    try:
        settle_garbage_collector(sender=None)
        assert gc.get_threshold() == (12_345, 67, 8)
        assert not any(o is loaded for o in gc.get_objects())  # frozen: no collection walks it
        made_later: list[object] = []
        made_later.append(made_later)  # a cycle made while playing is still collected
        assert any(o is made_later for o in gc.get_objects())
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)
