"""Celery tasks of leagues: thin, ids in, idempotent; the work is in ``tournaments.services``.

``leagues.play_match`` is one task per match (one duplicate set of games), never per move or per
game: a task costs milliseconds of CPU, a game hundreds of bot calls. It is acknowledged only
after it ran (``acks_late``) and requeued if its worker dies, which is safe because playing a
match is idempotent (``services.matches``). Only our own infrastructure failing, the database or
Redis, is retried, with backoff; bot faults never raise.

Run workers with ``--pool threads --concurrency 32`` (or more): a match spends its time waiting
for bots, and every match of a worker shares one event loop (``services.matches``). A worker that
begins a warm shutdown releases the matches it is playing (``worker_shutting_down``): their
unfinished games are played again later, never forfeited (the threads pool; a prefork child
finishes its match, or is killed and recovered).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable

import redis.exceptions
from celery import shared_task
from celery.exceptions import Reject
from celery.signals import worker_ready, worker_shutting_down
from django.conf import settings
from django.db import OperationalError
from django.utils import timezone
from kombu.exceptions import ChannelError
from kombu.exceptions import OperationalError as BrokerError

from tournaments.models import BotCheck
from tournaments.services.bots import bot_check, bots_due_for_check
from tournaments.services.leagues import ladder_start
from tournaments.services.matches import (
    DEFAULT_MATCH_TIME_LIMIT_S,
    match_play,
    matches_recover,
    matches_sweep,
    stopping,
)

# What sending a message raises when the broker (Redis) is unreachable.
BROKER_ERRORS = (BrokerError, redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)
INFRASTRUCTURE_ERRORS = (OperationalError, *BROKER_ERRORS)
# How long asking "is the broker there?" may take before the answer is no.
BROKER_CHECK_TIMEOUT_S = 2.0
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
    """A match released because of the service (``services.matches``) goes back to the queue:
    at once when this worker is stopping (another worker, or this one restarted, takes it),
    after ``retry_in_s`` otherwise."""
    outcome = match_play(
        match_id=match_id, worker=self.request.hostname or "", claim=self.request.id or ""
    )
    if outcome.status == "released":
        if outcome.stopping:
            raise Reject("worker stopping: match released", requeue=True)
        play_match.apply_async((match_id,), countdown=outcome.retry_in_s, ignore_result=True)
    return {"match": match_id, **outcome.__dict__}


def enqueue_matches(match_ids: Iterable[int]) -> None:
    """Send one ``play_match`` per id, in schedule order. Call it from ``transaction.on_commit``.

    No one waits for these results (the database has them), so sending does not subscribe to
    them in the result store: a send while Redis is down fails at once, with a broker error.
    """
    for match_id in match_ids:
        play_match.apply_async((match_id,), ignore_result=True)


@shared_task(name="leagues.recover_matches", autoretry_for=INFRASTRUCTURE_ERRORS, max_retries=5)
def recover_matches(worker: str, since: str | None = None) -> list[int]:
    """``since``: ISO time the worker started; matches it began after that are its own."""
    started = datetime.datetime.fromisoformat(since) if since else None
    return matches_recover(worker=worker, since=started)


@worker_ready.connect
def _recover_after_restart(sender, **kwargs) -> None:
    """A starting worker re-enqueues what a dead worker (itself, or any other) left behind."""
    recover_matches.delay(sender.hostname, timezone.now().isoformat())


def broker_reachable(timeout: float = BROKER_CHECK_TIMEOUT_S) -> bool:
    """True when a message could be sent right now: one bounded connection attempt, no retry.

    Always True when tasks run eagerly (tests), where no broker is involved.
    """
    from config.celery_app import app

    if app.conf.task_always_eager:
        return True
    connection = app.connection_for_write(connect_timeout=timeout)
    try:
        connection.ensure_connection(max_retries=1, interval_start=0, timeout=timeout)
    except (*BROKER_ERRORS, OSError):
        return False
    finally:
        connection.release()
    return True


@worker_shutting_down.connect
def _release_matches_when_stopping(sender, **kwargs) -> None:
    """Warm shutdown (SIGTERM, Ctrl-C): matches in play stop at once and are handed back, so no
    game is played on while the bots may be stopping too (``services.matches``)."""
    stopping.begin()


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
    name="leagues.run_ladder",
    acks_late=True,
    autoretry_for=INFRASTRUCTURE_ERRORS,
    max_retries=3,
    retry_backoff=True,
)
def run_ladder() -> list[int]:
    """The standing ladder (beat): a rated league among the fit bots of each pool."""
    return [league.id for league in ladder_start()]


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
