"""`/api/tests/`: starting a version test, its decisions, its figures as JSON numbers."""

import pytest
from django.contrib.auth import get_user_model
from django.test import TestCase
from rest_framework.test import APIClient

from games.engine import Ruleset
from tournaments import sprt
from tournaments.models import Game, League, Match, VersionTest
from tournaments.selectors.ladder import set_score_of
from tournaments.services.challenges import ERROR_NOT_ACCEPTING, ERROR_NOT_YOUR_BOT
from tournaments.services.version_tests import (
    ERROR_ELO_ORDER,
    ERROR_ERROR_RATE,
    MIN_ELO_GAP,
    version_test_update,
    version_tests_settle,
)

pytestmark = pytest.mark.django_db

NUMBERS = ("llr", "lower_bound", "upper_bound", "elo", "elo_low", "elo_high", "elo0", "elo1")


@pytest.fixture(autouse=True)
def _few_sets_in_flight(settings):
    # fewer sets in flight: a decided test leaves fewer sets played for nothing
    settings.ESCOBA_TEST_SETS_IN_FLIGHT = 2


@pytest.fixture
def rival(db):
    return get_user_model().objects.create_user(username="rival")


def start(client, candidate, baseline, **options):
    payload = {
        "candidate": candidate.id,
        "baseline": baseline.id,
        "elo0": -100,
        "elo1": 300,
        "alpha": 0.05,
        "beta": 0.05,
        "max_sets": 30,
        **options,
    }
    # eager Celery plays the sets when the test's rows are committed: run that here
    with TestCase.captureOnCommitCallbacks(execute=True):
        return client.post("/api/tests/", payload, format="json")


def test_a_clearly_better_candidate_is_accepted(user, user_client, rival, make_bot):
    candidate = make_bot("expert", owner=user)
    baseline = make_bot("random", owner=rival)
    created = start(user_client, candidate, baseline)
    assert created.status_code == 201, created.json()
    shown = APIClient().get(f"/api/tests/{created.json()['id']}/").json()
    assert shown["status"] == "accepted"
    assert shown["llr"] >= shown["upper_bound"]
    assert shown["lower_bound"] == pytest.approx(sprt.bounds(0.05, 0.05)[0])
    for field in NUMBERS:
        assert isinstance(shown[field], int | float), field
    assert isinstance(shown["sets"], int) and 1 <= shown["sets"] < 30
    assert sum(shown["counts"]) == shown["sets"]
    assert shown["elo_low"] < shown["elo"] <= shown["elo_high"] and shown["elo"] > 0
    series = shown["llr_series"]
    assert series[0] == [0, 0.0] and series[-1][0] == shown["sets"]
    assert series[-1][1] == pytest.approx(shown["llr"], abs=1e-3)
    assert [point[0] for point in series] == sorted(point[0] for point in series)
    league = League.objects.get(pk=shown["league"])
    assert league.kind == League.Kind.TEST and not league.rated
    assert league.status == League.Status.FINISHED
    assert not league.games.filter(rated=True).exists()
    assert len(shown["games"]) == 2 * league.matches.count()


def test_a_worse_candidate_is_rejected(user, user_client, make_bot):
    candidate = make_bot("random", owner=user)
    baseline = make_bot("expert", owner=user)
    shown = start(user_client, candidate, baseline, elo0=0, elo1=100).json()
    test = VersionTest.objects.get(pk=shown["id"])
    assert test.status == "rejected" and test.llr <= sprt.bounds(0.05, 0.05)[0]
    assert test.elo < 0


def test_out_of_sets_the_test_is_inconclusive(user, user_client, make_bot):
    candidate = make_bot("greedy", owner=user)
    baseline = make_bot("greedy", owner=user)  # the same player: no evidence either way soon
    shown = start(user_client, candidate, baseline, elo0=-5, elo1=5, max_sets=3).json()
    test = VersionTest.objects.get(pk=shown["id"])
    assert test.status == "inconclusive" and test.sets == 3
    assert test.league.matches.count() == 3


# committed: the create's answer shows the test as its sets left it, played on that commit
@pytest.mark.django_db(transaction=True)
def test_an_update_counts_each_set_once_however_often_it_runs(user, user_client, make_bot):
    candidate, baseline = make_bot("expert", owner=user), make_bot("random", owner=user)
    shown = start(user_client, candidate, baseline, max_sets=40).json()
    test = VersionTest.objects.get(pk=shown["id"])
    before = (test.sets, list(test.counts), test.llr, len(test.series))
    VersionTest.objects.filter(pk=test.pk).update(status="running")  # as if not yet decided
    again = version_test_update(league_id=test.league_id)
    assert (again.sets, again.counts) == before[:2]
    assert again.llr == pytest.approx(before[2]) and again.status == shown["status"]
    assert len(again.series) == before[3]  # no new point without a new set


