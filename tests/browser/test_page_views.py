"""The page views through Django's test client: access rules, bad input and empty states."""

import json
import re
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils.html import json_script

from tests.browser.data import stored_game
from tournaments.models import Bot
from web.forms import PASSWORDS_DIFFER
from web.templatetags.cards import card, french_labels
from web.templatetags.json_data import json_data

pytestmark = pytest.mark.django_db


def _bot(owner, name="solo") -> Bot:
    return Bot.objects.create(owner=owner, name=name, url="http://127.0.0.1:9/", secret="whsec_x")


def test_empty_site_pages_render(client):
    for name in ("rankings", "league_list", "login", "signup"):
        response = client.get(reverse(name))
        assert response.status_code == 200, name
        assert b'<main id="main"' in response.content


def test_my_bots_needs_a_login(client):
    response = client.get(reverse("my_bots"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_only_the_owner_may_run_a_bots_check(client, user, django_user_model):
    other = django_user_model.objects.create_user(username="other", password="x-long-pass-123")
    bot = _bot(other)
    client.force_login(user)
    response = client.post(reverse("my_bot_check", args=[bot.pk]))
    assert response.status_code == 403
    bot.refresh_from_db()
    assert bot.last_checked_at is None


def test_a_bots_secret_is_never_on_its_public_page(client, user):
    bot = _bot(user)
    response = client.get(reverse("bot_detail", args=[bot.pk]))
    assert response.status_code == 200
    assert bot.secret.encode() not in response.content
    assert bot.url.encode() not in response.content


def test_unknown_ids_and_bad_parameters_are_404s(client):
    missing = client.get(reverse("bot_detail", args=[999]))
    assert missing.status_code == 404
    assert b"<h1>Not found</h1>" in missing.content
    assert client.get(reverse("game_replay", args=[999])).status_code == 404
    assert client.get(reverse("league_detail", args=[999])).status_code == 404
    assert client.get("/leagues/1/games/?a=x").status_code == 404


def test_sign_up_refuses_different_passwords(client, django_user_model):
    response = client.post(
        reverse("signup"),
        {"username": "luz", "password": "a-long-pass-991", "password_again": "a-long-pass-992"},
    )
    assert response.status_code == 200
    assert PASSWORDS_DIFFER in response.content.decode()
    assert not django_user_model.objects.filter(username="luz").exists()


def test_sign_up_shows_the_password_validators_messages(client, django_user_model):
    response = client.post(
        reverse("signup"), {"username": "luz", "password": "123", "password_again": "123"}
    )
    assert "too short" in response.content.decode()
    assert not django_user_model.objects.filter(username="luz").exists()


def test_card_tag_renders_both_decks_and_a_spoken_name():
    html = card("9c")
    assert 'data-card="9c"' in html
    assert 'aria-label="caballo (9) of copas, Q♥"' in html
    assert ">Q♥<" in html


def test_json_data_writes_what_json_script_writes_and_nothing_closes_its_element():
    value = {
        "name": "</script><script>alert(1)</script><!-- & -->",
        "ñ": ["sota (8) of oros", 1.5, None, True],
        "amount": Decimal("2.50"),
        7: "a number as a key",
    }
    start, end = '<script id="data" type="application/json">', "</script>"
    ours, django = json_data(value, "data"), json_script(value, "data")
    assert ours.startswith(start) and ours.endswith(end)
    body = ours[len(start) : -len(end)]
    assert not {"<", ">", "&"} & set(body)
    expected = {"name": value["name"], "ñ": value["ñ"], "amount": "2.50", "7": "a number as a key"}
    assert json.loads(body) == json.loads(django[len(start) : -len(end)]) == expected


def test_french_labels_cover_the_deck():
    labels = french_labels()
    assert len(labels) == 40
    assert labels["1o"] == "A♦" and labels["8e"] == "J♠" and labels["10b"] == "K♣"


def test_registering_an_unreachable_bot_shows_why_on_the_url_field(client, user):
    client.force_login(user)
    response = client.post(
        reverse("my_bots"), {"name": "ghost", "url": "http://127.0.0.1:9/", "description": ""}
    )
    assert response.status_code == 200
    form = response.context["form"]
    assert form.errors.get("url"), form.errors
    assert not Bot.objects.filter(name="ghost").exists()
    assert b"whsec_" not in response.content


def test_absurd_ids_are_404s_not_overflows(client, user):
    game = stored_game(user, ruleset={"name": "classic", "version": 1, "options": {}}, seed=3)
    huge = "9" * 25
    for page in ("bots", "games", "leagues"):
        path = f"/{page}/{huge}/"
        assert client.get(path).status_code == 404, path
    games = reverse("league_games", args=[game.league_id])
    for query in (f"?a={huge}", "?a=²", "?a=١", "?a=999999", f"?a={game.seating[0]}&b=999999"):
        assert client.get(games + query).status_code == 404, query


def test_league_games_without_a_pair_lists_every_game(client, user):
    game = stored_game(user, ruleset={"name": "classic", "version": 1, "options": {}}, seed=3)
    response = client.get(reverse("league_games", args=[game.league_id]))
    assert response.status_code == 200
    assert "<h1>All games</h1>" in response.content.decode()
    assert [row["id"] for row in response.context["games"]] == [game.pk]


def test_an_aborted_game_says_so_instead_of_a_replay(client, user):
    game = stored_game(user, ruleset={"name": "classic", "version": 1, "options": {}}, seed=3)
    html = client.get(reverse("game_replay", args=[game.pk])).content.decode()
    assert "Aborted (match time limit)" in html
    assert "stopped before it finished (match time limit)" in html
    assert "not been played yet" not in html
    assert "data-replay" not in html


def test_league_standings_show_the_leagues_own_results_not_a_second_elo(client, user):
    """Issue 12 item 7, page side: the one Elo a league page shows is the pool rating."""
    game = stored_game(user, ruleset={"name": "classic", "version": 1, "options": {}}, seed=3)
    for bot in Bot.objects.all():
        game.league.entries.create(bot=bot)
    html = client.get(reverse("league_detail", args=[game.league_id])).content.decode()
    standings = html.split('data-testid="standings"', 1)[1].split("</thead>", 1)[0]
    headers = re.findall(r"<th[^>]*>([^<]*)</th>", standings)
    assert headers == [
        "#",
        "Bot",
        "Pts",
        "Games",
        "W",
        "D",
        "L",
        "Sets W–D–L",
        "For–against",
        "Pool rating",
    ]
    assert "±95%" not in html
