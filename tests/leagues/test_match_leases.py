"""Match leases and worker-start recovery: a match is played by one live run at a time, and what a
dead worker left behind (cut-off matches, tasks received but not begun) is enqueued again."""

from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from tournaments import queueing, tasks
from tournaments.models import League, Match
from tournaments.services import league_states
from tournaments.services.league_creation import league_create
from tournaments.services.league_schedules import league_start
from tournaments.services.match_leases import LEASE_S, match_heartbeat, matches_recover
from tournaments.services.matches import match_begin, match_play

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def enqueued(monkeypatch) -> list[int]:
    """Match ids sent to the workers (nothing is played: the test plays what it wants)."""
    sent: list[int] = []
    monkeypatch.setattr(queueing, "matches_enqueue", sent.extend)
    return sent


def started_league(user, make_bot, name: str) -> League:
    bots = [make_bot("greedy"), make_bot("random"), make_bot("expert"), make_bot("random7")]
    league = league_create(creator=user, name=name, bot_ids=[b.id for b in bots])
    return league_start(league_id=league.id, user=user, enqueue=False)


def set_running(match: Match, *, worker: str, claim: str, beat_ago_s: float) -> None:
    Match.objects.filter(pk=match.pk).update(
        status=Match.Status.RUNNING,
        worker=worker,
        claim=claim,
        heartbeat_at=timezone.now() - timedelta(seconds=beat_ago_s),
    )


def test_a_live_run_keeps_its_match_and_a_redelivery_takes_it_over(user, make_bot, enqueued):
    league = started_league(user, make_bot, "lease")
    match = league.matches.order_by("number").first()
    set_running(match, worker="a@host", claim="task-1", beat_ago_s=1)

    assert match_begin(match_id=match.id, worker="b@host", claim="task-2") is None
    match.refresh_from_db()
    assert (match.worker, match.claim, match.attempts) == ("a@host", "task-1", 0)

    # the same task delivered again: its first run died (a pool child killed, a retry)
    plan = match_begin(match_id=match.id, worker="b@host", claim="task-1")
    assert plan is not None and len(plan.games) == 2
    match.refresh_from_db()
    assert (match.worker, match.attempts) == ("b@host", 1)


def test_a_stale_lease_is_taken_over_and_heartbeats_belong_to_the_holder(user, make_bot, enqueued):
    league = started_league(user, make_bot, "stale")
    match = league.matches.order_by("number").first()
    set_running(match, worker="a@host", claim="task-1", beat_ago_s=LEASE_S + 1)

    assert match_begin(match_id=match.id, worker="b@host", claim="task-2") is not None
    assert not match_heartbeat(match_id=match.id, claim="task-1")  # no longer the holder
    before = Match.objects.get(pk=match.pk).heartbeat_at
    assert match_heartbeat(match_id=match.id, claim="task-2")
    assert Match.objects.get(pk=match.pk).heartbeat_at > before


def test_recovery_releases_cut_off_matches_and_resends_waiting_ones(user, make_bot, enqueued):
    league = started_league(user, make_bot, "crashed")
    other = started_league(user, make_bot, "elsewhere")
    first, second, third, *waiting = league.matches.order_by("number")
    set_running(first, worker="w1@host", claim="t1", beat_ago_s=1)  # w1 died playing it
    set_running(second, worker="w2@host", claim="t2", beat_ago_s=1)  # alive on w2
    set_running(third, worker="w3@host", claim="t3", beat_ago_s=LEASE_S + 5)  # w3 died long ago
    set_running(
        other.matches.order_by("number").first(), worker="w2@host", claim="t4", beat_ago_s=1
    )

    ids = matches_recover(worker="w1@host")

    # cut-off matches first, then every pending match of the leagues w1 played in (one of their
    # messages may sit unacknowledged with the dead worker); the league w1 never touched is left
    assert enqueued == ids == [first.id, third.id, *[m.id for m in waiting]]
    statuses = dict(league.matches.values_list("id", "status"))
    assert statuses[first.id] == statuses[third.id] == Match.Status.PENDING
    assert statuses[second.id] == Match.Status.RUNNING
    assert Match.objects.get(pk=first.pk).claim == ""


def test_duplicate_deliveries_play_a_match_once(user, make_bot, enqueued):
    league = started_league(user, make_bot, "duplicates")
    match = league.matches.order_by("number").first()

    assert match_play(match_id=match.id, claim="original").status == "played"
    assert match_play(match_id=match.id, claim="duplicate").status == "skipped"
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED and match.attempts == 1


