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
through (tournaments/api/throttling.py) rather than fail them, the last case here.
"""

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bots_sdk.server import serve_in_thread
from scripts.private_redis import PrivateRedis
from tests.reliability.helpers import (
    SlowGreedy,
    assert_played_and_rated_exactly_once,
    league_status,
    wait_for,
)
from tournaments.selectors import league_progress
from tournaments.services.leagues import league_create, league_start
from tournaments.services.matches import matches_sweep

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]


class RestartableRedis:
    def __init__(self, directory: Path) -> None:
        self.server = PrivateRedis(directory=directory).start()
        self.url = self.server.url

    def restart(self, keep_data: bool = True) -> None:
        """Shut down with a snapshot (``SHUTDOWN SAVE``), then start on the same port and data.

        ``keep_data=False``: killed, nothing kept, as a Redis without persistence loses its queue.
        """
        if keep_data:
            client = redis.Redis.from_url(self.url)
            try:
                client.shutdown(save=True)
            except redis.ConnectionError:
                pass  # the server closes the connection as it exits
        else:
            self.server.process.kill()
            (self.server.directory / "dump.rdb").unlink(missing_ok=True)
        self.server.process.wait(10)
        self.server = PrivateRedis(port=self.server.port, directory=self.server.directory).start()

    def stop(self) -> None:
        self.server.stop()


@pytest.fixture
def restartable_redis() -> Iterator[RestartableRedis]:
    with tempfile.TemporaryDirectory(prefix="escoba-redis-restart-") as directory:
        server = RestartableRedis(Path(directory))
        yield server
        server.stop()


@pytest.fixture
def redis_url(restartable_redis: RestartableRedis) -> str:
    """Overrides the session's Redis for this module: the worker fixtures use this one."""
    return restartable_redis.url


@pytest.mark.parametrize("keep_data", [True, False], ids=["snapshot", "data-lost"])
def test_league_survives_a_redis_restart(
    celery_worker_factory, restartable_redis, user, make_bot, keep_data
):
    slow = SlowGreedy(0.004)
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
        total = league.games.count()

        wait_for(lambda: slow.moves > 20, 60, "games in flight")
        assert league_progress(league)["done"] < total
        restartable_redis.restart(keep_data)

        def finished() -> bool:
            if league_status(league.id) == "finished":
                return True
            if not keep_data:  # what beat's sweep (leagues.sweep) does, with a short quiet time
                matches_sweep(idle_s=2)
            return False

        wait_for(finished, 120, "the league to finish")

    assert_played_and_rated_exactly_once(league)


def test_api_reads_keep_working_while_redis_is_down(settings, api_client, db):
    from tests.registry.servers import refused_url

    nowhere = refused_url().replace("http://", "redis://") + "/0"
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": nowhere}
    }
    api_client.raise_request_exception = False
    assert api_client.get("/api/rankings/").status_code == 200
