"""The sweep (beat's ``leagues.sweep``): what it sends again after the broker lost its queue."""

import datetime

from django.utils import timezone

from tournaments.models import Match
from tournaments.services.league_creation import league_create
from tournaments.services.league_schedules import league_start
from tournaments.services.match_leases import matches_sweep


def running_league(user, make_bot):
    bots = [make_bot("greedy"), make_bot("random"), make_bot("expert")]
    league = league_create(creator=user, name="quiet", bot_ids=[b.id for b in bots])
    return league_start(league_id=league.id, user=user, enqueue=False)


def test_a_quiet_league_has_its_pending_and_stale_matches_sent_again(
    user, make_bot, django_capture_on_commit_callbacks, monkeypatch
):
    league = running_league(user, make_bot)
    sent = []
    monkeypatch.setattr("tournaments.queueing.matches_enqueue", lambda ids: sent.extend(ids))
    matches = list(league.matches.order_by("id"))
    long_ago = timezone.now() - datetime.timedelta(minutes=5)
    Match.objects.filter(pk=matches[0].pk).update(
        status=Match.Status.RUNNING, claim="t1", heartbeat_at=long_ago, started_at=long_ago
    )

    with django_capture_on_commit_callbacks(execute=True):
        ids = matches_sweep(idle_s=60, queued=0)

    assert ids == sent == [m.pk for m in matches]
    assert Match.objects.get(pk=matches[0].pk).status == Match.Status.PENDING


def test_a_busy_league_or_a_full_queue_is_left_alone(user, make_bot, monkeypatch):
    league = running_league(user, make_bot)
    monkeypatch.setattr("tournaments.queueing.matches_enqueue", lambda ids: None)
    assert matches_sweep(idle_s=60, queued=3) == []

    first = league.matches.order_by("id").first()
    Match.objects.filter(pk=first.pk).update(
        status=Match.Status.RUNNING, claim="t1", heartbeat_at=timezone.now()
    )
    assert matches_sweep(idle_s=60, queued=0) == []
    assert Match.objects.get(pk=first.pk).status == Match.Status.RUNNING


def test_a_dead_run_is_sent_again_even_while_its_league_is_busy(
    user, make_bot, django_capture_on_commit_callbacks, monkeypatch
):
    league = running_league(user, make_bot)
    sent = []
    monkeypatch.setattr("tournaments.queueing.matches_enqueue", lambda ids: sent.extend(ids))
    dead, alive, *_ = league.matches.order_by("id")
    long_ago = timezone.now() - datetime.timedelta(minutes=5)
    Match.objects.filter(pk=dead.pk).update(
        status=Match.Status.RUNNING, claim="t1", heartbeat_at=long_ago, started_at=long_ago
    )
    Match.objects.filter(pk=alive.pk).update(
        status=Match.Status.RUNNING, claim="t2", heartbeat_at=timezone.now()
    )

    with django_capture_on_commit_callbacks(execute=True):
        ids = matches_sweep(idle_s=60, queued=0)

    assert ids == sent == [dead.pk]
    assert Match.objects.get(pk=dead.pk).status == Match.Status.PENDING
    assert Match.objects.get(pk=alive.pk).status == Match.Status.RUNNING
