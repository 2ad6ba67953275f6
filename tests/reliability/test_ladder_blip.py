"""A blip is not a death: a bot down for two seconds under a busy ladder comes back by itself.

Real parts: a Celery worker process plays the ladder's sets against bots on loopback and refills
the pool after every set, while this process ticks the ladder as beat would. One bot's server
is stopped for two seconds and started again at the same address. Nobody acts: no check by its
owner, no admin. The settings are short and harsh so that the test runs in seconds and takes
the longest way back: one counted no-show pauses the bot (the default is 3, each after a
backoff of 30 s doubling, so a real blip of two seconds counts once and pauses nothing), and
the ladder's tick re-checks it 1 s, 2 s, 4 s... after (the default: 1, 2, 4... minutes).
"""

import time

import pytest
from django.contrib.auth import get_user_model

from bots_sdk.server import serve_in_thread
from tests.fakebots.players import Slow
from tests.reliability.helpers import Ticker, wait_for
from tournaments.models import Bot, Match, Notification, RatedSet
from tournaments.services.ladder import ladder_bots, ladder_league

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

POOL = "classic/2p"
IN_FLIGHT = (Match.Status.PENDING, Match.Status.RUNNING)


@pytest.fixture
def blip_settings(settings, monkeypatch):
    """The same settings here (the ticker) and in the worker (which reads its environment)."""
    values = {
        "ESCOBA_LADDER_SETS_IN_FLIGHT": 4,
        "ESCOBA_LADDER_MAX_SETS_PER_BOT": 2,
        "ESCOBA_LADDER_POOLS": [POOL],
        "ESCOBA_NOSHOW_PAUSE_AFTER": 1,
        "ESCOBA_NOSHOW_BACKOFF_S": 1,
        "ESCOBA_RECHECK_FIRST_S": 1,
        "ESCOBA_RECHECK_MAX_S": 4,
    }
    for name, value in values.items():
        setattr(settings, name, value)
        monkeypatch.setenv(name, ",".join(value) if isinstance(value, list) else str(value))
    monkeypatch.setenv("ESCOBA_LADDER_REFILL_ON_RESULT", "1")


def rated_sets_of(bot: Bot, since: float = 0.0) -> int:
    """Rated sets of ``bot`` whose match was scheduled after ``since`` (a ``time.time()``)."""
    sets = RatedSet.objects.filter(players__bot=bot)
    return sum(1 for created in sets.values_list("match__created_at", flat=True)
               if created.timestamp() > since)  # fmt: skip


def test_a_bot_down_for_two_seconds_is_back_in_rated_play_by_itself(
    celery_worker_factory, blip_settings, make_bot
):
    owners = [get_user_model().objects.create_user(username=f"blip-{i}") for i in range(4)]
    for example, owner in zip(["greedy", "random", "expert"], owners, strict=False):
        make_bot(example, owner=owner)
    slow = Slow(0.004)
    server = serve_in_thread(slow, name="blinker")
    port = server.server.server_address[1]
    blinker = make_bot("greedy", owner=owners[3], name="blinker")
    Bot.objects.filter(pk=blinker.pk).update(url=server.url)
    celery_worker_factory(pool="threads", concurrency=4)
    try:
        with Ticker(every_s=0.3) as ticker:
            wait_for(lambda: rated_sets_of(blinker) >= 2, 60, "the blinker's first rated sets")
            wait_for(lambda: slow.moves > 0 and _busy(), 20, "a busy ladder")
            server.stop()  # down...
            time.sleep(2.0)
            back = time.time()
            server = serve_in_thread(slow, name="blinker", port=port)  # ...and up again

            def back_in_rated_play() -> bool:
                bot = Bot.objects.get(pk=blinker.pk)
                return (
                    bot.rated_paused_at is None
                    and bot.id in {b.id for b in ladder_bots()}
                    and rated_sets_of(bot, since=back) >= 1
                )

            wait_for(back_in_rated_play, 45, "the blinker back in rated play, playing rated sets")
        assert not ticker.errors, ticker.errors
    finally:
        server.stop()

    blinker.refresh_from_db()
    assert blinker.no_shows >= 1, "the blip went unseen: no game was in flight against it"
    assert blinker.no_shows_in_row == 0 and blinker.health == Bot.Health.HEALTHY
    # if the blip paused it, the owner was told, and told again when it came back
    told = Notification.objects.filter(user=owners[3])
    assert (
        told.filter(event="bot.rated_paused").count()
        == told.filter(event="bot.rated_resumed").count()
    )
    # the ladder went on for everyone meanwhile
    Bot.objects.update(status=Bot.Status.PAUSED)
    league = ladder_league(POOL)
    wait_for(lambda: not league.matches.filter(status__in=IN_FLIGHT).exists(), 60, "the drain")


def _busy() -> bool:
    return ladder_league(POOL).matches.filter(status=Match.Status.RUNNING).count() >= 2
