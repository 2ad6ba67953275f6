"""The one module that sends Celery tasks; ``tournaments.tasks`` defines them.

Services enqueue work through the functions here, by the task's registered name, so no service
imports the task module (which imports the services: that was an import cycle). Every send
honours ``CELERY_TASK_ALWAYS_EAGER`` and ``CELERY_TASK_ROUTES`` like ``task.delay`` would. The
import contracts in pyproject.toml (``make test`` runs ``lint-imports``) and
tests/foundation/test_import_contracts.py hold the rest of the code to this: no other module
sends a task.

Queues: a match is sent to the queue of its league's kind (``MATCH_QUEUES``): games (the ladder,
and the recovery and the sweep that re-send matches), leagues (users' leagues) and challenges
(challenges and version tests). A worker that consumes several queues takes from each in turn
(kombu's Redis transport rotates them), so a user's thousand-game league waits behind the ladder's
next set, not the ladder behind it (docs/scaling.md, "Queues"). Maintenance (protocol checks,
the ladder's ticks, scheduling, anything else) has its own workers, so a flood of checks never
delays a game (config/settings/base.py routes them).

A match sent is marked in the broker's Redis, beside its message, until a worker that took the
message has begun the match or found it has nothing to do (``match_dequeued``, after
``match_begin`` commits), so a resume sends only the matches with no message waiting
(``matches_enqueue(..., unless_queued=True)``), and of those only the ones still pending once
marked: a match a worker has just begun is not sent again. Pausing and resuming again and again
leaves at most one message per waiting match, and none for a match in play.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Iterable

import redis.exceptions
from celery import Task, current_app
from django.conf import settings
from django.db import transaction
from kombu.exceptions import ChannelError
from kombu.exceptions import OperationalError as BrokerError

from tournaments.models import League, Match

logger = logging.getLogger(__name__)

GAMES_QUEUE = "games"
LEAGUES_QUEUE = "leagues"
CHALLENGES_QUEUE = "challenges"
MAINTENANCE_QUEUE = "maintenance"
# Where each kind of league's matches wait: the ladder, users' leagues, and what a user asked
# for on demand each have a queue, consumed in turn by the same games workers.
MATCH_QUEUES = (GAMES_QUEUE, LEAGUES_QUEUE, CHALLENGES_QUEUE)
QUEUE_OF_KIND = {
    League.Kind.LADDER: GAMES_QUEUE,
    League.Kind.LEAGUE: LEAGUES_QUEUE,
    League.Kind.CHALLENGE: CHALLENGES_QUEUE,
    League.Kind.TEST: CHALLENGES_QUEUE,
}
# How long a match stays marked as sent when no worker takes its message (a lost queue): then
# a resume may send it again.
QUEUED_MARK_S = 24 * 3600

PLAY_MATCH = "leagues.play_match"
SCHEDULE_LEAGUE = "leagues.schedule"
RECOVER_MATCHES = "leagues.recover_matches"
SWEEP_MATCHES = "leagues.sweep"
TICK_LADDER = "ladder.tick"
FILL_LADDER = "ladder.fill"
CHECK_NEWCOMER = "ladder.check_newcomer"
CHECK_DUE_BOTS = "bots.check_due"
CHECK_BOT = "bots.check_one"
CHECK_BOT_FOR_OWNER = "bots.check_for_owner"
SEND_NOTIFICATION_EMAIL = "notifications.send_email"
CALL_NOTIFICATION_WEBHOOK = "notifications.call_webhook"
SEND_EMAIL_VERIFICATION = "notifications.send_verification"
FIT_RATINGS = "ratings.fit_pool"
SWEEP_RATINGS = "ratings.sweep"
BASELINES_QUEUE = "baselines"
VALUE_GAME = "baselines.value_game"
CORRECT_SET = "baselines.correct_set"
SWEEP_BASELINES = "baselines.sweep"
PLAY_ADVANCE = "play.advance"
PLAY_CLOCKS = "play.clocks"

# What sending a message raises when the broker (Redis) is unreachable.
BROKER_ERRORS = (BrokerError, redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)
# How long asking "is the broker there?" may take before the answer is no.
BROKER_CHECK_TIMEOUT_S = 2.0


def play_match_limits() -> tuple[float, float]:
    """Celery's soft and hard time limits of one ``play_match``: above the match time limit
    (setting ``ESCOBA_MATCH_TIME_LIMIT_S``) as it is now, so raising that raises these."""
    limit = float(settings.ESCOBA_MATCH_TIME_LIMIT_S)
    return (
        limit + settings.ESCOBA_MATCH_TASK_SOFT_MARGIN_S,
        limit + settings.ESCOBA_MATCH_TASK_HARD_MARGIN_S,
    )


def _task(name: str) -> Task:
    """The registered task ``name``. A process that has not imported the task modules yet (the
    web server) imports them first, as a worker does when it starts."""
    app = current_app
    if name not in app.tasks:
        app.loader.import_default_modules()
    return app.tasks[name]


def _queued_key(match_id: int) -> str:
    return f"escoba:match-queued:{match_id}"


def _mark_queued(app, ids: list[int], *, unless_queued: bool) -> list[int]:
    """Mark the matches as having a message waiting; with ``unless_queued``, only those not
    marked yet, and return just them. In the broker's own Redis (kombu's Redis channel holds a
    redis-py client), so every web process and worker sees the same marks, and a Redis that
    loses its messages loses their marks with them."""
    if not ids:
        return ids
    with app.pool.acquire(block=True) as connection:
        pipe = connection.default_channel.client.pipeline(transaction=False)
        for match_id in ids:
            pipe.set(_queued_key(match_id), 1, ex=QUEUED_MARK_S, nx=unless_queued)
        marked = pipe.execute()
    return [match_id for match_id, done in zip(ids, marked, strict=True) if done]


def _unmark_queued(app, ids: list[int]) -> None:
    if ids:
        with app.pool.acquire(block=True) as connection:
            connection.default_channel.client.delete(*(_queued_key(i) for i in ids))


def _still_pending(app, ids: list[int]) -> list[int]:
    """Of the matches just marked, those still pending, read after the marks were set; the
    others are unmarked. A worker unmarks a match only once its begin has committed, so a match
    that this read finds pending has no worker between taking its message and beginning it."""
    if not ids:
        return ids
    pending = set(
        Match.objects.filter(id__in=ids, status=Match.Status.PENDING).values_list("id", flat=True)
    )
    _unmark_queued(app, [match_id for match_id in ids if match_id not in pending])
    return [match_id for match_id in ids if match_id in pending]


def match_queues(match_ids: Iterable[int]) -> dict[int, str]:
    """The queue of each match: its league's kind's (``QUEUE_OF_KIND``)."""
    ids = list(match_ids)
    kinds = dict(Match.objects.filter(id__in=ids).values_list("id", "league__kind"))
    return {match_id: QUEUE_OF_KIND.get(kinds.get(match_id), GAMES_QUEUE) for match_id in ids}


def match_dequeued(match_id: int) -> None:
    """A worker took the match's message and has begun the match (or found nothing to do):
    none of it waits any more (see the module docstring). Not sooner: between the take and the
    begin, the match still reads as pending, and a resume would send it again."""
    app = current_app
    if app.conf.task_always_eager:
        return
    try:
        _unmark_queued(app, [match_id])
    except BROKER_ERRORS:  # the match is being played; a mark left over expires, the sweep sends
        logger.warning("could not unmark match %s as queued", match_id, exc_info=True)


def matches_enqueue(
    match_ids: Iterable[int], *, countdown: float | None = None, unless_queued: bool = False
) -> list[int]:
    """Send one ``play_match`` per id, in the order given, each to its league's queue with the
    time limits of now (``countdown``: not before that many seconds); returns the ids sent.

    ``unless_queued`` skips the matches whose message still waits, and those no longer pending
    once marked (a resume, which read them pending before a worker began them); otherwise every
    id is sent (the sweep and the recovery, which send again what a lost queue or a dead worker
    may have lost). No one waits for these results (the database has them), so sending does not
    subscribe to them in the result store: a send while Redis is down fails at once, with a
    broker error.
    """
    ids = list(match_ids)
    soft, hard = play_match_limits()
    task = _task(PLAY_MATCH)
    if task.app.conf.task_always_eager:  # played at once: nothing waits
        _eager_play(task, ids)
        return ids
    ids = _mark_queued(task.app, ids, unless_queued=unless_queued)
    if unless_queued:
        ids = _still_pending(task.app, ids)
    queues = match_queues(ids)
    sent = 0
    try:
        for match_id in ids:
            task.apply_async(
                (match_id,),
                queue=queues[match_id],
                countdown=countdown,
                ignore_result=True,
                soft_time_limit=soft,
                time_limit=hard,
            )
            sent += 1
    except BROKER_ERRORS:
        # What was not sent is not waiting: a later resume or sweep may send it.
        try:
            _unmark_queued(task.app, ids[sent:])
        except BROKER_ERRORS:
            pass  # marked but not sent: the sweep sends them, and the marks expire
        raise
    return ids


_eager = threading.local()


def _eager_play(task: Task, match_ids: Iterable[int]) -> None:
    """Eager Celery (tests) runs a task inside its send: a match that schedules more (a version
    test after each set) would play them nested, one level deeper per set, up to Python's
    recursion limit. So, as a real queue would, matches sent while one is played eagerly wait in
    a first-in first-out list that the outermost send plays in turn."""
    waiting = getattr(_eager, "waiting", None)
    if waiting is not None:
        waiting.extend(match_ids)
        return
    _eager.waiting = waiting = deque(match_ids)
    try:
        while waiting:
            task.apply_async((waiting.popleft(),), ignore_result=True)
    finally:
        _eager.waiting = None


def matches_enqueue_on_commit(match_ids: Iterable[int]) -> None:
    """``matches_enqueue`` once the current transaction commits (at once outside one), so a
    worker never looks for a match that is not there yet or was rolled back.

    The transaction has committed by then: a queue lost in between is logged, not raised, and
    the beat sweep (``services.match_leases.matches_sweep``) sends the matches once it is back.
    """
    _send_on_commit(list(match_ids), unless_queued=False)


def matches_requeue_on_commit(match_ids: Iterable[int]) -> None:
    """Like ``matches_enqueue_on_commit``, but only the matches with no message waiting (a
    resume: see the module docstring)."""
    _send_on_commit(list(match_ids), unless_queued=True)


def _send_on_commit(ids: list[int], *, unless_queued: bool) -> None:
    def send() -> None:
        try:
            if unless_queued:
                matches_enqueue(ids, unless_queued=True)
            else:
                matches_enqueue(ids)
        except BROKER_ERRORS:
            logger.warning(
                "the match queue failed while sending %s matches; the sweep will send them",
                len(ids),
                exc_info=True,
            )

    transaction.on_commit(send)


def league_schedule_enqueue(league_id: int) -> None:
    """Write (and send) the next batch of a started league's schedule (``leagues.schedule``).
    Like a match, not subscribed to in the result store: a send while Redis is down fails at
    once, with a broker error."""
    _task(SCHEDULE_LEAGUE).apply_async((league_id,), ignore_result=True)


def league_schedule_enqueue_on_commit(league_id: int) -> None:
    """``league_schedule_enqueue`` once the current transaction commits. A queue lost in between
    is logged: the league then shows a schedule short of its plan, and the sweep
    (``services.league_schedules.leagues_schedule_sweep``) sends it again."""

    def send() -> None:
        try:
            league_schedule_enqueue(league_id)
        except BROKER_ERRORS:
            logger.warning("the queue failed while scheduling league %s", league_id, exc_info=True)

    transaction.on_commit(send)


def play_advance_enqueue(person_game_id: int) -> None:
    """Let the bots of a person's game play their turns (games queue). Call it from
    ``on_commit``."""
    _task(PLAY_ADVANCE).apply_async((person_game_id,), ignore_result=True)


def matches_recovery_enqueue(*, worker: str, since: str) -> None:
    """Ask for the matches a dead run of ``worker`` left behind to be sent again."""
    _task(RECOVER_MATCHES).delay(worker, since)


def bot_checks_enqueue(bot_ids: Iterable[int]) -> None:
    """Send one ``bots.check_one`` per bot: each check is its own task with its own limits."""
    task = _task(CHECK_BOT)
    for bot_id in bot_ids:
        task.delay(bot_id)


def owner_check_enqueue(bot_id: int) -> None:
    """Send the check an owner asked for (the web page); it is not a scheduled one."""
    _task(CHECK_BOT_FOR_OWNER).delay(bot_id)


def ladder_fill_enqueue(pool: str) -> None:
    """Fill the pool's ladder again (a set of it ended)."""
    _task(FILL_LADDER).delay(pool)


