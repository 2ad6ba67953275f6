"""The ladder and version tests under worker SIGKILLs and a Redis that loses its data.

The same task, leases and idempotence as leagues' (tests/reliability/test_worker_crashes.py), for
leagues that grow while they are played: the real worker refills the ladder after every set and
updates a version test after every set, while this process ticks the ladder as beat would, so
fills from both sides overlap. Afterwards: every set scheduled was played to its end once, every
ladder set rated once, the ladder never had more sets in flight than its target, and the test
counted each of its sets once.
"""

import tempfile
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.db.models import Count

from bots_sdk.server import serve_in_thread
from tests.fakebots.players import Slow
from tests.reliability.helpers import (
    RestartableRedis,
    Ticker,
    full_speed,
    wait_for,
    wait_ratings_settled,
)
from tournaments.models import Bot, Game, Match, RatedSet, SetScore, VersionTest
from tournaments.selectors.ladder import league_set_scores
from tournaments.services.ladder import ladder_league
from tournaments.services.match_leases import matches_sweep
from tournaments.services.version_tests import version_test_create, version_tests_settle

# postgres_too: the worker and the ticking test fill the ladder at once (skip_locked row locks).
pytestmark = [pytest.mark.integration, pytest.mark.postgres_too, pytest.mark.timeout(300)]

POOL = "classic/2p"
TARGET = 3
IN_FLIGHT = (Match.Status.PENDING, Match.Status.RUNNING)


@pytest.fixture
def ladder_settings(settings, monkeypatch):
    """The same ladder settings here and in the worker (which reads its environment)."""
    values = {
        "ESCOBA_LADDER_SETS_IN_FLIGHT": TARGET,
        "ESCOBA_LADDER_MAX_SETS_PER_BOT": 2,
        "ESCOBA_TEST_SETS_IN_FLIGHT": 2,
        "ESCOBA_LADDER_POOLS": [POOL],
    }
    for name, value in values.items():
        setattr(settings, name, value)
        monkeypatch.setenv(name, ",".join(value) if isinstance(value, list) else str(value))
    monkeypatch.setenv("ESCOBA_LADDER_REFILL_ON_RESULT", "1")


def ladder_bots(make_bot, slow_url: str) -> list[Bot]:
    owners = [get_user_model().objects.create_user(username=f"ladder-{i}") for i in range(5)]
    bots = [
        make_bot(example, owner=owner, health=Bot.Health.HEALTHY)
        for example, owner in zip(["greedy", "random", "expert", "random7"], owners, strict=False)
    ]
    slow = make_bot("greedy", owner=owners[4], name="ladder-slow", health=Bot.Health.HEALTHY)
    slow.url = slow_url
    slow.save(update_fields=["url"])
    return [*bots, slow]


def stop_ladder_and_drain(timeout: float) -> None:
    """Pause every bot (the ladder schedules no more) and wait for the sets in flight."""
    Bot.objects.update(status=Bot.Status.PAUSED)
    league = ladder_league(POOL)
    wait_for(
        lambda: not league.matches.filter(status__in=IN_FLIGHT).exists(),
        timeout,
        "the ladder's sets in flight to end",
    )


def assert_ladder_played_and_rated_once(minimum_sets: int) -> None:
    league = ladder_league(POOL)
    matches = league.matches.all()
    assert matches.count() >= minimum_sets
    assert set(matches.values_list("status", flat=True)) == {Match.Status.FINISHED}
    games = Game.objects.filter(league=league)
    assert games.count() == 2 * matches.count()
    assert not games.exclude(status=Game.Status.FINISHED).exists()
    assert games.filter(rated=True).count() == games.count()
    # every set rated exactly once, with one score for its pair of bots
    assert RatedSet.objects.filter(match__league=league).count() == matches.count()
    per_set = (
        SetScore.objects.filter(rated_set__match__league=league)
        .values("rated_set")
        .annotate(n=Count("id"))
    )
    assert len(per_set) == matches.count() and {row["n"] for row in per_set} == {1}
    # once the workers' last fit is done, the published ratings are exactly a fresh fit's (a
    # deal's value or a fit lost with the queue is the sweeps' to send again, as beat would)
    wait_ratings_settled()


