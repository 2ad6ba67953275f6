"""Quotas of users' leagues (tournaments/services/quotas.py) and the schedule written in batches
after a start (``league_schedule_next``): what a user is refused, in our words, and what the
league shows while its schedule is being written."""

import datetime
import itertools

import pytest
from django.utils import timezone
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from games.scheduling import build_schedule, schedule_games, set_length
from tests.clients import client_for
from tournaments import queueing
from tournaments.models import League, Match
from tournaments.services import quotas
from tournaments.services.challenges import challenge_create
from tournaments.services.league_creation import league_create, league_enrol
from tournaments.services.league_schedules import (
    league_schedule_next,
    league_start,
    leagues_schedule_sweep,
)
from tournaments.services.league_states import league_cancel, league_finish_if_done
from tournaments.services.quotas import QuotaExceeded

pytestmark = pytest.mark.django_db(transaction=True)

_names = itertools.count(1)


def _league(user, bots, **options) -> League:
    return league_create(
        creator=user, name=f"quota league {next(_names)}", bot_ids=[b.id for b in bots], **options
    )


@pytest.fixture
def unsent(monkeypatch):
    """Starts schedule nothing by themselves: the test writes the batches
    (``league_schedule_next``) and sees the matches each one sends."""
    sent: list[list[int]] = []
    monkeypatch.setattr(queueing, "league_schedule_enqueue_on_commit", lambda league_id: None)
    monkeypatch.setattr(queueing, "matches_enqueue_on_commit", lambda ids: sent.append(list(ids)))
    return sent


@given(
    bot_count=st.integers(min_value=2, max_value=9),
    players=st.sampled_from([2, 3, 4]),
    sets=st.integers(min_value=1, max_value=4),
)
@hypothesis_settings(max_examples=60, deadline=None)
def test_the_games_a_schedule_holds_are_counted_without_building_it(bot_count, players, sets):
    if bot_count < (3 if players == 3 else 2):
        return
    games_per_pairing = sets * set_length(players)
    schedule = build_schedule(
        list(range(bot_count)), players=players, games_per_pairing=games_per_pairing, seed=1
    )
    assert schedule_games(
        bot_count=bot_count, players=players, games_per_pairing=games_per_pairing
    ) == sum(len(match.games) for match in schedule)


def test_a_users_league_past_the_size_limits_is_refused_field_by_field(user, make_bot, settings):
    settings.ESCOBA_LEAGUE_MAX_BOTS = 4
    settings.ESCOBA_LEAGUE_MAX_GAMES = 10
    bots = [make_bot("greedy") for _ in range(5)]
    response = client_for(user).post(
        "/api/leagues/",
        {"name": "big", "bots": [b.id for b in bots], "games_per_pairing": 22,
         "move_timeout_ms": 60_000},
        format="json",
    )  # fmt: skip
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert errors["bots"] == [quotas.ERROR_LEAGUE_BOTS.format(limit=4, count=5)]
    assert quotas.ERROR_GAMES_PER_PAIRING.format(limit=20) in errors["games_per_pairing"]
    assert (
        quotas.ERROR_LEAGUE_GAMES.format(limit=10, count=5, games_per_pairing=22, games=220)
        in errors["games_per_pairing"]
    )
    assert errors["move_timeout_ms"] == [quotas.ERROR_MOVE_TIMEOUT.format(limit=5000)]
    assert not League.objects.exists()


def test_staff_have_no_league_quotas(staff, make_bot, settings, unsent):
    settings.ESCOBA_LEAGUE_MAX_BOTS = 2
    settings.ESCOBA_RUNNING_LEAGUES_PER_USER = 0
    settings.ESCOBA_QUEUED_GAMES_PER_USER = 0
    league = _league(staff, [make_bot("greedy") for _ in range(3)], games_per_pairing=30)
    league_start(league_id=league.id, user=staff)
    assert League.objects.get(pk=league.pk).status == League.Status.RUNNING


def test_bots_enrolled_after_creation_count_when_the_league_starts(user, make_bot, settings):
    settings.ESCOBA_LEAGUE_MAX_BOTS = 3
    league = _league(user, [make_bot("greedy", owner=user) for _ in range(3)])
    league_enrol(league_id=league.id, bot_id=make_bot("random", owner=user).id, user=user)
    response = client_for(user).post(f"/api/leagues/{league.id}/start/")
    assert response.status_code == 400
    assert response.json()["errors"]["bots"] == [quotas.ERROR_LEAGUE_BOTS.format(limit=3, count=4)]
    assert League.objects.get(pk=league.pk).status == League.Status.OPEN


def test_running_leagues_past_the_quota_answer_429_until_one_ends(user, make_bot, settings, unsent):
    settings.ESCOBA_RUNNING_LEAGUES_PER_USER = 1
    bots = [make_bot("greedy"), make_bot("random")]
    first, second = _league(user, bots), _league(user, bots)
    client = client_for(user)
    assert client.post(f"/api/leagues/{first.id}/start/").status_code == 202

    refused = client.post(f"/api/leagues/{second.id}/start/")
    assert refused.status_code == 429
    assert refused.json() == {
        "detail": quotas.ERROR_RUNNING_LEAGUES.format(count=1, limit=1),
        "code": "quota_exceeded",
        "errors": {},
    }
    assert League.objects.get(pk=second.pk).status == League.Status.OPEN

    league_cancel(league_id=first.id, user=user)
    assert client.post(f"/api/leagues/{second.id}/start/").status_code == 202


