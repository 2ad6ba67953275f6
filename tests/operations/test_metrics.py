"""``/metrics`` (issue 37): the Prometheus exposition's names and types, counters that move when
a real worker stores a real game against loopback bots, the read cache tallies, who may read it,
and the admin's Arena health page over the same figures."""

from __future__ import annotations

import subprocess
import sys
import time
from collections import Counter

import pytest
import redis
from django.core.cache import cache
from django.urls import reverse
from prometheus_client.parser import text_string_to_metric_families

from bots_sdk.examples import greedy
from bots_sdk.server import serve_in_thread
from tests.fakebots.players import Flaky
from tournaments import messages, metrics
from tournaments.models import Bot, Game, League, Seat
from tournaments.services.league_creation import league_create
from tournaments.services.league_schedules import league_start

POOL = "classic/2p"
# Every family the arena exports, with its Prometheus type.
EXPORTED = {
    "escoba_games": "counter",
    "escoba_moves": "counter",
    "escoba_faults": "counter",
    "escoba_bot_call_latency_seconds": "histogram",
    "escoba_matches_in_flight": "gauge",
    "escoba_rating_fit_lag_seconds": "gauge",
    "escoba_rating_sets_unfitted": "gauge",
    "escoba_queue_depth": "gauge",
    "escoba_live_streams": "gauge",
    "escoba_read_cache_reads": "counter",
    "escoba_metrics_unavailable": "gauge",
}


def scrape(client, **headers) -> dict:
    response = client.get("/metrics", **headers)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=")
    return {f.name: f for f in text_string_to_metric_families(response.content.decode())}


def value(families: dict, name: str, sample: str | None = None, **labels: str) -> float:
    wanted = sample or name
    found = [
        s.value
        for s in families[name].samples
        if s.name == wanted and all(s.labels.get(k) == v for k, v in labels.items())
    ]
    assert len(found) == 1, f"{wanted}{labels}: {found}"
    return found[0]


@pytest.fixture
def on_private_redis(redis_url, settings):
    """The scrape and the counters on the session's private redis-server, emptied first.

    The read tallies are per process, and the process has run other test files (xdist's
    ``loadfile``) whose cached reads were tallied but not sent yet: they are sent before the
    emptying, so a test counts its own reads alone."""
    from tests.conftest import celery_app_on_broker

    settings.REDIS_URL = redis_url
    metrics.reads_flush()
    redis.Redis.from_url(redis_url).flushall()
    with celery_app_on_broker(redis_url):
        yield redis_url


def wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.integration
@pytest.mark.timeout(180)
def test_a_worker_storing_games_moves_the_counters_and_the_health_page_shows_them(
    celery_worker_factory, settings, redis_url, staff, make_rated_bot, client
):
    settings.REDIS_URL = redis_url  # the worker counts there (tests/conftest.py sets its env)
    before = scrape(client)
    assert {name: f.type for name, f in before.items()} == EXPORTED
    assert value(before, "escoba_games", "escoba_games_total", pool=POOL) == 0  # the ladder's
    depths = {s.labels["queue"]: s.value for s in before["escoba_queue_depth"].samples}
    assert depths == {queue.name: 0 for queue in settings.CELERY_TASK_QUEUES}

    celery_worker_factory(pool="threads", concurrency=4)
    with serve_in_thread(Flaky(30, greedy.choose), name="flaky") as flaky:
        bots = [make_rated_bot("greedy"), make_rated_bot("greedy", name="flaky")]
        Bot.objects.filter(pk=bots[1].pk).update(url=flaky.url)
        league = league_create(
            creator=staff, name="metrics", bot_ids=[b.id for b in bots], rated=True
        )
        league_start(league_id=league.id, user=staff)
        wait_for(
            lambda: League.objects.get(pk=league.id).status == "finished", 90, "the league to end"
        )

    # Counted after the game's transaction commits: the worker may still be sending.
    games = Game.objects.filter(league=league, status=Game.Status.FINISHED)
    wait_for(
        lambda: (
            value(scrape(client), "escoba_games", "escoba_games_total", pool=POOL) == games.count()
        ),
        10,
        "the worker's counts",
    )
    after = scrape(client)
    assert games.count() == 2
    moves = sum(game.moves for game in games)
    assert value(after, "escoba_moves", "escoba_moves_total", pool=POOL) == moves > 0
    kinds: Counter[str] = Counter()
    for seat in Seat.objects.filter(game__in=games):
        kinds.update(seat.fault_kinds)
    assert kinds and sum(kinds.values()) == sum(game.faults for game in games)
    counted = {s.labels["kind"]: s.value for s in after["escoba_faults"].samples}
    assert counted == dict(kinds)  # e.g. {"http_status": 7}: the flaky bot's 500s
    latency = "escoba_bot_call_latency_seconds"
    calls = value(after, latency, f"{latency}_count", pool=POOL)
    forfeits = sum(game.forfeit is not None for game in games)
    assert calls == moves + forfeits  # one call per move, and the call that forfeited
    assert value(after, latency, f"{latency}_bucket", pool=POOL, le="+Inf") == calls
    assert 0 < value(after, latency, f"{latency}_sum", pool=POOL) < calls * 1.0
    assert value(after, "escoba_matches_in_flight", pool=POOL) == 0
    assert value(after, "escoba_rating_sets_unfitted", pool=POOL) >= 0

    staff.is_superuser = True
    staff.save()
    client.force_login(staff)
    page = client.get(reverse("arena_health"))
    assert page.status_code == 200
    row = page.content.decode().split(f'<th scope="row">{POOL}</th>')[1].split("</tr>")[0]
    assert f"<td>{games.count()}</td>" in row and f"<td>{moves}</td>" in row
    assert reverse("arena_health").encode() in client.get(reverse("admin:index")).content


