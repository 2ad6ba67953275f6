"""Leagues through a real Redis and a real Celery worker process, including a SIGKILL mid-league."""

import time

import pytest
from django.db.models import Count

from bots_sdk.server import serve_in_thread
from tests.fakebots.players import Slow
from tests.reliability.helpers import full_speed, wait_ratings_settled
from tournaments.models import Game, League, RatedSet, Rating, SetScore
from tournaments.selectors.leagues import league_progress, league_standings
from tournaments.services.league_creation import league_create
from tournaments.services.league_schedules import league_start
from tournaments.services.rating_fits import ratings_recompute

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


def wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def league_status(league_id: int) -> str:
    return League.objects.values_list("status", flat=True).get(pk=league_id)


def test_worker_plays_a_league_with_standings_ratings_and_logs(
    celery_worker_factory, staff, make_rated_bot
):
    user, make_bot = staff, make_rated_bot
    celery_worker_factory(pool="threads", concurrency=8)
    bots = [make_bot("greedy"), make_bot("random"), make_bot("expert"), make_bot("random7")]
    league = league_create(creator=user, name="worker", bot_ids=[b.id for b in bots], rated=True)
    league_start(league_id=league.id, user=user)  # enqueued on commit to the real broker

    wait_for(lambda: league_status(league.id) == "finished", 90, "the league to finish")

    assert league_progress(league) == {"done": 12, "total": 12, "aborted": 0, "faults": 0}
    standings = league_standings(league)
    assert sorted(row["games"] for row in standings) == [6, 6, 6, 6]
    assert sum(row["points"] for row in standings) == 12
    assert RatedSet.objects.count() == 6  # one per match
    # the worker's fits coalesce; the last one sees every set, and the anchor holds
    wait_ratings_settled(60)
    assert sum(Rating.objects.values_list("sets", flat=True)) == 12
    assert abs(float(sum(Rating.objects.values_list("rating", flat=True))) - 4 * 1500) <= 0.04
    for game in Game.objects.filter(league=league):
        assert (
            game.log.document["format"] == "escoba-log/1" and game.log.document["result"]["reason"]
        )
        assert all(seat.latency_mean_ms is not None for seat in game.seats.all())
    assert ratings_recompute().exact


def test_sigkilled_worker_loses_nothing_and_rates_each_game_once(
    celery_worker_factory, staff, make_rated_bot
):
    user, make_bot = staff, make_rated_bot

    slow_greedy = Slow(0.01)
    with serve_in_thread(slow_greedy, name="slow") as slow:
        bots = [make_bot("greedy"), make_bot("random"), make_bot("random7"), make_bot("expert")]
        bots.append(make_bot("greedy", name="slow-one"))
        bots[-1].url = slow.url
        bots[-1].save()
        league = league_create(creator=user, name="crash", bot_ids=[b.id for b in bots], rated=True)
        worker = celery_worker_factory(pool="threads", concurrency=4)
        league_start(league_id=league.id, user=user)

        def some_but_not_all_done() -> bool:
            done = league_progress(league)["done"]
            return 2 <= done

        wait_for(some_but_not_all_done, 60, "the first games")
        worker.kill()
        done_at_kill = league_progress(league)["done"]
        assert done_at_kill < 20, "the league finished before the kill: make the bots slower"

        full_speed([slow_greedy])
        worker.start()
        wait_for(lambda: league_status(league.id) == "finished", 120, "the league to finish")

    assert league_progress(league) == {"done": 20, "total": 20, "aborted": 0, "faults": 0}
    assert Game.objects.filter(league=league, status="finished", rated=True).count() == 20
    per_set = SetScore.objects.values("rated_set").annotate(n=Count("id"))
    assert sorted({row["n"] for row in per_set}) == [1] and len(per_set) == 10
    assert league.matches.filter(attempts__gt=1).exists(), "no match was cut off by the kill"
    wait_ratings_settled(60)
