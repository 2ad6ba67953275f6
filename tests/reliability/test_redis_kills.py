"""Redis killed (``kill -9``) again and again mid-league, restarted on the same port with its
append-only file or with nothing: the worker stays alive (config/redis_transport.py says which
kombu defect killed it), no game is played to its end twice, no fault or rating is charged for
the outage, and the league completes.

The Redis is this module's own (tests/reliability/helpers.py ``restartable_redis``). A Redis that
lost its data also lost the queued matches: the test does what beat's sweep (``leagues.sweep``)
does, as no beat runs here (tests/reliability/test_redis_restart.py says more).
"""

import time

import pytest

from tests.fakebots.players import NoticedBot
from tests.reliability.helpers import (
    assert_each_game_ended_once,
    assert_no_fault_charged,
    assert_played_and_rated_exactly_once,
    full_speed,
    league_status,
    moves_of,
    redis_url,
    restartable_redis,
    scheduled_games,
    wait_for,
)
from tournaments.queueing import BROKER_ERRORS
from tournaments.selectors.leagues import league_progress
from tournaments.services.league_creation import league_create
from tournaments.services.league_schedules import league_start
from tournaments.services.match_leases import matches_sweep
from tournaments.services.matches import HEARTBEAT_S

__all__ = ["redis_url", "restartable_redis"]  # fixtures: this module's own Redis

pytestmark = [pytest.mark.integration, pytest.mark.timeout(400)]
KILLS = 6


def sweep() -> None:
    """What beat's sweep does (``leagues.sweep``), with a quiet time well above the heartbeat
    interval: a live match is never taken from its run."""
    try:
        matches_sweep(idle_s=3 * HEARTBEAT_S)
    except BROKER_ERRORS:
        pass  # Redis is down right now; the next sweep will do


@pytest.mark.parametrize(
    "restartable_redis", [True, False], ids=["aof", "data-lost"], indirect=True
)
def test_worker_survives_redis_killed_again_and_again_mid_league(
    celery_worker_factory, restartable_redis, user, make_bot
):
    # Six bots, 30 games: the six kills land within the first few games (each kill waits for 40
    # more moves; a game is about 200), so the league is still far from over at the last one.
    bots = [NoticedBot(f"noticed{n}", delay_s=0.01) for n in range(6)]
    servers = [bot.serve() for bot in bots]
    try:
        registered = []
        for bot, server in zip(bots, servers, strict=True):
            row = make_bot("greedy", name=bot.name)
            row.url = server.url
            row.save(update_fields=["url"])
            registered.append(row.id)
        league = league_create(
            creator=user, name="redis-kills", bot_ids=registered, games_per_pairing=2, rated=True
        )
        worker = celery_worker_factory(pool="threads", concurrency=3)
        league_start(league_id=league.id, user=user)
        total = scheduled_games(league)

        def moved(more: int, since: int) -> bool:
            sweep()
            return moves_of(bots) > since + more

        for kill in range(KILLS):
            before = moves_of(bots)
            wait_for(lambda b=before: moved(40, b), 120, f"games in flight before kill {kill + 1}")
            assert league_progress(league)["done"] < total, f"finished before kill {kill + 1}"
            restartable_redis.kill()
            time.sleep(0.5)
            restartable_redis.start()
            assert worker.is_alive, worker.log_text()[-3000:]
        full_speed(bots)

        def finished() -> bool:
            assert worker.is_alive, worker.log_text()[-3000:]
            sweep()
            return league_status(league.id) == "finished"

        wait_for(finished, 240, "the league to finish")
    finally:
        for server in servers:
            server.stop()

    assert worker.is_alive
    assert "Unrecoverable error" not in worker.log_text()
    assert_played_and_rated_exactly_once(league)
    assert_no_fault_charged(league)
    assert_each_game_ended_once(league, bots)
