"""Leagues that could never start are refused at creation; open ones can be deleted."""

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from games.scheduling import ERROR_TOO_FEW_BOTS
from tests.clients import client_for
from tournaments import queueing
from tournaments.models import League, LeagueEntry
from tournaments.services.league_creation import ERROR_BOTS_REPEATED, ERROR_LEAGUE_NAME_TAKEN
from tournaments.services.league_states import ERROR_DELETE_NOT_ALLOWED, ERROR_DELETE_STARTED

pytestmark = pytest.mark.django_db

LEAGUES = "/api/leagues/"


def create(client: APIClient, name: str, bots: list[int], **fields):
    return client.post(LEAGUES, {"name": name, "bots": bots, **fields}, format="json")


def errors(response) -> dict[str, list[str]]:
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "invalid"
    return response.json()["errors"]


@pytest.fixture
def two_bots(make_bot) -> list[int]:
    return [make_bot("greedy").id, make_bot("random").id]


@pytest.mark.parametrize(
    ("players", "count", "minimum"),
    [(2, 0, 2), (2, 1, 2), (3, 2, 3), (4, 1, 2)],
)
def test_too_few_bots_for_the_table_is_a_400_on_bots(
    user_client, make_bot, players, count, minimum
):
    bots = [make_bot("greedy").id for _ in range(count)]
    response = create(user_client, "small", bots, players=players)
    assert errors(response) == {
        "bots": [ERROR_TOO_FEW_BOTS.format(minimum=minimum, players=players)]
    }
    assert not League.objects.exists()


def test_a_missing_bots_list_is_too_few_bots(user_client):
    assert "bots" in errors(user_client.post(LEAGUES, {"name": "empty"}, format="json"))


def test_enough_bots_for_each_table_size_is_accepted(user_client, make_bot):
    for players, count in ((2, 2), (3, 3), (4, 2)):
        bots = [make_bot("random").id for _ in range(count)]
        response = create(user_client, f"ok-{players}", bots, players=players)
        assert response.status_code == 201, response.json()


def test_a_bot_listed_twice_is_refused_not_merged(user_client, two_bots):
    bots = [two_bots[0], two_bots[1], two_bots[0], two_bots[1], two_bots[0]]
    response = create(user_client, "twice", bots)
    ids = ", ".join(map(str, sorted(two_bots)))
    assert errors(response) == {"bots": [ERROR_BOTS_REPEATED.format(ids=ids)]}
    assert not League.objects.exists()


def test_league_names_are_unique_ignoring_case(user_client, other_user_client, two_bots):
    assert create(user_client, "Spring Cup", two_bots).status_code == 201
    for name in ("Spring Cup", "spring cup", "  SPRING CUP "):
        response = create(other_user_client, name, two_bots)
        assert errors(response) == {"name": [ERROR_LEAGUE_NAME_TAKEN]}
    assert League.objects.count() == 1


@pytest.fixture
def other_user_client(db) -> APIClient:
    return client_for(get_user_model().objects.create_user(username="bruno"))


def test_the_creator_deletes_an_open_league(user_client, two_bots):
    league_id = create(user_client, "junk", two_bots).json()["id"]
    response = user_client.delete(f"{LEAGUES}{league_id}/")
    assert response.status_code == 204
    assert not League.objects.exists() and not LeagueEntry.objects.exists()
    assert user_client.get(f"{LEAGUES}{league_id}/").status_code == 404
    # The name is free again.
    assert create(user_client, "junk", two_bots).status_code == 201


def test_others_may_not_delete_but_staff_may(user_client, other_user_client, two_bots):
    league_id = create(user_client, "mine", two_bots).json()["id"]
    response = other_user_client.delete(f"{LEAGUES}{league_id}/")
    assert response.status_code == 403
    assert response.json() == {
        "detail": ERROR_DELETE_NOT_ALLOWED,
        "code": "permission_denied",
        "errors": {},
    }
    assert APIClient().delete(f"{LEAGUES}{league_id}/").status_code == 401
    assert League.objects.filter(pk=league_id).exists()

    staff = get_user_model().objects.create_user(username="root", is_staff=True)
    assert client_for(staff).delete(f"{LEAGUES}{league_id}/").status_code == 204
    assert not League.objects.filter(pk=league_id).exists()


def test_a_started_league_cannot_be_deleted(user_client, two_bots, monkeypatch):
    monkeypatch.setattr(queueing, "matches_enqueue_on_commit", lambda ids: None)
    league_id = create(user_client, "running", two_bots).json()["id"]
    assert user_client.post(f"{LEAGUES}{league_id}/start/").status_code == 202
    response = user_client.delete(f"{LEAGUES}{league_id}/")
    assert errors(response) == {"non_field_errors": [ERROR_DELETE_STARTED.format(status="running")]}
    assert League.objects.filter(pk=league_id, status="running").exists()


def test_a_403_from_a_league_says_permission_denied_as_the_readme_promises(
    user_client, other_user_client, two_bots
):
    league_id = create(user_client, "code", two_bots).json()["id"]
    response = other_user_client.post(f"{LEAGUES}{league_id}/start/")
    assert response.status_code == 403 and response.json()["code"] == "permission_denied"


def test_the_database_refuses_a_name_taken_since_the_check(user, two_bots):
    """No check before the insert here: the constraint itself refuses the second name, and the
    service says so in the check's own words."""
    from django.core.exceptions import ValidationError

    from tournaments.services.league_creation import league_create

    league_create(creator=user, name="Autumn Cup", bot_ids=two_bots)
    with pytest.raises(ValidationError) as refused:
        league_create(creator=user, name="AUTUMN cup", bot_ids=two_bots)

    assert refused.value.message_dict == {"name": [ERROR_LEAGUE_NAME_TAKEN]}
    assert list(League.objects.values_list("name", flat=True)) == ["Autumn Cup"]


def test_a_request_that_loses_the_race_for_a_name_gets_the_400(
    user_client, other_user_client, two_bots, monkeypatch
):
    """Two requests for one name both pass the check before either commits; the second insert
    is refused by the constraint. The check is made to see no league, as the losing request's
    check saw none."""
    from tournaments.api import league_serializers

    assert create(user_client, "Race", two_bots).status_code == 201
    monkeypatch.setattr(league_serializers, "league_create_errors", lambda **request: {})

    response = create(other_user_client, "race", two_bots)

    assert errors(response) == {"name": [ERROR_LEAGUE_NAME_TAKEN]}
    assert response.json()["detail"]
    assert League.objects.count() == 1


def test_leagues_the_arena_names_itself_take_the_next_free_name(user, two_bots):
    from tournaments.services.league_creation import league_create, league_name_free

    assert league_name_free("Ladder classic/2p") == "Ladder classic/2p"
    league_create(creator=user, name="Ladder classic/2p", bot_ids=two_bots)
    league_create(creator=user, name="ladder classic/2p (2)", bot_ids=two_bots)
    assert league_name_free("Ladder classic/2p") == "Ladder classic/2p (3)"
    assert len(league_name_free("x" * 100)) == 100
