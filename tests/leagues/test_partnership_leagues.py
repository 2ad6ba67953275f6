"""Rated partnership leagues seat four different bots of four owners, partners rotating; a
user's unrated partnership league fields one bot per team, marked as shared-hand teams."""

from __future__ import annotations

import pytest

from games.engine import Ruleset
from games.ratings.sets import fresh_set_pair_scores
from games.scheduling import ERROR_TOO_FEW_OWNERS
from tournaments.models import BotVersion, Game, League, SetScore
from tournaments.selectors.leagues import game_facts


def _league(client, bots, *, rated: bool) -> int:
    created = client.post(
        "/api/leagues/",
        {"name": f"Pairs {rated} {bots[0].id}", "players": 4, "rated": rated,
         "bots": [bot.id for bot in bots]},
        format="json",
    )  # fmt: skip
    assert created.status_code == 201, created.json()
    return created.json()["id"]


@pytest.mark.django_db
def test_a_rated_partnership_league_seats_four_owners_with_rotating_partners(
    user, user_client, make_rated_bot, client, django_capture_on_commit_callbacks
):
    user.is_staff = True
    user.save()
    bots = [make_rated_bot(example) for example in ("greedy", "random", "expert", "random7")]
    league_id = _league(user_client, bots, rated=True)
    with django_capture_on_commit_callbacks(execute=True):  # eager Celery plays it on commit
        assert user_client.post(f"/api/leagues/{league_id}/start/").status_code == 202
    games = list(Game.objects.filter(league_id=league_id).order_by("match_id", "number"))
    assert len(games) == 3
    partners = set()
    for game in games:
        assert len(set(game.seating)) == 4, "a bot holding two seats would see its partner's hand"
        partners |= {frozenset(game.seating[0::2]), frozenset(game.seating[1::2])}
    assert len(partners) == 6  # every bot partnered every other once
    for game in games:
        game.refresh_from_db()
    assert all(game.status == Game.Status.FINISHED for game in games)
    # Rated one by one: a score for each of the six pairs, from the games they were opponents.
    scores = SetScore.objects.filter(rated_set__match__league_id=league_id)
    assert scores.count() == 6
    # by the game-point margin of the two games each pair met in (fresh deals)
    team_of = Ruleset.from_dict(League.objects.get(pk=league_id).ruleset).team_of
    facts = [game_facts(game, team_of) for game in games]
    expected = {(a, b): round(12 * s) for a, b, s in fresh_set_pair_scores(facts)}
    bot_of = dict(BotVersion.objects.values_list("id", "bot_id"))
    stored = {}
    for score in scores:
        a, b = bot_of[score.player_id], bot_of[score.opponent_id]
        stored[min(a, b), max(a, b)] = score.twelfths if a < b else 12 - score.twelfths
    assert stored == expected
    page = client.get(f"/leagues/{league_id}/").content.decode()
    assert "partners rotating" in page


@pytest.mark.django_db
def test_a_rated_partnership_league_needs_four_owners_to_make_a_table(
    user, user_client, make_rated_bot
):
    user.is_staff = True
    user.save()
    # One bot per owner (a rated league refuses two of one owner at entry), but only three
    # owners: no table of four different owners can be made.
    bots = [make_rated_bot("greedy"), make_rated_bot("expert"), make_rated_bot("random7")]
    league_id = _league(user_client, bots, rated=True)
    answer = user_client.post(f"/api/leagues/{league_id}/start/")
    assert answer.status_code == 400
    assert answer.json()["errors"]["bots"] == [ERROR_TOO_FEW_OWNERS]
    assert League.objects.get(pk=league_id).status == League.Status.OPEN


@pytest.mark.django_db
def test_an_unrated_partnership_league_fields_shared_hand_teams(
    user_client, make_bot, client, django_capture_on_commit_callbacks
):
    bots = [make_bot("greedy", health="healthy"), make_bot("random", health="healthy")]
    league_id = _league(user_client, bots, rated=False)
    with django_capture_on_commit_callbacks(execute=True):  # the schedule task, eager
        assert user_client.post(f"/api/leagues/{league_id}/start/").status_code == 202
    game = Game.objects.filter(league_id=league_id).order_by("id").first()
    assert len(set(game.seating)) == 2
    assert "Shared-hand teams" in client.get(f"/leagues/{league_id}/").content.decode()
    assert 'data-testid="shared-hand-teams"' in client.get(f"/games/{game.pk}/").content.decode()
