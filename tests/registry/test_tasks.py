"""The scheduled checks (beat task ``bots.check_due``, one ``bots.check_one`` per bot): they are
what turns a broken bot unhealthy."""

import json
import time
from datetime import timedelta

import pytest
import redis
from django.utils import timezone

from tests.conftest import celery_app_on_broker
from tournaments import tasks
from tournaments.models import Bot, BotCheck
from tournaments.services.bots import bot_register
from tournaments.tasks import check_bot, check_due_bots, sweep_matches


def test_check_due_checks_stale_bots_and_skips_fresh_ones(
    user, greedy_bot, switchable_bot, settings
):
    settings.ESCOBA_BOT_CHECK_INTERVAL_S = 600
    settings.ESCOBA_BOT_UNHEALTHY_AFTER = 1
    stale = bot_register(owner=user, name="stale", url=switchable_bot.url)
    fresh = bot_register(owner=user, name="fresh", url=greedy_bot)
    Bot.objects.filter(pk=fresh.pk).update(last_checked_at=timezone.now())
    switchable_bot.broken = True

    checked = check_due_bots()

    assert checked == [stale.pk]
    stale.refresh_from_db()
    assert stale.health == Bot.Health.UNHEALTHY
    assert stale.checks.get().trigger == BotCheck.Trigger.SCHEDULE
    assert not BotCheck.objects.filter(bot=fresh).exists()

    Bot.objects.filter(pk=stale.pk).update(last_checked_at=timezone.now() - timedelta(hours=1))
    switchable_bot.broken = False
    assert check_due_bots() == [stale.pk]
    stale.refresh_from_db()
    assert stale.health == Bot.Health.HEALTHY


@pytest.mark.integration
def test_check_due_sends_one_check_per_due_bot_to_the_maintenance_queue(
    user, greedy_bot, redis_url, settings
):
    settings.ESCOBA_BOT_CHECK_INTERVAL_S = 600
    bots = [bot_register(owner=user, name=f"due{n}", url=greedy_bot) for n in range(3)]
    paused = bot_register(owner=user, name="paused", url=greedy_bot)
    Bot.objects.filter(pk=paused.pk).update(status=Bot.Status.PAUSED)
    client = redis.Redis.from_url(redis_url)
    client.flushall()

    with celery_app_on_broker(redis_url):  # no worker: the messages stay in the queue
        sent = check_due_bots()
        again = check_due_bots()  # the next beat, before any check ran

    waiting = [json.loads(raw)["headers"] for raw in client.lrange("maintenance", 0, -1)]
    client.close()
    assert sorted(sent) == sorted(bot.pk for bot in bots)
    assert again == []  # a bot whose check waits in the queue is not sent twice
    assert sorted(h["argsrepr"] for h in waiting) == sorted(f"({bot.pk},)" for bot in bots)
    assert {h["task"] for h in waiting} == {"bots.check_one"}
    assert not BotCheck.objects.exists()


def test_two_runs_of_check_due_never_overlap(user, greedy_bot, settings):
    settings.ESCOBA_BOT_CHECK_INTERVAL_S = 600
    bot = bot_register(owner=user, name="due", url=greedy_bot)

    with tasks._lock("bots.check_due", 60) as held:  # a run still going
        assert held
        assert check_due_bots() == []
    assert not BotCheck.objects.exists()

    assert check_due_bots() == [bot.pk]  # eager: the check ran in this process
    assert BotCheck.objects.filter(bot=bot, trigger=BotCheck.Trigger.SCHEDULE).count() == 1


def test_a_check_is_done_once_however_often_it_is_delivered(user, greedy_bot, settings):
    settings.ESCOBA_BOT_CHECK_INTERVAL_S = 600
    bot = bot_register(owner=user, name="once", url=greedy_bot)

    assert check_bot(bot.pk) is True
    assert check_bot(bot.pk) is None  # a second delivery: checked since it was sent
    with tasks._lock(f"bots.check_one:{bot.pk}:running", 60):  # another run is checking it
        Bot.objects.filter(pk=bot.pk).update(last_checked_at=None)
        assert check_bot(bot.pk) is None
    Bot.objects.filter(pk=bot.pk).update(status=Bot.Status.PAUSED)
    assert check_bot(bot.pk) is None
    assert check_bot(987654) is None  # deleted meanwhile
    assert bot.checks.count() == 1


def test_each_check_has_its_own_limits():
    assert 0 < check_bot.soft_time_limit < check_bot.time_limit
    assert 0 < check_due_bots.soft_time_limit < check_due_bots.time_limit


@pytest.mark.integration
def test_checks_wait_for_a_maintenance_worker_and_never_hold_up_the_games_one(
    user, greedy_bot, celery_worker_factory, redis_url
):
    bot = bot_register(owner=user, name="remote", url=greedy_bot)
    celery_worker_factory(queues="games", pool="threads", concurrency=2)
    client = redis.Redis.from_url(redis_url)

    due = check_due_bots.delay()  # as beat sends it
    assert sweep_matches.delay().get(timeout=60) == []  # the games worker is at work...
    assert client.llen("maintenance") == 1  # ...and leaves the checks alone
    assert not BotCheck.objects.exists()

    celery_worker_factory(queues="maintenance", pool="prefork", concurrency=2)
    assert due.get(timeout=60) == [bot.pk]
    deadline = time.monotonic() + 60
    while not BotCheck.objects.filter(bot=bot).exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    client.close()
    check = BotCheck.objects.get(bot=bot)
    assert check.trigger == BotCheck.Trigger.SCHEDULE and check.passed
