"""The scheduled check (beat task ``bots.check_due``): it is what turns a broken bot unhealthy."""

from datetime import timedelta

from django.utils import timezone

from tournaments.models import Bot, BotCheck
from tournaments.services.bots import bot_register
from tournaments.tasks import check_due_bots


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