def test_a_match_cut_off_in_a_paused_league_is_played_on_resume(
    user, make_bot, enqueued, monkeypatch
):
    league = started_league(user, make_bot, "paused")
    first = league.matches.order_by("number").first()
    set_running(first, worker="w1@host", claim="t1", beat_ago_s=1)
    league_states.league_pause(league_id=league.id, user=user)

    assert matches_recover(worker="w1@host") == []  # nothing is played while paused...
    assert Match.objects.get(pk=first.pk).status == Match.Status.PENDING  # ...but it is released

    resumed: list[int] = []
    monkeypatch.setattr(queueing, "matches_requeue_on_commit", resumed.extend)
    league_states.league_resume(league_id=league.id, user=user)
    assert first.id in resumed and len(resumed) == league.matches.count()


def test_a_long_match_renews_its_lease_and_is_cut_at_the_time_limit(
    user, make_bot, enqueued, settings, monkeypatch
):
    from bots_sdk.server import serve_in_thread
    from tests.fakebots.players import Slow
    from tournaments.services import matches as match_services

    slow = Slow(0.02)
    settings.ESCOBA_MATCH_TIME_LIMIT_S = 0.6  # a game against this bot takes seconds
    monkeypatch.setattr(match_services, "HEARTBEAT_S", 0.1)
    with serve_in_thread(slow, name="slow") as server:
        bots = [make_bot("greedy"), make_bot("greedy", name="slow-bot")]
        bots[1].url = server.url
        bots[1].save(update_fields=["url"])
        league = league_create(creator=user, name="slow", bot_ids=[b.id for b in bots])
        league = league_start(league_id=league.id, user=user)
        match = league.matches.get()

        outcome = match_play(match_id=match.id, claim="only")

    assert (outcome.status, outcome.stored, outcome.aborted) == ("played", 0, 2)
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED
    assert (match.heartbeat_at - match.started_at).total_seconds() >= 0.3  # renewed while playing
    assert set(league.games.values_list("status", "reason")) == {("aborted", "time_limit")}
    league.refresh_from_db()
    assert league.status == League.Status.FINISHED


def test_recovery_leaves_the_matches_the_restarted_worker_already_began(user, make_bot, enqueued):
    league = started_league(user, make_bot, "restarted")
    before, after = league.matches.order_by("number")[:2]
    restarted_at = timezone.now() - timedelta(seconds=5)
    set_running(before, worker="w1@host", claim="old", beat_ago_s=10)  # the dead incarnation's
    set_running(after, worker="w1@host", claim="new", beat_ago_s=1)  # begun since the restart
    Match.objects.filter(pk=after.pk).update(started_at=restarted_at + timedelta(seconds=2))
    Match.objects.filter(pk=before.pk).update(started_at=restarted_at - timedelta(seconds=30))

    ids = matches_recover(worker="w1@host", since=restarted_at)

    assert before.id in ids and after.id not in ids
    assert Match.objects.get(pk=after.pk).claim == "new"


def test_the_worker_ready_signal_sends_its_name_and_start_time(monkeypatch):
    from config.celery_app import app

    sent = []
    monkeypatch.setattr(tasks.recover_matches, "delay", lambda *args: sent.append(args))

    # a worker started without -Q consumes every queue, the games queue among them
    tasks._recover_after_restart(sender=type("Consumer", (), {"hostname": "w9@host", "app": app})())

    [(name, since)] = sent
    assert name == "w9@host"
    assert abs((timezone.now() - datetime.fromisoformat(since)).total_seconds()) < 5


def test_only_a_worker_of_the_games_queue_recovers_matches():
    assert tasks.plays_games(["games", "maintenance"])
    assert tasks.plays_games({"games": None})
    assert tasks.plays_games(["leagues"]) and tasks.plays_games(["challenges"])
    assert not tasks.plays_games(["maintenance"])


def test_a_game_played_again_is_dealt_afresh_and_keeps_its_own_seed(user, make_bot, enqueued):
    """A game begun once may have been seen by its bots: when a run died, stopped or released
    it, the next run deals it a new seed (never a deal a bot already saw); the first run plays
    the scheduled deals."""
    league = started_league(user, make_bot, "fresh replay")
    match = league.matches.order_by("number").first()
    scheduled = list(match.games.order_by("number").values_list("seed", flat=True))

    first = match_begin(match_id=match.id, worker="a@host", claim="task-1")
    assert [g.seed for g in first.games] == scheduled
    # the run died; a redelivery plays the match again
    second = match_begin(match_id=match.id, worker="b@host", claim="task-1")
    again = [g.seed for g in second.games]
    assert not set(again) & set(scheduled) and len(set(again)) == len(again)
    # the stored game (what the API and the log show) holds the seed it is played on
    assert list(match.games.order_by("number").values_list("seed", flat=True)) == again
    third = match_begin(match_id=match.id, worker="c@host", claim="task-1")
    assert not {g.seed for g in third.games} & {*again, *scheduled}