def test_a_lost_update_is_made_good_by_the_settle(user, make_bot, monkeypatch):
    """A worker killed between a set's end and its test's update: the tick settles the test."""
    from tournaments.services import matches

    monkeypatch.setattr(matches, "version_test_update", lambda **kwargs: None)
    from tournaments.services.version_tests import version_test_create

    with TestCase.captureOnCommitCallbacks(execute=True):
        test = version_test_create(
            user=user,
            candidate_id=make_bot("expert", owner=user).id,
            baseline_id=make_bot("random", owner=user).id,
            elo0=-100,
            elo1=300,
            alpha=0.05,
            beta=0.05,
            max_sets=30,
        )
    test.refresh_from_db()
    assert test.status == "running" and test.sets == 0
    assert not test.league.matches.exclude(status=Match.Status.FINISHED).exists()
    monkeypatch.undo()
    with TestCase.captureOnCommitCallbacks(execute=True):
        assert version_tests_settle() == [test.id]
    test.refresh_from_db()
    assert test.status == "accepted"


def test_candidate_must_be_yours_baseline_yours_or_accepting(user, user_client, rival, make_bot):
    mine = make_bot("greedy", owner=user)
    theirs = make_bot("random", owner=rival, accepts_challenges=False)
    stolen = start(user_client, theirs, mine)
    assert stolen.status_code == 400 and stolen.json()["errors"] == {
        "candidate": [ERROR_NOT_YOUR_BOT]
    }
    closed = start(user_client, mine, theirs)
    assert closed.status_code == 400 and closed.json()["errors"] == {
        "baseline": [ERROR_NOT_ACCEPTING.format(name=theirs.name)]
    }
    assert not VersionTest.objects.exists()


def test_parameters_are_checked(user_client, user, make_bot):
    a, b = make_bot("greedy", owner=user), make_bot("random", owner=user)
    order = start(user_client, a, b, elo0=10, elo1=10)
    assert order.status_code == 400
    assert order.json()["errors"] == {"elo1": [ERROR_ELO_ORDER.format(gap=MIN_ELO_GAP)]}
    assert start(user_client, a, b, elo0=10, elo1=10.5).status_code == 400
    rates = start(user_client, a, b, alpha=0, beta=0.5)
    assert rates.json()["errors"] == {"alpha": [ERROR_ERROR_RATE], "beta": [ERROR_ERROR_RATE]}
    for payload, field in [
        ({"max_sets": 0}, "max_sets"),
        ({"max_sets": 10**6}, "max_sets"),
        ({"elo0": "x"}, "elo0"),
        ({"elo1": 5000}, "elo1"),
    ]:
        response = start(user_client, a, b, **payload)
        assert response.status_code == 400 and field in response.json()["errors"], payload
    b.id = 424242  # no such bot
    assert "baseline" in start(user_client, a, b).json()["errors"]


def test_the_daily_quota_answers_429(user, user_client, make_bot, settings):
    settings.ESCOBA_TESTS_PER_DAY = 1
    a, b = make_bot("greedy", owner=user), make_bot("random", owner=user)
    assert start(user_client, a, b, max_sets=2).status_code == 201
    refused = start(user_client, a, b, max_sets=2)
    assert refused.status_code == 429 and refused.json()["retry_after"] > 0
    assert refused["Retry-After"] == str(refused.json()["retry_after"])


def test_tests_are_listed_by_bot(user, user_client, make_bot):
    a, b, c = (make_bot(e, owner=user) for e in ("greedy", "random", "random7"))
    test_id = start(user_client, a, b, max_sets=2).json()["id"]
    assert [t["id"] for t in APIClient().get(f"/api/tests/?bot={b.id}").json()["results"]] == [
        test_id
    ]
    assert APIClient().get(f"/api/tests/?bot={c.id}").json()["results"] == []


# committed: the create's answer shows the test as its sets left it, played on that commit
@pytest.mark.django_db(transaction=True)
def test_the_owner_is_told_once_when_the_test_ends(user, user_client, make_bot):
    from tournaments.models import Notification

    candidate, baseline = make_bot("expert", owner=user), make_bot("random", owner=user)
    shown = start(user_client, candidate, baseline).json()
    (told,) = Notification.objects.all()  # one, though several sets ended
    assert (told.user, told.event, told.bot) == (user, "version_test.finished", candidate)
    assert told.data["test"] == shown["id"] and told.data["status"] == "accepted"
    assert "accepted" in told.data["summary"] and f"{shown['sets']} sets" in told.data["summary"]
    version_test_update(league_id=shown["league"])  # a late update of a decided test
    assert Notification.objects.count() == 1


def test_a_set_on_fresh_deals_counts_by_points_but_a_version_test_counts_it_by_games():
    """Bot 1 wins both games of a set on two deals by 2 points each: 7/12 by game points (as a
    challenge between two owners shows it), a won set for a version test's SPRT, whose
    five outcomes are a two-game set's by games won."""
    games = [
        Game(seating=[1, 2], seed=11, winner=0, totals=[21, 19], forfeit=None),
        Game(seating=[2, 1], seed=12, winner=1, totals=[19, 21], forfeit=None),
    ]
    team_of = Ruleset.from_preset("classic", {"players": 2}).team_of
    assert round(12 * set_score_of(games, 1, team_of)) == 7
    assert set_score_of(games, 1, team_of, by_games=True) == 1.0
    assert sprt.outcome_index(set_score_of(games, 2, team_of, by_games=True)) == 0
    one_deal = [Game(seating=g.seating, seed=11, winner=g.winner, totals=g.totals) for g in games]
    assert set_score_of(one_deal, 1, team_of) == 1.0  # a duplicate set: by games won
