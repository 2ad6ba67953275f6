"""`/api/challenges/`: who may challenge whom, the quota, and what a played challenge shows."""

import pytest
from django.contrib.auth import get_user_model
from django.test import TestCase
from rest_framework.test import APIClient

from tests.clients import client_for
from tournaments.models import Challenge, Game, League
from tournaments.services.challenges import (
    ERROR_NOT_ACCEPTING,
    ERROR_NOT_YOUR_BOT,
    ERROR_SAME_BOT,
    ERROR_UNKNOWN_BOT,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def rival(db):
    return get_user_model().objects.create_user(username="rival")


def challenge(client, bot, opponent, sets=2):
    # eager Celery plays the sets when the challenge's rows are committed: run that here
    with TestCase.captureOnCommitCallbacks(execute=True):
        return client.post(
            "/api/challenges/",
            {"bot": bot.id, "opponent": opponent.id, "sets": sets},
            format="json",
        )


def test_a_challenge_is_played_unrated_at_once_and_shows_its_score(
    user, user_client, rival, make_bot
):
    mine = make_bot("expert", owner=user)
    theirs = make_bot("random", owner=rival)
    created = challenge(user_client, mine, theirs, sets=3)
    assert created.status_code == 201, created.json()
    body = created.json()
    assert body["bot"] == {"id": mine.id, "name": mine.name}
    assert body["opponent"] == {"id": theirs.id, "name": theirs.name}
    assert body["sets"] == 3

    shown = APIClient().get(f"/api/challenges/{body['id']}/").json()  # anyone may read
    assert shown["status"] == "finished" and shown["sets_done"] == 3
    score = shown["score"]
    assert isinstance(score["bot"], float) and score["bot"] + score["opponent"] == 3
    assert score["bot"] > score["opponent"]  # the expert beats random play
    league = League.objects.get(pk=shown["league"])
    assert league.kind == League.Kind.CHALLENGE and not league.rated
    games = Game.objects.filter(league=league)
    assert sorted(shown["games"]) == sorted(games.values_list("id", flat=True))
    assert len(shown["games"]) == 6 and not games.filter(rated=True).exists()


def test_both_bots_list_the_challenge(user, user_client, rival, make_bot):
    mine, theirs = make_bot("greedy", owner=user), make_bot("random", owner=rival)
    other = make_bot("random7", owner=rival)
    challenge_id = challenge(user_client, mine, theirs, sets=1).json()["id"]
    for bot in (mine, theirs):
        listed = APIClient().get(f"/api/challenges/?bot={bot.id}").json()["results"]
        assert [c["id"] for c in listed] == [challenge_id]
    assert APIClient().get(f"/api/challenges/?bot={other.id}").json()["results"] == []
    assert APIClient().get("/api/challenges/?bot=x").status_code == 400


def test_only_your_own_bot_challenges_and_only_bots_that_accept(user, user_client, rival, make_bot):
    mine, theirs = make_bot("greedy", owner=user), make_bot("random", owner=rival)
    stolen = challenge(user_client, theirs, mine)
    assert stolen.status_code == 400
    assert stolen.json()["errors"] == {"bot": [ERROR_NOT_YOUR_BOT]}

    switched_off = client_for(rival).patch(
        f"/api/bots/{theirs.id}/", {"accepts_challenges": False}, format="json"
    )
    assert switched_off.status_code == 200 and switched_off.json()["accepts_challenges"] is False
    refused = challenge(user_client, mine, theirs)
    assert refused.status_code == 400
    assert refused.json()["errors"] == {"opponent": [ERROR_NOT_ACCEPTING.format(name=theirs.name)]}
    # your own bots may always meet each other
    second = make_bot("random", owner=user, accepts_challenges=False)
    assert challenge(user_client, mine, second).status_code == 201
    itself = challenge(user_client, mine, mine)
    assert itself.json()["errors"] == {"opponent": [ERROR_SAME_BOT]}
    assert not Challenge.objects.filter(opponent=theirs).exists()


def test_bad_input_is_a_400_naming_the_field(user_client, user, make_bot):
    mine = make_bot("greedy", owner=user)
    for payload, field in [
        ({"bot": mine.id, "opponent": 424242, "sets": 1}, "opponent"),
        ({"bot": mine.id, "opponent": mine.id, "sets": 0}, "sets"),
        ({"bot": mine.id, "opponent": mine.id, "sets": 11}, "sets"),
        ({"bot": "x", "opponent": mine.id}, "bot"),
        ({"opponent": mine.id}, "bot"),
        ({"bot": mine.id, "opponent": 2**70}, "opponent"),
    ]:
        response = user_client.post("/api/challenges/", payload, format="json")
        assert response.status_code == 400, payload
        body = response.json()
        assert body["code"] == "invalid" and field in body["errors"], body
    unknown = user_client.post(
        "/api/challenges/", {"bot": mine.id, "opponent": 424242}, format="json"
    )
    assert unknown.json()["errors"] == {"opponent": [ERROR_UNKNOWN_BOT]}


def test_anonymous_users_cannot_challenge(make_bot):
    a, b = make_bot("greedy"), make_bot("random")
    response = challenge(APIClient(), a, b)
    assert response.status_code == 401
    assert set(response.json()) == {"detail", "code", "errors"}


def test_the_daily_quota_answers_429_with_the_wait(user, user_client, rival, make_bot, settings):
    settings.ESCOBA_CHALLENGES_PER_DAY = 2
    mine, theirs = make_bot("greedy", owner=user), make_bot("random", owner=rival)
    assert challenge(user_client, mine, theirs, sets=1).status_code == 201
    assert challenge(user_client, mine, theirs, sets=1).status_code == 201
    refused = challenge(user_client, mine, theirs, sets=1)
    assert refused.status_code == 429
    body = refused.json()
    assert set(body) == {"detail", "code", "errors", "retry_after"}
    assert body["code"] == "quota_exceeded"
    assert isinstance(body["retry_after"], int) and 86_000 < body["retry_after"] <= 86_400
    assert refused["Retry-After"] == str(body["retry_after"])
    assert str(body["retry_after"]) in body["detail"]
    assert Challenge.objects.count() == 2
    # another user has a quota of their own
    other = make_bot("random7", owner=rival)
    assert challenge(client_for(rival), other, mine, sets=1).status_code == 201


def test_a_challenge_unknown_is_a_404_in_our_body(api_client):
    response = api_client.get("/api/challenges/424242/")
    assert response.status_code == 404 and response.json()["code"] == "not_found"


def test_the_challenged_owner_is_told_not_when_the_bot_is_your_own(
    user, user_client, rival, make_bot
):
    from tournaments.models import Notification

    mine, theirs = make_bot("greedy", owner=user), make_bot("random", owner=rival)
    first = challenge(user_client, mine, theirs, sets=1).json()["id"]
    (told,) = Notification.objects.all()
    assert (told.user, told.event, told.bot) == (rival, "challenge.received", theirs)
    assert told.data == {"challenger": user.username, "challenge": first}
    assert user.username in told.message and str(first) in told.message
    challenge(user_client, mine, make_bot("random7", owner=user), sets=1)  # your own: nobody
    assert Notification.objects.count() == 1
