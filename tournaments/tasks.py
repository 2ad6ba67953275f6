"""Celery tasks of leagues and bots: thin, ids in, idempotent; the work is in the services.

``leagues.play_match`` is one task per match (one duplicate set of games), never per move or per
game: a task costs milliseconds of CPU, a game hundreds of bot calls. It is acknowledged only
after it ran (``acks_late``) and requeued if its worker dies, which is safe because playing a
match is idempotent (``services.matches``). Only our own infrastructure failing, the database or
Redis, is retried, with backoff; bot faults never raise.

Tasks are sent only through ``tournaments.queueing`` (by name, so that services need not import
this module); a match goes to its league's queue (``queueing.MATCH_QUEUES``: games for the
ladder, leagues, challenges), every other task to the queue ``CELERY_TASK_ROUTES`` names.

Run games workers with ``--pool threads --concurrency 32`` (or more): a match spends its time
waiting for bots, and every match of a worker shares one event loop (``bot_calls.game_loop``). A
worker that begins a warm shutdown releases the matches it is playing (``worker_shutting_down``):
their unfinished games are played again later, never forfeited (the threads pool; a prefork
child finishes its match, or is killed and recovered).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable

from celery import Task, shared_task
from celery.exceptions import Reject
from celery.signals import worker_ready, worker_shutting_down
from django.conf import settings
from django.core.cache import cache
from django.db import OperationalError
from django.db.models import Q
from django.utils import timezone

from tournaments import queueing
from tournaments.bot_calls.game_loop import stopping
from tournaments.bot_check_progress import check_progress_clear, check_progress_running
from tournaments.models import Bot, BotCheck
from tournaments.redis_locks import held as _lock
from tournaments.services import notifications
from tournaments.services.baselines import (
    baselines_sweep,
    deal_baseline_compute,
    rated_set_correct,
)
from tournaments.services.bots import bot_check, bots_due_for_check
from tournaments.services.email_verification import (
    VerificationMailFailed,
    email_verification_send,
)
from tournaments.services.ladder import ladder_fill, ladder_tick
from tournaments.services.league_schedules import league_schedule_next, leagues_schedule_sweep
from tournaments.services.match_leases import LEASE_S, matches_recover, matches_sweep
from tournaments.services.matches import match_play
from tournaments.services.play import play_advance, play_clocks_enforce
from tournaments.services.rated_sets import rated_set_deals_value
from tournaments.services.rating_fits import ratings_fit_coalesced, ratings_sweep

INFRASTRUCTURE_ERRORS = (OperationalError, *queueing.BROKER_ERRORS)
# When the scheduled checks are off (interval 0) but check_due is run by hand: bots unchecked
# for an hour are due.
MANUAL_CHECK_INTERVAL_S = 3600
# Options shared by tasks of one kind; each task adds its name, retries and what else differs.
# A task of seconds at most: a query and a few messages, one ladder fill, one deal's value.
SHORT_TASK = {
    "autoretry_for": INFRASTRUCTURE_ERRORS,
    "retry_backoff": True,
    "soft_time_limit": 60,
    "time_limit": 90,
}
# A protocol check: it calls the bot a dozen times at ESCOBA_BOT_CHECK_TIMEOUT_MS each, and stops
# itself at its own deadline well inside these limits.
CHECK_TASK = {**SHORT_TASK, "soft_time_limit": 120, "time_limit": 150}
# A batch of a league's schedule, or a pool's rating fit: minutes at most, retried with backoff.
LONG_TASK = {
    "autoretry_for": INFRASTRUCTURE_ERRORS,
    "max_retries": 5,
    "retry_backoff": 2,
    "retry_backoff_max": 60,
    "soft_time_limit": 240,
    "time_limit": 270,
}


class MatchTask(Task):
    """``play_match``'s limits follow ``ESCOBA_MATCH_TIME_LIMIT_S`` (see ``play_match_limits``).

    Messages carry the limits of the moment they were sent; these properties are what a worker
    applies to a message without them, read when the worker starts.
    """

    @property
    def soft_time_limit(self) -> float:
        return queueing.play_match_limits()[0]

    @property
    def time_limit(self) -> float:
        return queueing.play_match_limits()[1]


@shared_task(
    name=queueing.PLAY_MATCH,
    base=MatchTask,
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=INFRASTRUCTURE_ERRORS,
    max_retries=5,
    retry_backoff=2,
    retry_backoff_max=60,
    retry_jitter=True,
)
def play_match(self, match_id: int) -> dict:
    """A match released because of the service (``services.matches``) goes back to the queue:
    at once when this worker is stopping (another worker, or this one restarted, takes it),
    after ``retry_in_s`` otherwise. (Celery enforces time limits in prefork pools only; in a
    threads pool the match's own limit is what holds.)"""
    outcome = match_play(
        match_id=match_id,
        worker=self.request.hostname or "",
        claim=self.request.id or "",
        from_queue=True,
    )
    if outcome.status == "released":
        if outcome.stopping:
            raise Reject("worker stopping: match released", requeue=True)
        queueing.matches_enqueue([match_id], countdown=outcome.retry_in_s)
    return {"match": match_id, **outcome.__dict__}


@shared_task(name=queueing.RECOVER_MATCHES, autoretry_for=INFRASTRUCTURE_ERRORS, max_retries=5)
def recover_matches(worker: str, since: str | None = None) -> list[int]:
    """``since``: ISO time the worker started; matches it began after that are its own."""
    started = datetime.datetime.fromisoformat(since) if since else None
    return matches_recover(worker=worker, since=started)


def plays_games(consumed_queues: Iterable[str]) -> bool:
    """Whether a worker consuming these queues plays matches (a worker started without ``-Q``
    consumes every queue of ``CELERY_TASK_QUEUES``)."""
    return not set(consumed_queues).isdisjoint(queueing.MATCH_QUEUES)


@worker_ready.connect
def _recover_after_restart(sender, **kwargs) -> None:
    """A starting games worker re-enqueues what a dead worker (itself, or any other) left
    behind; a maintenance worker never plays a match, so it has nothing to recover."""
    if plays_games(sender.app.amqp.queues.consume_from):
        queueing.matches_recovery_enqueue(worker=sender.hostname, since=timezone.now().isoformat())


@worker_shutting_down.connect
def _release_matches_when_stopping(sender, **kwargs) -> None:
    """Warm shutdown (SIGTERM, Ctrl-C): matches in play stop at once and are handed back, so no
    game is played on while the bots may be stopping too (``services.matches``)."""
    stopping.begin()


@shared_task(name=queueing.SWEEP_MATCHES, autoretry_for=INFRASTRUCTURE_ERRORS, max_retries=3)
def sweep_matches() -> list[int]:
    """Beat: re-send the pending matches of running leagues that went quiet (a lost queue), and
    the scheduling of leagues whose schedule stopped short of its plan."""
    leagues_schedule_sweep(idle_s=LEASE_S)
    return matches_sweep()


@shared_task(name=queueing.SCHEDULE_LEAGUE, acks_late=True, **LONG_TASK)
def schedule_league(league_id: int) -> bool:
    """Write the next batch of a started league's schedule; send this task again while more
    remain, so the maintenance queue's other tasks run between batches. Idempotent."""
    more = league_schedule_next(league_id=league_id)
    if more:
        queueing.league_schedule_enqueue(league_id)
    return more


def _check_interval_s() -> float:
    return settings.ESCOBA_BOT_CHECK_INTERVAL_S or MANUAL_CHECK_INTERVAL_S


@shared_task(name=queueing.CHECK_DUE_BOTS, max_retries=3, **SHORT_TASK)
def check_due_bots() -> list[int]:
    """Beat: send one ``bots.check_one`` per bot not checked for a while (health follows).

    Two runs never overlap (a lock); a bot whose check is already waiting in the queue is not
    sent again until that check ran or its lock expired.
    """
    with _lock("bots.check_due", SHORT_TASK["time_limit"]) as held:
        if not held:
            return []
        due = list(bots_due_for_check(every_s=_check_interval_s()).values_list("id", flat=True))
        waiting = cache.get_many([_waiting_key(bot_id) for bot_id in due])
        due = [bot_id for bot_id in due if _waiting_key(bot_id) not in waiting]
        cache.set_many({_waiting_key(bot_id): True for bot_id in due}, timeout=_check_interval_s())
        queueing.bot_checks_enqueue(due)
        return due


def _waiting_key(bot_id: int) -> str:
    """Set while a scheduled check of the bot waits in the queue or runs."""
    return f"bots.check_one:{bot_id}"


@shared_task(name=queueing.CHECK_BOT, acks_late=True, max_retries=3, **CHECK_TASK)
def check_bot(bot_id: int) -> bool | None:
    """Run the scheduled protocol check of one bot: whether it passed, or None when the bot is
    no longer due (checked since it was sent, paused, deleted) and nothing was done."""
    try:
        with _lock(f"{_waiting_key(bot_id)}:running", CHECK_TASK["time_limit"]) as held:
            bot = bots_due_for_check(every_s=_check_interval_s()).filter(pk=bot_id).first()
            if not held or bot is None:
                return None
            return bot_check(bot=bot, trigger=BotCheck.Trigger.SCHEDULE).passed
    finally:
        cache.delete(_waiting_key(bot_id))


@shared_task(name=queueing.CHECK_BOT_FOR_OWNER, max_retries=3, **CHECK_TASK)
def check_bot_for_owner(bot_id: int) -> bool | None:
    """The check an owner asked for from the web page: whether it passed, None when the bot is
    gone. The page follows it (tournaments/bot_check_progress.py)."""
    try:
        bot = Bot.objects.filter(pk=bot_id).first()
        if bot is None:
            return None
        check_progress_running(bot_id)
        return bot_check(bot=bot, trigger=BotCheck.Trigger.OWNER).passed
    finally:
        check_progress_clear(bot_id)


# -- notifications: on the maintenance queue (CELERY_TASK_ROUTES), never behind the games ------


# Idempotent (a delivered notification is not delivered again) and short: at most one SMTP
# exchange or one webhook call per run.
NOTIFICATION_TASK = {
    "bind": True,
    "acks_late": True,
    "autoretry_for": INFRASTRUCTURE_ERRORS,
    "retry_backoff": True,
    "soft_time_limit": 60,
    "time_limit": 90,
}


def _deliver_or_retry(task, deliver, give_up, notification_id: int) -> None:
    """Run one delivery; when the far end failed, retry with a doubling delay, and after the
    last retry record the failure (`give_up`) instead of raising."""
    try:
        deliver(notification_id=notification_id)
    except notifications.DeliveryError as error:
        if task.request.retries >= task.max_retries:
            give_up(notification_id=notification_id)
            return
        delay = notifications.retry_delay_s(task.request.retries)
        raise task.retry(exc=error, countdown=delay) from error


@shared_task(
    name=queueing.SEND_NOTIFICATION_EMAIL,
    max_retries=notifications.EMAIL_RETRIES,
    **NOTIFICATION_TASK,
)
def send_notification_email(self, notification_id: int) -> None:
    """Email one notification (Django's mail backend)."""
    _deliver_or_retry(
        self,
        notifications.notification_email_deliver,
        notifications.notification_email_failed,
        notification_id,
    )


@shared_task(
    name=queueing.CALL_NOTIFICATION_WEBHOOK,
    max_retries=notifications.WEBHOOK_RETRIES,
    **NOTIFICATION_TASK,
)
def call_notification_webhook(self, notification_id: int) -> None:
    """POST one notification to its owner's webhook; one that keeps failing is suspended."""
    _deliver_or_retry(
        self,
        notifications.notification_webhook_deliver,
        notifications.notification_webhook_failed,
        notification_id,
    )


# -- ratings: on the maintenance queue (CELERY_TASK_ROUTES) --------------------------------


@shared_task(name=queueing.FIT_RATINGS, **LONG_TASK)
def fit_ratings(pool: str) -> int:
    """Refit a pool after results (coalesced: a fit already running for it takes this one over,
    see ``services.rating_fits.ratings_fit_coalesced``). Returns the number of fits run here."""
    return ratings_fit_coalesced(pool=pool)


@shared_task(name=queueing.SWEEP_RATINGS, autoretry_for=INFRASTRUCTURE_ERRORS, max_retries=3)
def sweep_ratings() -> list[str]:
    """Beat: refit the pools with rated sets newer than their latest fit (a lost fit task)."""
    return ratings_sweep()


# -- the baseline correction (tournaments.services.baselines) ------------------------------------


# acks_late: idempotent, a value of the same deal is kept.
@shared_task(name=queueing.VALUE_GAME, acks_late=True, max_retries=3, **SHORT_TASK)
def value_game(game_id: int) -> int | None:
    """Value a finished rated game's deal, then correct its set if that was the last value."""
    baseline = deal_baseline_compute(game_id=game_id)
    if baseline is None:
        return None
    rated_set_correct(match_id=baseline.game.match_id)
    return baseline.pk


@shared_task(name=queueing.CORRECT_SET, autoretry_for=INFRASTRUCTURE_ERRORS, max_retries=3)
def correct_set(match_id: int) -> bool:
    """Value a just-recorded rated set's deals, then correct it (its games send no message)."""
    return rated_set_deals_value(match_id=match_id) is not None


@shared_task(name=queueing.SWEEP_BASELINES, autoretry_for=INFRASTRUCTURE_ERRORS, max_retries=3)
def sweep_baselines() -> dict[str, int]:
    """Beat: value, correct and refit what a lost message left behind."""
    return baselines_sweep()


# -- the ladder (tournaments.services.ladder) ---------------------------------------------------


@shared_task(name=queueing.TICK_LADDER, max_retries=2, **SHORT_TASK)
def tick_ladder() -> dict[str, list[int]]:
    """Beat, every ``ESCOBA_LADDER_TICK_S``: check newcomers, settle tests, fill every pool."""
    return ladder_tick()


@shared_task(name=queueing.FILL_LADDER, max_retries=2, **SHORT_TASK)
def fill_ladder(pool: str) -> list[int]:
    """Sent when a ladder set ends, so the pool's workers need not wait for the next tick."""
    return ladder_fill(pool=pool)


@shared_task(name=queueing.CHECK_NEWCOMER, max_retries=2, **CHECK_TASK)
def check_newcomer(bot_id: int) -> bool | None:
    """The protocol check of a bot whose health is still unknown (the ladder's newcomers,
    ``services.ladder.bots_to_check``) or that is paused for no-shows (``bots_to_recheck``);
    None when it is no longer such a bot."""
    bot = Bot.objects.filter(pk=bot_id, status=Bot.Status.ACTIVE).filter(
        Q(health=Bot.Health.UNKNOWN) | Q(rated_paused_at__isnull=False)
    )
    found = bot.first()
    if found is None:
        return None
    return bot_check(bot=found, trigger=BotCheck.Trigger.SCHEDULE).passed


@shared_task(
    name=queueing.SEND_EMAIL_VERIFICATION,
    max_retries=notifications.EMAIL_RETRIES,
    **NOTIFICATION_TASK,
)
def send_email_verification(self, user_id: int, email: str) -> bool:
    """Mail an owner's address its confirmation link; retried while the mail server fails."""
    try:
        return email_verification_send(user_id=user_id, email=email)
    except VerificationMailFailed as error:
        if self.request.retries >= self.max_retries:
            return False
        delay = notifications.retry_delay_s(self.request.retries)
        raise self.retry(exc=error, countdown=delay) from error


@shared_task(
    name=queueing.PLAY_ADVANCE,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=INFRASTRUCTURE_ERRORS,
    max_retries=5,
    retry_backoff=2,
    retry_jitter=True,
)
def advance_person_game(person_game_id: int) -> str:
    """The bots' turns of a person's game, up to the person's turn (``services.play``);
    idempotent, so a redelivery after a worker died plays on from the stored answers."""
    return play_advance(person_game_id=person_game_id)


@shared_task(name=queueing.PLAY_CLOCKS, autoretry_for=INFRASTRUCTURE_ERRORS, max_retries=3)
def person_clocks() -> list[int]:
    """Beat: the fallback move for every person whose move clock ran out."""
    return play_clocks_enforce()