def test_ladder_and_a_version_test_survive_worker_kills(
    celery_worker_factory, ladder_settings, user, make_bot
):
    slow = Slow(0.004)
    with serve_in_thread(slow, name="slow") as server:
        ladder_bots(make_bot, server.url)
        candidate = make_bot("greedy", owner=user, name="candidate")
        baseline = make_bot("random7", owner=user, name="baseline")
        baseline.url = server.url  # the slow bot, so the test's games are cut off too
        baseline.save(update_fields=["url"])
        worker = celery_worker_factory(pool="threads", concurrency=4)
        test = version_test_create(
            user=user,
            candidate_id=candidate.id,
            baseline_id=baseline.id,
            elo0=-5,
            elo1=5,
            alpha=0.05,
            beta=0.05,
            max_sets=16,
        )
        with Ticker() as ticker:
            for kill in range(2):
                moves = slow.moves
                wait_for(lambda m=moves: slow.moves > m + 30, 60, f"games in flight ({kill})")
                worker.kill()
                worker.start()
            full_speed([slow])
            league = ladder_league(POOL)
            wait_for(
                lambda: league.matches.filter(status=Match.Status.FINISHED).count() >= 12,
                120,
                "a dozen ladder sets",
            )

            def decided() -> bool:
                version_tests_settle()  # as the tick does
                return VersionTest.objects.get(pk=test.pk).status != "running"

            wait_for(decided, 120, "the version test to end")
        assert not ticker.errors, ticker.errors
        stop_ladder_and_drain(120)

    assert ticker.most_in_flight <= TARGET
    assert Match.objects.filter(attempts__gt=1).exists(), "no set was cut off by the kills"
    assert_ladder_played_and_rated_once(minimum_sets=12)

    test.refresh_from_db()
    scored = league_set_scores(test.league, candidate.id)
    assert test.sets == len(scored) == sum(test.counts)
    assert test.league.matches.count() <= test.max_sets
    assert test.status == "inconclusive" or test.sets < test.max_sets
    assert not RatedSet.objects.filter(match__league=test.league).exists()  # unrated
    assert not Game.objects.filter(league=test.league, rated=True).exists()
    assert not Game.objects.filter(league=test.league, status=Game.Status.ABORTED).exists()


@pytest.fixture
def restartable_redis():
    with tempfile.TemporaryDirectory(prefix="escoba-ladder-redis-") as directory:
        server = RestartableRedis(Path(directory))
        yield server
        server.stop()


@pytest.fixture
def redis_url(restartable_redis) -> str:
    return restartable_redis.url


def test_the_ladder_survives_a_redis_that_lost_its_queue(
    celery_worker_factory, restartable_redis, ladder_settings, make_bot
):
    slow = Slow(0.004)
    with serve_in_thread(slow, name="slow") as server:
        ladder_bots(make_bot, server.url)
        celery_worker_factory(pool="threads", concurrency=2)
        with Ticker() as ticker:
            wait_for(lambda: slow.moves > 30, 60, "games in flight")
            restartable_redis.restart(keep_data=False)
            full_speed([slow])
            league = ladder_league(POOL)
            since = league.matches.filter(status=Match.Status.FINISHED).count()

            def progressed() -> bool:
                matches_sweep(idle_s=2)  # what beat's sweep does, with a short wait
                return league.matches.filter(status=Match.Status.FINISHED).count() >= since + 8

            wait_for(progressed, 150, "the ladder to go on after the restart")
        assert not ticker.errors, ticker.errors

        def drained() -> bool:
            matches_sweep(idle_s=2)
            return not league.matches.filter(status__in=IN_FLIGHT).exists()

        Bot.objects.update(status=Bot.Status.PAUSED)
        wait_for(drained, 150, "the ladder's sets in flight to end")

    assert ticker.most_in_flight <= TARGET
    assert_ladder_played_and_rated_once(minimum_sets=8)
