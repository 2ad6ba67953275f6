"""The admin pages of leagues, matches, games and ratings render, and league actions work."""

import pytest
from django.contrib.auth import get_user_model

from tournaments.models import Game, League
from tournaments.services import leagues as league_services
from tournaments.services.leagues import league_create, league_start

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def admin_client(client):
    admin = get_user_model().objects.create_superuser("root", "", "pw")
    client.force_login(admin)
    return client


def test_admin_pages_render_and_pause_a_league(admin_client, user, make_bot, monkeypatch):
    monkeypatch.setattr(league_services, "_enqueue_on_commit", lambda ids: None)
    league = league_create(
        creator=user, name="admin", bot_ids=[make_bot("greedy").id, make_bot("random").id]
    )
    league_start(league_id=league.id, user=user)
    game = Game.objects.filter(league=league).first()
    for path in [
        "/admin/tournaments/league/",
        f"/admin/tournaments/league/{league.id}/change/",
        "/admin/tournaments/match/",
        f"/admin/tournaments/match/{game.match_id}/change/",
        "/admin/tournaments/game/",
        f"/admin/tournaments/game/{game.id}/change/",
        "/admin/tournaments/rating/",
        "/admin/tournaments/ratingchange/",
    ]:
        assert admin_client.get(path).status_code == 200, path
    response = admin_client.post(
        "/admin/tournaments/league/",
        {"action": "paused_leagues", "_selected_action": [league.id]},
    )
    assert response.status_code == 302
    league.refresh_from_db()
    assert league.status == League.Status.PAUSED
