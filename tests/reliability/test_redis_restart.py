"""Redis restarted mid-league: the league completes and every game is played and rated once.

Redis is the broker (the queue of matches), the result store and the cache. This module runs on
a Redis of its own so it can restart it. Redis here writes a snapshot when it shuts down and
loads it when it starts, as a Redis with persistence does across a restart: queued matches, and
those delivered but not yet acknowledged, survive; the workers reconnect by themselves.

A Redis that loses its data (docker-compose.yml keeps it in an append-only file, but a crash
can lose the last second and a volume can be lost) also loses the queued matches, and nothing
enqueues them again while the workers keep running (a worker recovers matches only when it
starts): beat's sweep (``leagues.sweep``) re-sends the pending matches of running leagues that
went quiet while the queue is empty; the test does what the sweep does, as no beat runs here.

Redis also holds the API's throttle counters; while it is unreachable the throttles let requests
through (tournaments/api/throttling.py) rather than fail them.

Starting a league while Redis is down answers 503 at once and changes nothing. Redis killed
again and again mid-league: tests/reliability/test_redis_kills.py.
"""

import socket
import time

import pytest
import redis
from kombu import Connection, Exchange, Queue

from bots_sdk.server import serve_in_thread
from config.redis_transport import Transport
from tests.fakebots.players import Slow
from tests.reliability.helpers import (
    assert_played_and_rated_exactly_once,
    full_speed,
    league_status,
    redis_url,
    restartable_redis,
    scheduled_games,
    wait_for,
)
from tournaments import messages
from tournaments.models import League, Match
from tournaments.selectors.leagues import league_progress
from tournaments.services.league_creation import league_create
from tournaments.services.league_schedules import league_start, leagues_schedule_sweep
from tournaments.services.match_leases import matches_sweep

__all__ = ["redis_url", "restartable_redis"]  # fixtures: this module's own Redis

pytestmark = [pytest.mark.integration, pytest.mark.timeout(400)]


@pytest.mark.parametrize("keep_data", [True, False], ids=["snapshot", "data-lost"])
def test_league_survives_a_redis_restart(
    celery_worker_factory, restartable_redis, user, make_bot, keep_data
):
    slow = Slow(0.004)
    with serve_in_thread(slow, name="slow") as server:
        bots = [make_bot("greedy"), make_bot("random"), make_bot("expert"), make_bot("random7")]
        slow_bot = make_bot("greedy", name="redis-slow")
        slow_bot.url = server.url
        slow_bot.save(update_fields=["url"])
        league = league_create(
            creator=user, name="redis", bot_ids=[b.id for b in [*bots, slow_bot]], rated=True
        )
        celery_worker_factory(pool="threads", concurrency=2)
        league_start(league_id=league.id, user=user)
        total = scheduled_games(league)

        wait_for(lambda: slow.moves > 20, 60, "games in flight")
        assert league_progress(league)["done"] < total
        restartable_redis.restart(keep_data)
        full_speed([slow])

        def finished() -> bool:
            if league_status(league.id) == "finished":
                return True
            if not keep_data:  # what beat's sweep (leagues.sweep) does, with a short quiet time
                matches_sweep(idle_s=2)
            return False

        wait_for(finished, 120, "the league to finish")

    assert_played_and_rated_exactly_once(league)


def test_api_reads_keep_working_while_redis_is_down(settings, api_client, db):
    from tests.fakebots.http_bots import refused_url

    nowhere = refused_url().replace("http://", "redis://") + "/0"
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": nowhere}
    }
    api_client.raise_request_exception = False
    assert api_client.get("/api/rankings/").status_code == 200


