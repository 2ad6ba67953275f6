"""The admin pages of leagues, matches, games and ratings render, and league actions work."""

import pytest
from django.contrib.auth import get_user_model

from tournaments import queueing
from tournaments.models import Game, League
from tournaments.services.league_creation import league_create
from tournaments.services.league_schedules import league_start

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def admin_client(client):
    admin = get_user_model().objects.create_superuser("root", "", "pw")
    client.force_login(admin)
    return client


def test_admin_pages_render_and_pause_a_league(admin_client, user, make_bot, monkeypatch):
    monkeypatch.setattr(queueing, "matches_enqueue_on_commit", lambda ids: None)
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
        "/admin/tournaments/ratedset/",
        "/admin/tournaments/ratingfit/",
    ]:
        assert admin_client.get(path).status_code == 200, path
    response = admin_client.post(
        "/admin/tournaments/league/",
        {"action": "paused_leagues", "_selected_action": [league.id]},
    )
    assert response.status_code == 302
    league.refresh_from_db()
    assert league.status == League.Status.PAUSED


def test_admin_starts_pauses_resumes_and_cancels_leagues(admin_client, user, make_bot, monkeypatch):
    enqueued: list[int] = []
    monkeypatch.setattr(queueing, "matches_enqueue_on_commit", enqueued.extend)
    monkeypatch.setattr(queueing, "matches_requeue_on_commit", enqueued.extend)  # resume's
    bots = [make_bot("greedy"), make_bot("random"), make_bot("expert")]
    league = league_create(creator=user, name="admin", bot_ids=[b.id for b in bots])
    other = league_create(creator=user, name="other", bot_ids=[b.id for b in bots])

    def act(action: str, *leagues: League) -> str:
        response = admin_client.post(
            "/admin/tournaments/league/",
            {"action": action, "_selected_action": [x.id for x in leagues]},
            follow=True,
        )
        assert response.status_code == 200
        return response.content.decode()

    act("started_leagues", league)
    assert League.objects.get(pk=league.pk).status == League.Status.RUNNING
    assert len(enqueued) == 3  # one task per match, as from the API
    act("paused_leagues", league)
    assert League.objects.get(pk=league.pk).status == League.Status.PAUSED
    enqueued.clear()
    act("resumed_leagues", league)
    assert League.objects.get(pk=league.pk).status == League.Status.RUNNING
    assert len(enqueued) == 3  # the matches the pause held back go out again
    # one action on two leagues: each gets its own answer, a refusal does not stop the other
    page = act("resumed_leagues", league, other)
    assert "cannot be resumed" in page
    act("cancelled_leagues", league, other)
    assert set(League.objects.values_list("status", flat=True)) == {League.Status.CANCELLED}
    assert not league.matches.exclude(status="cancelled").exists()