def newcomer_checks_enqueue(bot_ids: Iterable[int]) -> None:
    """Send one protocol check per bot the ladder has not seen pass one yet."""
    task = _task(CHECK_NEWCOMER)
    for bot_id in bot_ids:
        task.delay(bot_id)


def email_verification_enqueue(*, user_id: int, email: str) -> None:
    """Mail an owner's new address its confirmation link (maintenance queue)."""
    _task(SEND_EMAIL_VERIFICATION).delay(user_id, email)


def notification_enqueue(notification_id: int, *, email: bool, webhook: bool) -> None:
    """Send a notification's deliveries (maintenance queue). Call it from ``on_commit``."""
    if email:
        _task(SEND_NOTIFICATION_EMAIL).delay(notification_id)
    if webhook:
        _task(CALL_NOTIFICATION_WEBHOOK).delay(notification_id)


def ratings_fit_enqueue(pool: str) -> None:
    """Send one ``ratings.fit_pool`` for ``pool`` (fits coalesce: see
    ``services.rating_fits.ratings_fit_coalesced``)."""
    _task(FIT_RATINGS).delay(pool)


def baselines_enqueue(game_ids: Iterable[int]) -> None:
    """Value the deals of finished rated games (the ``baselines`` queue: never a game's)."""
    task = _task(VALUE_GAME)
    for game_id in game_ids:
        task.delay(game_id)


