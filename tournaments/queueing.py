"""The one module that sends Celery tasks; ``tournaments.tasks`` defines them.

Services enqueue work through the functions here, by the task's registered name, so no service
imports the task module (which imports the services: that was an import cycle). Every send
honours ``CELERY_TASK_ALWAYS_EAGER`` and ``CELERY_TASK_ROUTES`` like ``task.delay`` would. The
import contracts in pyproject.toml (``make test`` runs ``lint-imports``) and
tests/foundation/test_import_contracts.py hold the rest of the code to this: no other module
sends a task.

Queues: games (``leagues.play_match``, the recovery and the sweep that re-send matches) and
maintenance (protocol checks, the ladder, anything else), each with its own workers, so a flood
of checks never delays a game (config/settings/base.py routes them).
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

logger = logging.getLogger(__name__)

GAMES_QUEUE = "games"
MAINTENANCE_QUEUE = "maintenance"

PLAY_MATCH = "leagues.play_match"
RECOVER_MATCHES = "leagues.recover_matches"
SWEEP_MATCHES = "leagues.sweep"
TICK_LADDER = "ladder.tick"
FILL_LADDER = "ladder.fill"
CHECK_NEWCOMER = "ladder.check_newcomer"
CHECK_DUE_BOTS = "bots.check_due"
CHECK_BOT = "bots.check_one"
SEND_NOTIFICATION_EMAIL = "notifications.send_email"
CALL_NOTIFICATION_WEBHOOK = "notifications.call_webhook"
FIT_RATINGS = "ratings.fit_pool"
SWEEP_RATINGS = "ratings.sweep"
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


def matches_enqueue(match_ids: Iterable[int], *, countdown: float | None = None) -> None:
    """Send one ``play_match`` per id, in the order given, each with the time limits of now
    (``countdown``: not before that many seconds).

    No one waits for these results (the database has them), so sending does not subscribe to
    them in the result store: a send while Redis is down fails at once, with a broker error.
    """
    soft, hard = play_match_limits()
    task = _task(PLAY_MATCH)
    if task.app.conf.task_always_eager:
        _eager_play(task, match_ids)
        return
    for match_id in match_ids:
        task.apply_async(
            (match_id,),
            countdown=countdown,
            ignore_result=True,
            soft_time_limit=soft,
            time_limit=hard,
        )


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
    the beat sweep (``services.matches.matches_sweep``) sends the matches once it is back.
    """
    ids = list(match_ids)

    def send() -> None:
        try:
            matches_enqueue(ids)
        except BROKER_ERRORS:
            logger.warning(
                "the match queue failed while sending %s matches; the sweep will send them",
                len(ids),
                exc_info=True,
            )

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


def ladder_fill_enqueue(pool: str) -> None:
    """Fill the pool's ladder again (a set of it ended)."""
    _task(FILL_LADDER).delay(pool)


def newcomer_checks_enqueue(bot_ids: Iterable[int]) -> None:
    """Send one protocol check per bot the ladder has not seen pass one yet."""
    task = _task(CHECK_NEWCOMER)
    for bot_id in bot_ids:
        task.delay(bot_id)


def notification_enqueue(notification_id: int, *, email: bool, webhook: bool) -> None:
    """Send a notification's deliveries (maintenance queue). Call it from ``on_commit``."""
    if email:
        _task(SEND_NOTIFICATION_EMAIL).delay(notification_id)
    if webhook:
        _task(CALL_NOTIFICATION_WEBHOOK).delay(notification_id)


def ratings_fit_enqueue(pool: str) -> None:
    """Send one ``ratings.fit_pool`` for ``pool`` (fits coalesce: see
    ``services.ratings.ratings_fit_coalesced``)."""
    _task(FIT_RATINGS).delay(pool)


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


def games_waiting() -> int:
    """How many messages wait in the broker's games queue (not those being run)."""
    app = current_app
    with app.connection_for_read() as connection:
        try:
            return connection.default_channel.queue_declare(
                queue=GAMES_QUEUE, passive=True
            ).message_count
        except ChannelError:  # the queue does not exist (yet, or any more): nothing waits
            return 0
