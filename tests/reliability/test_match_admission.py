"""A games worker takes its next match as soon as one of its slots frees, not in waves.

A real Redis and a real ``celery worker --pool threads --concurrency 2``: one slot holds a long
match (a bot thinking 100 ms a move), while the other slot plays a second league's short
matches one after the other. Were matches admitted in waves (the next ones waiting for the
longest of those in play), only one short match could end while the long one plays; here each
short match begins as the one before it ends.
"""

import pytest

from bots_sdk.server import serve_in_thread
from tests.fakebots.players import Slow
from tests.reliability.helpers import full_speed, league_status, wait_for
from tournaments.models import Match
from tournaments.services.league_creation import league_create
from tournaments.services.league_schedules import league_start

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

THINK_S = 0.1
ADMITTED_WITHIN_S = 5.0


def test_a_freed_slot_takes_the_next_match_while_a_long_one_plays(
    celery_worker_factory, user, make_bot
):
    slow = Slow(THINK_S)
    with serve_in_thread(slow, name="slow") as server:
        slow_bot = make_bot("greedy", name="admission-slow")
        slow_bot.url = server.url
        slow_bot.save(update_fields=["url"])
        long = league_create(
            creator=user, name="admission-long", bot_ids=[slow_bot.id, make_bot("greedy").id]
        )
        fast_bots = [make_bot(example).id for example in ("greedy", "random", "expert", "random7")]
        short = league_create(creator=user, name="admission-short", bot_ids=fast_bots)
        celery_worker_factory(pool="threads", concurrency=2)

        league_start(league_id=long.id, user=user)
        wait_for(lambda: slow.moves > 0, 60, "the long match to be played")
        league_start(league_id=short.id, user=user)
        wait_for(
            lambda: "finished" in {league_status(short.id), league_status(long.id)},
            180,
            "the short or the long league to finish",
        )
        # Played in the one free slot, the short league ends first unless that slot waited for
        # the long match; either way what the checks below read is settled, and the rest of the
        # long match needs no more think time.
        full_speed([slow])
        wait_for(lambda: league_status(long.id) == "finished", 180, "the long league to finish")
        long_match = long.matches.get()
        wait_for(lambda: league_status(short.id) == "finished", 120, "the short league to finish")

    short_matches = list(short.matches.order_by("finished_at"))
    assert len(short_matches) == 6
    assert all(match.status == Match.Status.FINISHED for match in short_matches)
    ended_meanwhile = [m for m in short_matches if m.finished_at < long_match.finished_at]
    origin = long_match.started_at.timestamp()
    timeline = [
        (m.number, m.started_at.timestamp() - origin, m.finished_at.timestamp() - origin)
        for m in [long_match, *short_matches]
    ]
    assert len(ended_meanwhile) >= 2, (
        f"{len(ended_meanwhile)} short matches ended while the long one played: the freed slot "
        f"waited for it (number, begun, ended: {timeline})"
    )
    # One slot for them while the long match held the other: played one at a time, each taken
    # as the one before ended (a fraction of a second here; seconds only on a swamped machine).
    for before, after in zip(ended_meanwhile, ended_meanwhile[1:], strict=False):
        assert before.finished_at <= after.started_at
        assert (after.started_at - before.finished_at).total_seconds() < ADMITTED_WITHIN_S, timeline
