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
from tournaments.services import matches
from tournaments.services.league_creation import league_create
from tournaments.services.league_schedules import (
    league_add_sets,
    league_schedule_next,
    league_start,
)
from tournaments.services.league_states import league_open, league_pause, league_resume
from tournaments.services.matches import match_begin

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


def _take(client: redis.Redis, queue: str, match_id: int) -> None:
    """Take the match's message off the queue, as a worker's consumer does."""
    for raw in client.lrange(queue, 0, -1):
        if int(json.loads(raw)["headers"]["argsrepr"].strip("(,)")) == match_id:
            client.lrem(queue, 1, raw)
            return
    raise AssertionError(f"no message of match {match_id} in {queue}")


@pytest.fixture
def waiting_league(user, make_bot, redis_url, celery_worker_factory):
    """A started league whose first batch waits in the broker's queue, and no worker."""
    bots = [make_bot(name) for name in ("greedy", "random", "expert")]
    league = league_create(creator=user, name="race", bot_ids=[b.id for b in bots])
    league_start(league_id=league.id, user=user)
    league_schedule_next(league_id=league.id)
    client = redis.Redis.from_url(redis_url)
    yield league, client
    client.close()


def test_a_resume_does_not_send_a_match_a_worker_has_just_begun(waiting_league):
    """The resume read the match pending; meanwhile a worker took its message and began it."""
    league, client = waiting_league
    match_id = league.matches.order_by("number").values_list("id", flat=True)[0]
    _take(client, "leagues", match_id)
    assert match_begin(match_id=match_id, worker="w", claim="c") is not None
    queueing.match_dequeued(match_id)

    assert queueing.matches_enqueue([match_id], unless_queued=True) == []
    assert queued_matches(client, "leagues")[match_id] == 0
    assert not client.exists(f"escoba:match-queued:{match_id}")


def test_a_resume_between_a_paused_begin_and_its_unmark_still_sends_the_match(
    waiting_league, user, monkeypatch
):
    """A worker's begin found the league paused; the resume committed before the worker took
    the match's mark off, so it saw the match as waiting: the worker sends it again."""
    league, client = waiting_league
    match_id = league.matches.order_by("number").values_list("id", flat=True)[0]
    league_pause(league_id=league.id, user=user)
    _take(client, "leagues", match_id)
    begin = matches.match_begin

    def begin_then_resume(**kwargs):
        plan = begin(**kwargs)
        league_resume(league_id=league.id, user=user)
        assert queued_matches(client, "leagues")[match_id] == 0  # the resume skipped it
        return plan

    monkeypatch.setattr(matches, "match_begin", begin_then_resume)
    assert matches.match_play(match_id=match_id, from_queue=True).status == "skipped"
    assert queued_matches(client, "leagues")[match_id] == 1
    assert client.exists(f"escoba:match-queued:{match_id}")


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
