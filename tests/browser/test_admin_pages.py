"""The admin's links to replays and its league start action (issue 6's admin polish)."""

import pytest
from django.urls import reverse

from tournaments.models import Game, League
from tournaments.services.league_creation import league_create

pytestmark = pytest.mark.integration


@pytest.fixture
def world(league_world):
    return league_world()


@pytest.fixture
def staff_client(world, client, django_user_model):
    """Signed in as staff, made after the league (``league_world`` saves an empty database's
    league once and copies it into the next test's, never into one with rows of its own)."""
    staff = django_user_model.objects.create_superuser(username="boss", password="x-long-pass-9")
    client.force_login(staff)
    return client


def test_each_game_links_to_its_replay(world, staff_client):
    game = Game.objects.filter(status=Game.Status.FINISHED).first()
    replay = reverse("game_replay", args=[game.pk]).encode()
    assert replay in staff_client.get(reverse("admin:tournaments_game_changelist")).content
    change = reverse("admin:tournaments_game_change", args=[game.pk])
    assert replay in staff_client.get(change).content
    match = reverse("admin:tournaments_match_change", args=[game.match_id])
    assert replay in staff_client.get(match).content


def test_the_league_admin_starts_a_league(world, staff_client):
    league = league_create(
        creator=world.owner, name="Second", players=2, bot_ids=[bot.pk for bot in world.bots]
    )
    response = staff_client.post(
        reverse("admin:tournaments_league_changelist"),
        {"action": "started_leagues", "_selected_action": [league.pk]},
    )
    assert response.status_code == 302
    league.refresh_from_db()
    assert league.status in (League.Status.RUNNING, League.Status.FINISHED)
    assert league.games.count() == 6