def test_queued_games_count_every_unfinished_league_and_challenge_of_the_user(
    user, make_bot, settings, unsent
):
    settings.ESCOBA_QUEUED_GAMES_PER_USER = 10
    mine = make_bot("greedy", owner=user)
    bots = [mine, make_bot("random"), make_bot("expert")]
    league = _league(user, bots, games_per_pairing=2)  # 3 pairings: 6 games
    league_start(league_id=league.id, user=user)
    league_schedule_next(league_id=league.id)  # written or not, they wait
    assert quotas.queued_games(user) == 6

    with pytest.raises(QuotaExceeded, match="You have 6 games waiting to be played; 6 more"):
        league_start(league_id=_league(user, bots).id, user=user)
    opponent = make_bot("random", accepts_challenges=True)
    with pytest.raises(QuotaExceeded, match="You have 6 games waiting to be played; 6 more"):
        challenge_create(user=user, bot_id=mine.id, opponent_id=opponent.id, sets=3)
    challenge_create(user=user, bot_id=mine.id, opponent_id=opponent.id, sets=2)  # 4 fit
    assert quotas.queued_games(user) == 10

    response = client_for(user).post(
        "/api/challenges/", {"bot": mine.id, "opponent": opponent.id, "sets": 1}, format="json"
    )
    assert response.status_code == 429
    assert response.json()["code"] == "quota_exceeded"
    assert response.json()["retry_after"] is None and "Retry-After" not in response


def test_start_answers_at_once_and_the_schedule_is_written_batch_by_batch(
    user, make_bot, settings, unsent
):
    settings.ESCOBA_SCHEDULE_BATCH_MATCHES = 2
    bots = [make_bot("greedy"), make_bot("random"), make_bot("expert"), make_bot("random7")]
    league = _league(user, bots)  # 6 pairings, one set each: 6 matches of 2 games

    response = client_for(user).post(f"/api/leagues/{league.id}/start/")
    assert response.status_code == 202
    body = response.json()
    assert body["status"] == "running" and body["games_planned"] == 12
    assert body["progress"]["total"] == 0  # nothing written inside the request

    assert league_schedule_next(league_id=league.id) is True
    assert not league_finish_if_done(league_id=league.id)  # 4 of 12 games written: not done
    assert league_schedule_next(league_id=league.id) is True
    assert league_schedule_next(league_id=league.id) is False
    assert league_schedule_next(league_id=league.id) is False  # again: nothing written twice
    numbers = list(Match.objects.filter(league=league).values_list("number", flat=True))
    assert sorted(numbers) == [1, 2, 3, 4, 5, 6]
    assert [len(batch) for batch in unsent] == [2, 2, 2]
    assert sum(unsent, []) == list(
        Match.objects.filter(league=league).order_by("number").values_list("id", flat=True)
    )
    page = client_for(user).get(f"/api/leagues/{league.id}/").json()
    assert page["progress"]["total"] == page["games_planned"] == 12


def test_a_cancelled_league_stops_being_scheduled(user, make_bot, settings, unsent):
    settings.ESCOBA_SCHEDULE_BATCH_MATCHES = 2
    bots = [make_bot("greedy"), make_bot("random"), make_bot("expert"), make_bot("random7")]
    league = _league(user, bots)
    league_start(league_id=league.id, user=user)
    league_schedule_next(league_id=league.id)
    league_cancel(league_id=league.id, user=user)

    assert league_schedule_next(league_id=league.id) is False
    assert Match.objects.filter(league=league).count() == 2
    assert quotas.queued_games(user) == 0


def test_a_started_league_is_scheduled_and_played_to_the_end_in_batches(user, make_bot, settings):
    """Eager Celery: the start's task writes a batch, its matches play, the task sends itself
    again; the league finishes only once the whole schedule is written and played."""
    settings.ESCOBA_SCHEDULE_BATCH_MATCHES = 1
    bots = [make_bot("greedy"), make_bot("random"), make_bot("expert")]
    league = _league(user, bots)
    league_start(league_id=league.id, user=user)
    league.refresh_from_db()
    assert league.status == League.Status.FINISHED
    assert league.games.filter(status="finished").count() == league.games_planned == 6


def test_a_schedule_whose_task_was_lost_is_sent_again_by_the_sweep(
    user, make_bot, settings, unsent, monkeypatch
):
    settings.ESCOBA_SCHEDULE_BATCH_MATCHES = 2
    bots = [make_bot("greedy"), make_bot("random"), make_bot("expert"), make_bot("random7")]
    league = _league(user, bots)
    league_start(league_id=league.id, user=user)  # its leagues.schedule message is lost
    assert leagues_schedule_sweep(idle_s=60) == []  # just started: not quiet yet

    five_minutes_ago = timezone.now() - datetime.timedelta(minutes=5)
    League.objects.filter(pk=league.pk).update(started_at=five_minutes_ago)
    sent: list[int] = []
    monkeypatch.setattr(queueing, "league_schedule_enqueue_on_commit", sent.append)
    assert leagues_schedule_sweep(idle_s=60) == [league.id]
    assert sent == [league.id]

    league_schedule_next(league_id=league.id)  # the task sent again writes a batch: not quiet
    assert leagues_schedule_sweep(idle_s=60) == []