def test_a_fault_is_counted_by_kind_and_latencies_fall_in_their_buckets():
    class Kind:
        def __str__(self) -> str:
            return "timeout"

    class Fault:
        kind = Kind()

    class Call:
        def __init__(self, latency_ms: float, fault=None) -> None:
            self.latency_ms, self.fault = latency_ms, fault

    adds = metrics.game_increments(
        pool=POOL, moves=3, calls=[Call(3), Call(40), Call(1000, Fault()), Call(20000)]
    )
    assert adds == {
        "games|classic/2p": 1,
        "moves|classic/2p": 3,
        "latency|classic/2p|0.005": 1,
        "latency|classic/2p|0.05": 1,
        "latency|classic/2p|1.0": 1,
        "latency|classic/2p|+Inf": 1,
        "faults|classic/2p|timeout": 1,
        "latency_sum|classic/2p": pytest.approx(21.043),
    }


@pytest.mark.integration
def test_read_cache_hits_and_misses_are_counted(on_private_redis, settings, db, client):
    settings.ESCOBA_READ_CACHE_S = 300
    cache.clear()  # the test settings' cache is per process: no answer from another test
    for _ in range(3):
        assert client.get("/api/leagues/").status_code == 200
    metrics.reads_flush()
    families = scrape(client)
    reads = "escoba_read_cache_reads"
    assert value(families, reads, f"{reads}_total", result="miss") == 1
    assert value(families, reads, f"{reads}_total", result="hit") == 2


@pytest.mark.integration
def test_live_streams_are_the_subscribers_of_the_live_channels(on_private_redis, db, client):
    subscriber = redis.Redis.from_url(on_private_redis).pubsub()
    subscriber.subscribe("escoba:live:game:7", "escoba:live:league:3")
    other = redis.Redis.from_url(on_private_redis).pubsub()
    other.subscribe("escoba:live:game:7")
    try:
        wait_for(
            lambda: value(scrape(client), "escoba_live_streams", topic="game") == 2,
            5,
            "the subscriptions",
        )
        assert value(scrape(client), "escoba_live_streams", topic="league") == 1
    finally:
        subscriber.close()
        other.close()


@pytest.mark.integration
def test_an_unreachable_redis_leaves_the_database_figures_and_says_what_is_missing(
    settings, db, client
):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    from tests.conftest import celery_app_on_broker

    with celery_app_on_broker(settings.REDIS_URL):
        families = scrape(client)
    missing = {s.labels["what"] for s in families["escoba_metrics_unavailable"].samples}
    assert missing == {"counters", "live streams", "queue depths"}
    assert value(families, "escoba_matches_in_flight", pool=POOL) == 0


FORBIDDEN = {"detail": messages.METRICS_FORBIDDEN, "code": "forbidden", "errors": {}}


@pytest.mark.integration
def test_only_the_operators_network_or_token_may_read_them(on_private_redis, settings, db, client):
    outside = {"REMOTE_ADDR": "203.0.113.5"}
    response = client.get("/metrics", **outside)
    assert (response.status_code, response.json()) == (403, FORBIDDEN)
    scrape(client)  # the test client is 127.0.0.1, inside the default networks
    scrape(client, REMOTE_ADDR="::1")

    settings.ESCOBA_METRICS_NETWORKS = ["10.1.0.0/16"]
    assert client.get("/metrics").status_code == 403
    scrape(client, REMOTE_ADDR="10.1.200.3")
    scrape(client, REMOTE_ADDR="::ffff:10.1.0.9")

    # X-Forwarded-For is believed only through as many proxies as are trusted.
    forged = {"REMOTE_ADDR": "203.0.113.5", "HTTP_X_FORWARDED_FOR": "10.1.0.1"}
    assert client.get("/metrics", **forged).status_code == 403
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    scrape(client, REMOTE_ADDR="10.9.9.9", HTTP_X_FORWARDED_FOR="203.0.113.5, 10.1.0.1")
    proxied = {"REMOTE_ADDR": "10.1.0.1", "HTTP_X_FORWARDED_FOR": "203.0.113.5"}
    assert client.get("/metrics", **proxied).status_code == 403

    # The token opens it from anywhere; a wrong one, or none configured, does not.
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer ", **outside).status_code == 403
    settings.ESCOBA_METRICS_TOKEN = "s3cret-scrape-token"
    scrape(client, HTTP_AUTHORIZATION="Bearer s3cret-scrape-token", **outside)
    for wrong in ("Bearer s3cret", "Token s3cret-scrape-token", "s3cret-scrape-token"):
        assert client.get("/metrics", HTTP_AUTHORIZATION=wrong, **outside).status_code == 403

    response = client.post("/metrics", HTTP_AUTHORIZATION="Bearer s3cret-scrape-token")
    assert response.status_code == 405 and response.json()["code"] == "method_not_allowed"
    assert client.post("/metrics", **outside).status_code == 403


def test_a_network_that_is_not_one_stops_start_up():
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        env={
            "PATH": "/usr/bin:/bin",
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "ESCOBA_METRICS_NETWORKS": "10.0.0.0/8,the office",
        },
        capture_output=True,
        text=True,
        cwd=str(__import__("pathlib").Path(__file__).resolve().parents[2]),
    )
    assert result.returncode != 0
    assert "ESCOBA_METRICS_NETWORKS: 'the office' is not a network" in result.stderr
