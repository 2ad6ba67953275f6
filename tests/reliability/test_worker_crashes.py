"""Workers SIGKILLed mid-game and mid-league: the league completes, each game played and rated
once.

A real Redis and real ``celery worker`` processes (tests/conftest.py). One bot thinks for a few
milliseconds per move so games last long enough to be cut off: the kills land while the worker
is in the middle of games, which the bot's move counter confirms.
"""

import psutil
import pytest

from bots_sdk.server import serve_in_thread
from tests.fakebots.players import Slow
from tests.reliability.helpers import (
    assert_played_and_rated_exactly_once,
    full_speed,
    league_status,
    scheduled_games,
    wait_for,
)
from tournaments.models import Game
from tournaments.selectors.leagues import league_progress
from tournaments.services.league_creation import league_create
from tournaments.services.league_schedules import league_start

# postgres_too: the worker's threads and the redelivered match take their leases under row locks.
pytestmark = [pytest.mark.integration, pytest.mark.postgres_too, pytest.mark.timeout(240)]

THINK_S = 0.004


def slow_league(user, make_bot, slow_url: str, name: str):
    bots = [make_bot("greedy"), make_bot("random"), make_bot("expert"), make_bot("random7")]
    slow = make_bot("greedy", name=f"{name}-slow")
    slow.url = slow_url
    slow.save(update_fields=["url"])
    return league_create(creator=user, name=name, bot_ids=[b.id for b in [*bots, slow]], rated=True)


def test_worker_killed_twice_mid_game_loses_and_repeats_nothing(
    celery_worker_factory, user, make_bot
):
    slow = Slow(THINK_S)
    with serve_in_thread(slow, name="slow") as server:
        league = slow_league(user, make_bot, server.url, "kill-twice")
        worker = celery_worker_factory(pool="threads", concurrency=4)
        league_start(league_id=league.id, user=user)
        total = scheduled_games(league)

        for kill in range(2):
            moves_before = slow.moves
            wait_for(lambda b=moves_before: slow.moves > b + 20, 60, "games in flight")
            done = league_progress(league)["done"]
            assert done < total, f"the league finished before kill {kill + 1}"
            worker.kill()  # the whole process group, as the OOM killer or a power cut would
            worker.start()
        full_speed([slow])
        wait_for(lambda: league_status(league.id) == "finished", 150, "the league to finish")

    assert_played_and_rated_exactly_once(league)
    assert league.matches.filter(attempts__gt=1).exists(), "no match was cut off by the kills"
    assert not Game.objects.filter(league=league, status="aborted").exists()


def test_pool_child_killed_mid_game_is_replaced_and_the_match_played_again(
    celery_worker_factory, user, make_bot
):
    """Prefork: only the child running the match dies; the parent requeues it (acks_late)."""
    slow = Slow(THINK_S)
    with serve_in_thread(slow, name="slow") as server:
        league = slow_league(user, make_bot, server.url, "kill-child")
        worker = celery_worker_factory(pool="prefork", concurrency=2)
        league_start(league_id=league.id, user=user)

        wait_for(lambda: slow.moves > 20, 60, "games in flight")
        children = psutil.Process(worker.process.pid).children()
        assert children, "a prefork worker has pool children"
        children[0].kill()
        full_speed([slow])
        wait_for(lambda: league_status(league.id) == "finished", 150, "the league to finish")

    assert worker.is_alive
    assert_played_and_rated_exactly_once(league)
    assert league.matches.filter(attempts__gt=1).exists(), "no match was cut off by the kill"