def baselines_enqueue_on_commit(game_ids: Iterable[int]) -> None:
    """``baselines_enqueue`` once the current transaction commits; a queue lost meanwhile is
    logged, and ``services.baselines.baselines_sweep`` sends what is missing."""
    ids = list(game_ids)

    def send() -> None:
        try:
            baselines_enqueue(ids)
        except BROKER_ERRORS:
            logger.warning("the baselines queue failed; the sweep will value the games")

    transaction.on_commit(send)


def set_correction_enqueue(match_id: int) -> None:
    """Correct the match's rated set for the luck of its deals, once its values are in."""
    _task(CORRECT_SET).delay(match_id)


def broker_reachable(timeout: float = BROKER_CHECK_TIMEOUT_S) -> bool:
    """True when a message could be sent right now: one bounded connection attempt, no retry.

    Always True when tasks run eagerly (tests), where no broker is involved.
    """
    app = current_app
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


def games_waiting(queues: Iterable[str] = MATCH_QUEUES) -> int:
    """How many messages wait in the broker's match queues (not those being run)."""
    return sum(queue_depths(queues).values())


def queue_depths(queues: Iterable[str] | None = None) -> dict[str, int]:
    """How many messages wait in each queue (every queue of ``CELERY_TASK_QUEUES`` by default),
    as the broker counts them: one connection, one passive declare per queue."""
    names = [q.name for q in settings.CELERY_TASK_QUEUES] if queues is None else list(queues)
    depths = {}
    with current_app.connection_for_read() as connection:
        for name in names:
            try:
                depths[name] = connection.default_channel.queue_declare(
                    queue=name, passive=True
                ).message_count
            except ChannelError:  # the queue does not exist (yet, or any more): nothing waits
                depths[name] = 0
    return depths
