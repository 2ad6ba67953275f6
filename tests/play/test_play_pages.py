"""The person's page and the bot page's Play button and record (web/play_views.py), and the
rankings API's record against people."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.clients import client_for
from tests.play.helpers import play_out
from tournaments.models import PersonGame

pytestmark = pytest.mark.usefixtures("transactional_db")


def test_the_play_button_the_page_and_who_may_see_it(make_bot):
    person = get_user_model().objects.create_user(username="visitor", password="x" * 20)
    bot = make_bot("greedy")
    browser = Client()
    browser.force_login(person)
    page = browser.get(f"/bots/{bot.pk}/").content.decode()
    assert 'data-testid="play-bot"' in page and "Against people (unrated): 0 games" in page
    started = browser.post(f"/bots/{bot.pk}/play/")
    person_game = PersonGame.objects.get(person=person)
    assert started.status_code == 302 and started["Location"] == f"/play/{person_game.pk}/"
    shown = browser.get(f"/play/{person_game.pk}/").content.decode()
    assert "Your turn." in shown and 'data-testid="hand"' in shown
    assert re.search(r'data-testid="clock">1[0-2][0-9]</span> s left', shown)
    assert 'aria-live="assertive"' in shown and 'aria-live="polite"' in shown
    # The bot's owner, another user and anonymous visitors find no such page.
    for user in (bot.owner, get_user_model().objects.create_user(username="other")):
        other = Client()
        other.force_login(user)
        assert other.get(f"/play/{person_game.pk}/").status_code == 404
        assert other.get(f"/play/{person_game.pk}/live/").status_code == 404
    assert Client().get(f"/play/{person_game.pk}/").status_code == 302  # to the login page
    # A bot that does not accept challenges has no Play button for others, and refuses.
    shy = make_bot("greedy", accepts_challenges=False)
    assert 'data-testid="play-bot"' not in browser.get(f"/bots/{shy.pk}/").content.decode()
    assert browser.post(f"/bots/{shy.pk}/play/").status_code == 400


def test_a_bots_record_against_people_on_its_page_and_in_the_rankings(make_bot, short_games):
    from tournaments.models import Rating
    from tournaments.selectors.play import bot_people_record

    short_games(target=1)  # a whole game, over with its first round that is not tied
    person = get_user_model().objects.create_user(username="ranker")
    bot = make_bot("greedy")
    client = client_for(person)
    made = client.post("/api/play/", {"opponent": bot.id}).json()
    state = play_out(client, made["id"], limit_s=300)
    record = bot_people_record(bot=bot)
    assert record["games"] == 1
    winner = state["result"]["winner"]
    if winner is None:
        expected = (0, 1, 0)
    elif winner == state["team"]:  # the person won: a loss for the bot
        expected = (0, 0, 1)
    else:
        expected = (1, 0, 0)
    assert (record["wins"], record["draws"], record["losses"]) == expected
    replay = Client().get(state["replay_url"])
    assert replay.status_code == 200 and "ranker" in replay.content.decode()
    page = Client().get(f"/bots/{bot.pk}/").content.decode()
    assert f"Against people (unrated): 1 game, {record['wins']} win" in page
    # The rankings API carries the record and sorts by it on request.
    other = make_bot("random")
    version = bot.versions.create(version="1")
    other_version = other.versions.create(version="1")
    common = {"pool": "classic/2p", "rating_low": 0, "rating_high": 0, "sets": 1, "games": 2}
    Rating.objects.create(bot=other, version=other_version, rank=1, rating=1600, **common)
    Rating.objects.create(bot=bot, version=version, rank=2, rating=1500, **common)
    rows = Client().get("/api/rankings/?pool=classic/2p").json()["results"]
    assert [row["bot"] for row in rows] == [other.id, bot.id]
    assert rows[1]["people"] == {
        "games": 1,
        "wins": record["wins"],
        "draws": record["draws"],
        "losses": record["losses"],
    }
    by_people = Client().get("/api/rankings/?pool=classic/2p&sort=people").json()["results"]
    # More wins against people first, then more games: the bot before the better-rated one.
    assert [row["bot"] for row in by_people] == [bot.id, other.id]
    # So does the rankings page.
    by_elo = Client().get("/?pool=classic/2p").content.decode()
    assert by_elo.index(f">{other.name}<") < by_elo.index(f">{bot.name}<")
    by_wins = Client().get("/?pool=classic/2p&sort=people").content.decode()
    assert by_wins.index(f">{bot.name}<") < by_wins.index(f">{other.name}<")
    assert "Sort by Elo" in by_wins and 'data-testid="people-record"' in by_wins
