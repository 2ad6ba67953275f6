"""Leases on matches in play, and recovering the matches whose run died.

The run playing a match holds it (``Match.claim``, its task id) and writes ``heartbeat_at``
every ``HEARTBEAT_S`` seconds (``match_heartbeat``). Another delivery of the match (a duplicate
sent by recovery) leaves a match alone while its holder is alive (``lease_alive``), so a match
is not played twice at once; a lease not renewed for ``LEASE_S`` seconds, or a redelivery of the
holder's own task, means the holder died and the match is taken over. A run hands a match back
itself (``match_release``) when the service, not a bot, is why its games could not be stored.

What a dead run left behind is found two ways: a games worker that starts enqueues again what
it or any other worker left (``matches_recover``), and the beat sweep enqueues the pending
matches of leagues that went quiet, which a lost queue leaves behind (``matches_sweep``).
Duplicates are harmless: a match claimed or finished makes its task return at once.
"""

from __future__ import annotations

import datetime
import logging

from django.db import OperationalError, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from tournaments import queueing
from tournaments.models import League, Match
from tournaments.read_cache import reads_changed
from tournaments.services.league_states import GROWING

logger = logging.getLogger(__name__)

HEARTBEAT_S = 5.0
LEASE_S = 60.0


def _lease_older_than(moment: datetime.datetime) -> Q:
    """Running matches whose holder has not renewed its lease since ``moment``: it died."""
    return Q(status=Match.Status.RUNNING) & (
        Q(heartbeat_at__lt=moment) | Q(heartbeat_at__isnull=True)
    )


def _release(cut_off: QuerySet[Match]) -> dict[int, str]:
    """Make matches whose run died pending again, under lock: their ids -> their league's status."""
    rows = list(
        cut_off.select_for_update(of=("self",))
        .order_by("id")
        .values_list("id", "league__status", "league_id")
    )
    released = {match_id: status for match_id, status, _ in rows}
    Match.objects.filter(id__in=released).update(
        status=Match.Status.PENDING, claim="", heartbeat_at=None
    )
    reads_changed(*(f"league:{league_id}" for _, _, league_id in rows))
    return released


def lease_alive(match: Match, now: datetime.datetime) -> bool:
    """Whether the match's holder renewed its lease within ``LEASE_S`` of ``now``."""
    if match.heartbeat_at is None:
        return False
    return (now - match.heartbeat_at).total_seconds() < LEASE_S


def match_heartbeat(*, match_id: int, claim: str) -> bool:
    """Renew this run's lease on the match; False when the match is no longer ours."""
    renewed = Match.objects.filter(pk=match_id, status=Match.Status.RUNNING, claim=claim).update(
        heartbeat_at=timezone.now()
    )
    return renewed == 1


def match_release(*, match_id: int, claim: str) -> bool:
    """Hand a match this run holds back, pending: its unfinished games are played again later.

    The worker stays recorded, so a restarting worker's recovery finds the match's league.
    """
    held = Match.objects.filter(pk=match_id, status=Match.Status.RUNNING, claim=claim)
    league_id = held.values_list("league_id", flat=True).first()
    released = held.update(status=Match.Status.PENDING, claim="", heartbeat_at=None)
    if released:
        reads_changed(f"league:{league_id}")
    return released == 1


def lease_renew(*, match_id: int, claim: str) -> None:
    """A missed heartbeat costs nothing while the next one lands; a busy database must not stop
    the games, so its error is logged, not raised (storing the next game would raise it)."""
    try:
        match_heartbeat(match_id=match_id, claim=claim)
    except OperationalError:
        logger.warning("match %s: heartbeat failed", match_id, exc_info=True)


def matches_recover(*, worker: str, since: datetime.datetime | None = None) -> list[int]:
    """Enqueue again what a dead worker left behind; call when a worker starts.

    - Running matches stamped with ``worker`` and begun before ``since`` (when this worker
      started; by the time this runs it may be playing matches of its own) were cut off, and so
      were running matches of any worker whose lease went stale: they are
      released (pending again) and, in running leagues, enqueued at once rather than after the
      broker's visibility timeout. In paused leagues resuming enqueues them with the others.
    - A task the dead worker had received but not yet begun left its match pending and its
      message unacknowledged in the broker, out of sight until that timeout. Which one cannot be
      told, so every pending match of the running leagues this worker played in is enqueued once
      more; the duplicates find their match claimed or finished and return at once.
    """
    stale = timezone.now() - datetime.timedelta(seconds=LEASE_S)
    mine = Q(worker=worker) if since is None else Q(worker=worker, started_at__lt=since)
    unfinished = [League.Status.RUNNING, League.Status.PAUSED]
    with transaction.atomic():
        released = _release(
            Match.objects.filter(
                mine | _lease_older_than(stale),
                status=Match.Status.RUNNING,
                league__status__in=unfinished,
            )
        )
        running = Match.objects.filter(league__status=League.Status.RUNNING)
        leagues = running.filter(worker=worker).values("league_id")
        waiting = list(
            running.filter(status=Match.Status.PENDING, league_id__in=leagues)
            .exclude(id__in=released)
            .order_by("id")
            .values_list("id", flat=True)
        )
        again = [i for i, status in released.items() if status == League.Status.RUNNING]
        ids = again + waiting
        queueing.matches_enqueue_on_commit(ids)
    if released:
        logger.warning("worker %s started: playing %s cut-off matches again", worker, len(released))
    return ids


def matches_sweep(*, idle_s: float = LEASE_S, queued: int | None = None) -> list[int]:
    """Enqueue again the pending matches of running leagues that have gone quiet.

    What a worker restart cannot recover: a Redis that lost its data (restarted without its
    append-only file, or flushed) lost the queued ``play_match`` messages, while the workers, still
    running, never restart. A running league none of whose matches has begun, renewed its lease
    or finished for ``idle_s`` seconds, while the broker's games queue is empty (``queued``, read
    from the broker when not given), is such a case; its pending matches are enqueued once more.
    So are the pending matches of a league that grows (the ladder, a version test) that were
    scheduled ``idle_s`` ago and never begun: such a league never goes quiet while it plays.
    Running matches whose lease went stale are released and enqueued too, wherever they are.
    Duplicates are harmless: a match claimed or finished makes its task return at once.
    """
    if (queueing.games_waiting() if queued is None else queued) > 0:
        return []
    quiet_since = timezone.now() - datetime.timedelta(seconds=idle_s)
    with transaction.atomic():
        running = Match.objects.filter(league__status=League.Status.RUNNING)
        released = list(_release(running.filter(_lease_older_than(quiet_since))))
        active = Match.objects.filter(
            Q(heartbeat_at__gte=quiet_since)
            | Q(started_at__gte=quiet_since)
            | Q(finished_at__gte=quiet_since)
        ).values("league_id")
        # A league that grows (the ladder, a version test) is never quiet while it plays: a set
        # of its scheduled before quiet_since and still pending lost its message.
        lost = Q(league__kind__in=GROWING, created_at__lt=quiet_since)
        quiet = list(
            running.filter(status=Match.Status.PENDING)
            .filter(~Q(league_id__in=active) | lost)
            .exclude(id__in=released)
            .order_by("id")
            .values_list("id", flat=True)
        )
        # A released match is enqueued even in a league still busy with others: nothing else
        # would send it again.
        ids = sorted(released + quiet)
        queueing.matches_enqueue_on_commit(ids)
    if ids:
        logger.warning("sweep: %s pending matches of quiet leagues enqueued again", len(ids))
    return ids
