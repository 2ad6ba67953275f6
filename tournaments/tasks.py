"""Celery tasks of leagues: thin, ids in, idempotent; the work is in ``tournaments.services``.

``leagues.play_match`` is one task per match (one duplicate set of games), never per move or per
game: a task costs milliseconds of CPU, a game hundreds of bot calls. It is acknowledged only
after it ran (``acks_late``) and requeued if its worker dies, which is safe because playing a
match is idempotent (``services.matches``). Only our own infrastructure failing, the database or
Redis, is retried, with backoff; bot faults never raise.

Run workers with ``--pool threads --concurrency 32`` (or more): a match spends its time waiting
for bots, and every match of a worker shares one event loop (``services.matches``).
"""

from __future__ import annotations

import datetime
import threading
from collections import deque
from collections.abc import Iterable

import redis.exceptions
from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings
from django.db import OperationalError
from django.utils import timezone
from kombu.exceptions import ChannelError
from kombu.exceptions import OperationalError as BrokerError

from tournaments.models import Bot, BotCheck
from tournaments.services.bots import bot_check, bots_due_for_check
from tournaments.services.ladder import ladder_fill, ladder_tick
from tournaments.services.matches import (
    DEFAULT_MATCH_TIME_LIMIT_S,
    match_play,
    matches_recover,
    matches_sweep,
)

INFRASTRUCTURE_ERRORS = (OperationalError, BrokerError, redis.exceptions.ConnectionError)
# A scheduled run checks at most this many bots; the rest are due again at the next run.
CHECKS_PER_RUN = 50


@shared_task(
    name="leagues.play_match",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=INFRASTRUCTURE_ERRORS,
    max_retries=5,
    retry_backoff=2,
    retry_backoff_max=60,
    retry_jitter=True,
    # Above the match's own time limit, which aborts slow games cleanly first. (Celery enforces
    # these in prefork pools only; in a threads pool the match's own limit is what holds.)
    soft_time_limit=DEFAULT_MATCH_TIME_LIMIT_S + 30,
    time_limit=DEFAULT_MATCH_TIME_LIMIT_S + 60,
)
def play_match(self, match_id: int) -> dict:
    outcome = match_play(
        match_id=match_id, worker=self.request.hostname or "", claim=self.request.id or ""
    )
    return {"match": match_id, **outcome.__dict__}


_eager = threading.local()


def enqueue_matches(match_ids: Iterable[int]) -> None:
    """Send one ``play_match`` per id, in schedule order. Call it from ``transaction.on_commit``.

    With eager Celery (tests) a task runs inside ``delay``; a match that schedules more (a
    version test after each set) would then play them nested, one level deeper per set, until
    Python's recursion limit. So, as a real queue would, matches sent while one is being played
    eagerly wait in a first-in first-out list that the outermost call plays in turn.
    """
    if not play_match.app.conf.task_always_eager:
        for match_id in match_ids:
            play_match.delay(match_id)
        return
    waiting = getattr(_eager, "waiting", None)
    if waiting is not None:
        waiting.extend(match_ids)
        return
    _eager.waiting = waiting = deque(match_ids)
    try:
        while waiting:
            play_match.delay(waiting.popleft())
    finally:
        _eager.waiting = None


@shared_task(name="leagues.recover_matches", autoretry_for=INFRASTRUCTURE_ERRORS, max_retries=5)
def recover_matches(worker: str, since: str | None = None) -> list[int]:
    """``since``: ISO time the worker started; matches it began after that are its own."""
    started = datetime.datetime.fromisoformat(since) if since else None
    return matches_recover(worker=worker, since=started)


@worker_ready.connect
def _recover_after_restart(sender, **kwargs) -> None:
    """A starting worker re-enqueues what a dead worker (itself, or any other) left behind."""
    recover_matches.delay(sender.hostname, timezone.now().isoformat())


def queued_tasks() -> int:
    """How many task messages wait in the broker's default queue (not those being run)."""
    from config.celery_app import app

    with app.connection_for_read() as connection:
        try:
            return connection.default_channel.queue_declare(
                queue=app.conf.task_default_queue, passive=True
            ).message_count
        except ChannelError:  # the queue does not exist (yet, or any more): nothing waits
            return 0


@shared_task(name="leagues.sweep", autoretry_for=INFRASTRUCTURE_ERRORS, max_retries=3)
def sweep_matches() -> list[int]:
    """Beat: re-send the pending matches of running leagues that went quiet (a lost queue)."""
    return matches_sweep()


@shared_task(
    name="bots.check_due",
    autoretry_for=INFRASTRUCTURE_ERRORS,
    max_retries=3,
    retry_backoff=True,
    soft_time_limit=240,
    time_limit=300,
)
def check_due_bots() -> list[int]:
    """Beat: run the protocol check on every bot not checked for a while (health follows)."""
    every_s = settings.ESCOBA_BOT_CHECK_INTERVAL_S or 3600
    checked = []
    for bot in bots_due_for_check(every_s=every_s)[:CHECKS_PER_RUN]:
        bot_check(bot=bot, trigger=BotCheck.Trigger.SCHEDULE)
        checked.append(bot.id)
    return checked


# -- the ladder (tournaments.services.ladder) ---------------------------------------------------


@shared_task(
    name="ladder.tick",
    autoretry_for=INFRASTRUCTURE_ERRORS,
    max_retries=2,
    retry_backoff=True,
    soft_time_limit=60,
    time_limit=90,
)
def tick_ladder() -> dict[str, list[int]]:
    """Beat, every ``ESCOBA_LADDER_TICK_S``: check newcomers, settle tests, fill every pool."""
    return ladder_tick()


@shared_task(
    name="ladder.fill",
    autoretry_for=INFRASTRUCTURE_ERRORS,
    max_retries=2,
    retry_backoff=True,
    soft_time_limit=60,
    time_limit=90,
)
def fill_ladder(pool: str) -> list[int]:
    """Sent when a ladder set ends, so the pool's workers need not wait for the next tick."""
    return ladder_fill(pool=pool)


def enqueue_ladder_fill(pool: str) -> None:
    fill_ladder.delay(pool)


@shared_task(
    name="bots.check",
    autoretry_for=INFRASTRUCTURE_ERRORS,
    max_retries=2,
    retry_backoff=True,
    soft_time_limit=60,
    time_limit=90,
)
def check_bot(bot_id: int) -> bool | None:
    """The protocol check of one bot; its pass or failure, None when the bot is gone."""
    bot = Bot.objects.filter(pk=bot_id).first()
    if bot is None:
        return None
    return bot_check(bot=bot, trigger=BotCheck.Trigger.SCHEDULE).passed


def enqueue_checks(bot_ids: Iterable[int]) -> None:
    for bot_id in bot_ids:
        check_bot.delay(bot_id)
