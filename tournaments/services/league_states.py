"""A league's life: open → running ⇄ paused → finished, and cancelled from any unfinished state.

Every change of a league's state begins by locking its row (``league_lock``). Starting a league
writes its schedule (``services.league_schedules``); the league finishes when its whole schedule
is written and its last match has been played (``league_finish_if_done``).

Pausing stops matches from starting (``services.matches.match_begin`` reads the league's status
under its lock); resuming sends again only the matches that wait with no message in the queue
(``queueing.matches_requeue_on_commit``), so pausing and resuming any number of times leaves at
most one message per waiting match.

Starting or resuming a league needs the match queue (Redis). When it is unreachable the service
raises ``QueueUnavailable`` and changes nothing (the API answers 503), rather than start a league
whose matches cannot be sent. Should the queue fail between that check and the commit, the league
stays started and the beat sweep (``services.matches.matches_sweep``) sends its matches once the
queue is back.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

from tournaments import queueing
from tournaments.models import League, Match
from tournaments.read_cache import reads_changed

ERROR_NOT_CREATOR = "Only the league's creator may do this."
ERROR_TRANSITION = "A league that is {status} cannot be {action}."
ERROR_DELETE_NOT_ALLOWED = "Only the league's creator or staff may delete it."
ERROR_DELETE_STARTED = "Only a league that never started can be deleted; this one is {status}."


class QueueUnavailable(Exception):
    """The match queue (the Celery broker) cannot be reached: nothing was changed."""


UNFINISHED = (League.Status.OPEN, League.Status.RUNNING, League.Status.PAUSED)
# Leagues whose sets are added as they go: their own service says when they are done.
GROWING = (League.Kind.LADDER, League.Kind.TEST)


def league_lock(league_id: int) -> League:
    """The league, locked for a change: every change of a league's state begins here, so its
    cached reads, and the list of leagues that shows its status, are invalidated here too (a
    lock that changes nothing costs one bump).

    ``FOR NO KEY UPDATE`` (``no_key``), as for every lock of a league: its writers still take
    turns, but a transaction that wrote a row pointing at the league (a game, a tally) can
    check that key at its commit (PostgreSQL's deferred foreign keys take ``FOR KEY SHARE``)
    while a writer holds the league. With ``FOR UPDATE`` a ladder fill holding the league and
    waiting for the league's tally deadlocked with a game stored at that moment."""
    league = League.objects.select_for_update(no_key=True).get(pk=league_id)
    reads_changed(f"league:{league_id}", "leagues")
    return league


def require_creator(league: League, user: Any) -> None:
    if league.creator_id != user.pk:
        raise PermissionDenied(ERROR_NOT_CREATOR)


def require_status(league: League, allowed: Iterable[str], action: str) -> None:
    if league.status not in allowed:
        raise ValidationError(ERROR_TRANSITION.format(status=league.status, action=action))


def league_open(*, league: League) -> League:
    """Mark a league that grows set by set as running, with no schedule written up front."""
    league.status = League.Status.RUNNING
    league.started_at = timezone.now()
    league.save(update_fields=["status", "started_at"])
    return league


def require_queue() -> None:
    """Refuse early, inside the caller's transaction, when the matches could not be sent."""
    if not queueing.broker_reachable():
        raise QueueUnavailable


@transaction.atomic
def league_pause(*, league_id: int, user: Any) -> League:
    """Stop handing out matches; games already being played finish and count."""
    league = league_lock(league_id)
    require_creator(league, user)
    require_status(league, [League.Status.RUNNING], "paused")
    league.status = League.Status.PAUSED
    league.save(update_fields=["status"])
    return league


@transaction.atomic
def league_resume(*, league_id: int, user: Any) -> League:
    """Send again the matches that wait (pending) with no message in the queue.

    A match whose message is still queued is not sent twice
    (``queueing.matches_requeue_on_commit``): its message finds the league running again. A
    match cut off during the pause was made pending by the recovery, and one whose worker died
    unseen is released by the sweep.
    """
    league = league_lock(league_id)
    require_creator(league, user)
    require_status(league, [League.Status.PAUSED], "resumed")
    require_queue()
    league.status = League.Status.RUNNING
    league.save(update_fields=["status"])
    waiting = list(
        league.matches.filter(status=Match.Status.PENDING)
        .order_by("number")
        .values_list("id", flat=True)
    )
    queueing.matches_requeue_on_commit(waiting)
    transaction.on_commit(lambda: league_finish_if_done(league_id=league.id))
    return league


@transaction.atomic
def league_cancel(*, league_id: int, user: Any) -> League:
    """Drop the matches not yet begun; finished games (and their ratings) stay."""
    league = league_lock(league_id)
    require_creator(league, user)
    require_status(league, UNFINISHED, "cancelled")
    league.status = League.Status.CANCELLED
    league.finished_at = timezone.now()
    league.save(update_fields=["status", "finished_at"])
    league.matches.filter(status=Match.Status.PENDING).update(status=Match.Status.CANCELLED)
    return league


@transaction.atomic
def league_delete(*, league_id: int, user: Any) -> None:
    """Delete a league that never started, so that junk does not stay in the public list.

    Its creator or staff may; a league that started has games in the records and stays.
    """
    league = league_lock(league_id)
    if league.creator_id != user.pk and not user.is_staff:
        raise PermissionDenied(ERROR_DELETE_NOT_ALLOWED)
    if league.status != League.Status.OPEN:
        raise ValidationError(ERROR_DELETE_STARTED.format(status=league.status))
    league.delete()
    reads_changed("catalog")


@transaction.atomic
def league_finish_if_done(*, league_id: int) -> bool:
    """Mark a running league finished once no match is left to play. Safe to call any time.

    This check runs after every match, under the league's row lock, so the last of several
    matches finishing together is the one that sees none left; no chord result is needed.
    """
    league = league_lock(league_id)
    if league.status != League.Status.RUNNING or league.kind in GROWING:
        return False
    if league.matches.filter(status__in=[Match.Status.PENDING, Match.Status.RUNNING]).exists():
        return False
    if league.games.count() < league.games_planned:  # its schedule is still being written
        return False
    league.status = League.Status.FINISHED
    league.finished_at = timezone.now()
    league.save(update_fields=["status", "finished_at"])
    return True
