"""The ladder's patience with a bot that did not show up, on an injected clock (``now``).

After a no-show the ladder does not pair the bot until its backoff is over; a bot paused for
no-shows is checked again by the tick 1, 2, 4... minutes after, up to an hour, each due check
sent once, and a passing one brings it back. ``tests/reliability/test_ladder_blip.py`` plays the
same rules with real processes.
"""

import datetime

import pytest
from django.utils import timezone

from tournaments.models import Bot, Notification
from tournaments.services.bots import bot_check
from tournaments.services.ladder import bots_to_recheck, ladder_bots, ladder_tick
from tournaments.services.no_shows import noshow_backoff_s, recheck_delay_s

pytestmark = pytest.mark.django_db(transaction=True)

MINUTE = 60


def later(seconds: float, start: datetime.datetime | None = None) -> datetime.datetime:
    return (start or timezone.now()) + datetime.timedelta(seconds=seconds)


def test_the_delays_double_up_to_an_hour():
    assert [recheck_delay_s(n) / MINUTE for n in range(8)] == [1, 2, 4, 8, 16, 32, 60, 60]
    assert recheck_delay_s(10_000) == 3600
    assert [noshow_backoff_s(run) for run in (1, 2, 3, 4)] == [30, 60, 120, 240]
    assert noshow_backoff_s(50) == 3600


def test_the_ladder_waits_out_a_no_show_s_backoff(make_bot):
    waiting = make_bot("greedy", health=Bot.Health.HEALTHY)
    other = make_bot("random", health=Bot.Health.HEALTHY)
    now = timezone.now()
    Bot.objects.filter(pk=waiting.pk).update(rated_retry_at=later(30, now))
    assert {b.id for b in ladder_bots(now=now)} == {other.id}
    assert {b.id for b in ladder_bots(now=later(29, now))} == {other.id}
    assert {b.id for b in ladder_bots(now=later(30, now))} == {waiting.id, other.id}


def test_a_paused_bot_is_checked_again_on_its_own_with_backoff_and_comes_back(
    make_bot, example_servers, settings
):
    settings.ESCOBA_LADDER_POOLS = []  # only the checks here
    bot = make_bot("greedy", health=Bot.Health.HEALTHY)
    start = timezone.now()
    Bot.objects.filter(pk=bot.pk).update(
        url="http://127.0.0.1:9/", rated_paused_at=start, rated_retry_at=later(MINUTE, start)
    )
    assert bots_to_recheck(now=later(MINUTE - 1, start)) == []
    due = later(MINUTE, start)
    for failures in range(8):
        assert bots_to_recheck(now=due) == [bot.id]
        assert bots_to_recheck(now=due) == []  # claimed: a tick during the check sends no other
        checked_at = timezone.now()
        bot.refresh_from_db()
        assert not bot_check(bot=bot).passed  # still down
        bot.refresh_from_db()
        assert bot.rated_rechecks == failures + 1
        wait = (bot.rated_retry_at - checked_at).total_seconds()
        assert wait == pytest.approx(min(2 ** (failures + 1), 60) * MINUTE, abs=5)
        assert bots_to_recheck(now=later(wait - 10, checked_at)) == []
        due = later(wait + 1, checked_at)
    assert bot.rated_paused_at is not None and bot.health == Bot.Health.UNHEALTHY

    # up again: the next due check, sent by the tick (eager here), passes, and it is back
    Bot.objects.filter(pk=bot.pk).update(
        url=example_servers["greedy"].url, rated_retry_at=timezone.now()
    )
    report = ladder_tick()
    assert report["rechecks"] == [bot.id]
    bot.refresh_from_db()
    assert (bot.rated_paused_at, bot.rated_retry_at, bot.rated_rechecks) == (None, None, 0)
    assert bot.health == Bot.Health.HEALTHY and bot.id in {b.id for b in ladder_bots()}
    events = list(
        Notification.objects.filter(bot=bot).order_by("id").values_list("event", flat=True)
    )
    assert events == ["bot.unhealthy", "bot.healthy", "bot.rated_resumed"]
    assert ladder_tick()["rechecks"] == []