def test_a_connection_redis_dropped_under_a_busy_consumer_closes_cleanly(restartable_redis):
    """What Celery's consumer does when the broker connection breaks (``collect()``, then
    ``close()``), with unacknowledged messages and two channels waiting on BRPOP. kombu 5.7.0's
    own transport raises ``AttributeError: 'NoneType' object has no attribute 'hostname'`` from
    the ``close()``, which stops the worker; ours closes, and a late use of the closed channel is
    a connection error, which Celery recovers from."""
    connection = Connection(restartable_redis.url, transport=Transport)
    tasks, control = (Queue(name, Exchange(name), name) for name in ("tasks", "control"))
    with connection.Producer() as producer:
        producer.publish({"n": 1}, exchange=tasks.exchange, routing_key="tasks", declare=[tasks])
        producer.publish({}, exchange=control.exchange, routing_key="control", declare=[control])
    received = []
    connection.Consumer(tasks, callbacks=[lambda body, message: received.append(message)]).consume()
    connection.drain_events(timeout=5)
    other = connection.channel()
    connection.Consumer(control, channel=other, callbacks=[lambda *_: None]).consume()
    with pytest.raises(socket.timeout):
        for _ in range(3):  # both channels end up with a BRPOP in flight
            connection.drain_events(timeout=0.2)
    channel = connection.default_channel
    assert len(channel.qos._delivered) == 1 and channel._in_poll and other._in_poll

    restartable_redis.kill()
    connection.collect()
    connection.close()

    assert channel.closed and other.closed
    with pytest.raises(redis.exceptions.ConnectionError):
        channel._connparams()
    with pytest.raises(tuple(connection.connection_errors)):
        received[0].ack()
    restartable_redis.start()


def test_the_worker_uses_the_fixed_transport():
    from config.celery_app import app

    assert app.conf.broker_transport == "config.redis_transport:Transport"
    with app.connection_for_write() as connection:
        assert isinstance(connection.transport, Transport)


def test_league_start_while_redis_is_down_is_a_quick_503_then_works_once_it_is_back(
    celery_worker_factory, restartable_redis, user, user_client, make_bot
):
    league = league_create(
        creator=user,
        name="start-down",
        bot_ids=[make_bot("greedy").id, make_bot("random").id],
        rated=True,
    )
    restartable_redis.kill()
    started = time.monotonic()
    response = user_client.post(f"/api/leagues/{league.id}/start/")
    elapsed = time.monotonic() - started

    assert response.status_code == 503, response.content
    assert response.json() == {
        "detail": messages.QUEUE_UNAVAILABLE, "code": "queue_unavailable", "errors": {},
    }  # fmt: skip
    assert response["Retry-After"] == "30"
    assert elapsed < 5, f"{elapsed:.1f} s to say the queue is down"
    league.refresh_from_db()
    assert league.status == League.Status.OPEN and not Match.objects.filter(league=league).exists()

    restartable_redis.start()
    assert user_client.post(f"/api/leagues/{league.id}/start/").status_code == 202
    celery_worker_factory(pool="threads", concurrency=2)
    wait_for(lambda: league_status(league.id) == "finished", 120, "the league to finish")
    assert_played_and_rated_exactly_once(league)


def test_a_queue_lost_between_the_check_and_the_send_is_the_sweeps(
    celery_worker_factory, restartable_redis, user, user_client, make_bot, monkeypatch
):
    """Started (202) with its schedule task unsent: the beat sweep sends it once Redis is back."""
    league = league_create(
        creator=user,
        name="lost-send",
        bot_ids=[make_bot("greedy").id, make_bot("random").id],
        rated=True,
    )
    monkeypatch.setattr("tournaments.queueing.broker_reachable", lambda: True)
    restartable_redis.kill()
    assert user_client.post(f"/api/leagues/{league.id}/start/").status_code == 202
    assert league_status(league.id) == "running"

    restartable_redis.start()
    celery_worker_factory(pool="threads", concurrency=2)
    # The start's leagues.schedule was lost with the queue: the sweep sends it again.
    wait_for(lambda: leagues_schedule_sweep(idle_s=0), 30, "the sweep to send the schedule")
    wait_for(lambda: league_status(league.id) == "finished", 120, "the league to finish")
    assert_played_and_rated_exactly_once(league)
