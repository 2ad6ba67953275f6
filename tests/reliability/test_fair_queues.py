"""Fair queues and an idempotent resume, against a real Redis broker and real Celery workers.

- Hostile: a user pauses and resumes a 30-match league twenty times. The broker's queue never
  holds more than one message per match, and once the league is paused no match of it starts.
- The ladder, users' leagues and challenges have queues of their own, which a worker takes from
  in turn: sets of the ladder sent after a user's whole league still start among the first.
"""

import json
import time
from collections import Counter

import pytest
import redis
from django.utils import timezone

from tests.reliability.helpers import league_status, wait_for
from tournaments import queueing
from tournaments.models import League, Match
from tournaments.services.leagues import (
    league_add_sets,
    league_create,
    league_open,
    league_pause,
    league_resume,
    league_schedule_next,
    league_start,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

CYCLES = 20


def queued_matches(client: redis.Redis, queue: str) -> Counter:
    """Match id → messages of it waiting in ``queue`` (a Redis list of Celery messages)."""
    ids = Counter()
    for raw in client.lrange(queue, 0, -1):
        headers = json.loads(raw)["headers"]
        assert headers["task"] == queueing.PLAY_MATCH
        ids[int(headers["argsrepr"].strip("(,)"))] += 1
    return ids


def unfinished(league: League) -> int:
    return league.matches.exclude(status=Match.Status.FINISHED).count()


def test_pause_resume_cycles_leave_one_message_per_waiting_match(
    user, make_bot, redis_url, celery_worker_factory
):
    client = redis.Redis.from_url(redis_url)
    bots = [
        make_bot(name) for name in ("greedy", "random", "expert", "random7", "greedy", "random")
    ]
    league = league_create(
        creator=user, name="pause storm", bot_ids=[b.id for b in bots], games_per_pairing=4
    )
    league_start(league_id=league.id, user=user)
    league_schedule_next(league_id=league.id)  # what the (not yet started) worker would do
    assert league.matches.count() == 30
    assert queued_matches(client, "leagues") == Counter(league.matches.values_list("id", flat=True))

    # No worker yet: every cycle finds every message still waiting, and sends none again.
    for _ in range(CYCLES):
        league_pause(league_id=league.id, user=user)
        league_resume(league_id=league.id, user=user)
    waiting = queued_matches(client, "leagues")
    assert sum(waiting.values()) == 30 and max(waiting.values()) == 1

    # With a worker playing them, pausing drains messages (their matches do not start) and
    # resuming sends those again: never two of one match at once, never more than are unplayed.
    celery_worker_factory(pool="threads", concurrency=4, queues="leagues,maintenance")
    for _ in range(CYCLES):
        league_pause(league_id=league.id, user=user)
        time.sleep(0.05)
        league_resume(league_id=league.id, user=user)
        waiting = queued_matches(client, "leagues")
        assert not waiting or max(waiting.values()) == 1
        assert sum(waiting.values()) <= unfinished(league)
        time.sleep(0.05)

    league_pause(league_id=league.id, user=user)
    paused_at = timezone.now()
    time.sleep(3)  # the worker takes what waits: none of it may start
    assert not league.matches.filter(started_at__gt=paused_at).exists()
    assert league_status(league.id) == League.Status.PAUSED

    league_resume(league_id=league.id, user=user)
    wait_for(lambda: league_status(league.id) == League.Status.FINISHED, 200, "league finished")
    assert league.games.filter(status="finished").count() == 60
    assert client.llen("leagues") == 0
    client.close()


def test_a_worker_takes_from_the_ladder_leagues_and_challenges_in_turn(
    user, make_bot, redis_url, celery_worker_factory
):
    bots = [make_bot(name) for name in ("greedy", "random", "expert", "random7")]
    ids = [b.id for b in bots]
    # A user's league sent first: 6 pairings x 3 sets = 18 matches on the leagues queue...
    crowd = league_create(creator=user, name="crowd", bot_ids=ids, games_per_pairing=6)
    league_start(league_id=crowd.id, user=user)
    league_schedule_next(league_id=crowd.id)
    # ...then 6 sets of the ladder on the games queue...
    ladder = league_create(creator=user, name="ladder", bot_ids=ids, kind=League.Kind.LADDER)
    league_open(league=ladder)
    league_add_sets(league=ladder, tables=[(ids[i % 4], ids[(i + 1) % 4]) for i in range(6)])
    # ...and a challenge of 4 sets on the challenges queue.
    duel = league_create(
        creator=user,
        name="duel",
        bot_ids=ids[:2],
        games_per_pairing=8,
        kind=League.Kind.CHALLENGE,
    )
    league_start(league_id=duel.id, user=user)
    league_schedule_next(league_id=duel.id)

    # One match at a time, so the order of taking is the order of starting.
    celery_worker_factory(pool="threads", concurrency=1, queues="games,leagues,challenges")
    wait_for(
        lambda: not Match.objects.exclude(status=Match.Status.FINISHED).exists(),
        240,
        "every match played",
    )
    order = list(Match.objects.order_by("started_at").values_list("league_id", flat=True))
    position = {
        league.id: [n for n, league_id in enumerate(order, 1) if league_id == league.id]
        for league in (crowd, ladder, duel)
    }
    # In turn: while all three wait, each gets every third match. First in, first out would
    # have started the ladder's sets at 19 to 24 and the challenge's at 25 to 28.
    assert position[duel.id][-1] <= 12
    assert position[ladder.id][-1] <= 18
    assert position[crowd.id][0] <= 3
