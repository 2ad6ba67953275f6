"""Lists that grow with play page by cursor (keyset): following ``next`` visits every row once in
order, ``previous`` comes back, ``count`` is the whole list's, and a cursor we did not make is a
400 in our words. The league's games page pages the same way through its earlier/later links."""

import re
from base64 import b64encode

import pytest
from django.test import Client
from rest_framework.test import APIClient

from benchmarks import pool_data
from tournaments.api import pagination
from tournaments.models import Game, League
from tournaments.selectors import leagues as league_selectors

pytestmark = pytest.mark.django_db


@pytest.fixture
def league(monkeypatch) -> League:
    monkeypatch.setattr(pagination.KeysetPagination, "page_size", 5)
    monkeypatch.setattr(league_selectors, "GAMES_PER_PAGE", 5)
    pool_data.pool_fill(games=1, bots=4, bots_per_league=4, fit_every=0)  # 12 games
    return League.objects.get(kind=League.Kind.LEAGUE)


def schedule(league: League) -> list[int]:
    return list(Game.objects.filter(league=league).order_by("id").values_list("id", flat=True))


def walk(client: APIClient, url: str) -> tuple[list[int], list[dict]]:
    ids, pages = [], []
    while url:
        body = client.get(url).json()
        pages.append(body)
        ids += [row["id"] for row in body["results"]]
        url = body["next"]
    return ids, pages


def test_following_next_visits_every_game_once_in_order(league):
    client = APIClient()
    ids, pages = walk(client, f"/api/games/?league={league.id}")
    assert ids == list(
        Game.objects.filter(league=league).order_by("id").values_list("id", flat=True)
    )
    assert [len(page["results"]) for page in pages] == [5, 5, 2]
    assert {page["count"] for page in pages} == {12}
    assert pages[0]["previous"] is None
    back = client.get(pages[1]["previous"]).json()
    assert [row["id"] for row in back["results"]] == ids[:5]

    newest, _ = walk(client, "/api/games/?ordering=-id")
    assert newest == sorted(ids, reverse=True)


def test_counts_come_from_the_running_totals(league):
    client = APIClient()
    assert client.get("/api/games/?status=finished").json()["count"] == 12
    assert client.get("/api/games/?status=pending").json()["count"] == 0
    assert client.get(f"/api/games/?league={league.id}&status=aborted").json()["count"] == 0
    match = league.matches.order_by("number").first()
    assert client.get(f"/api/games/?match={match.id}").json()["count"] == 2
    listed, _ = walk(client, "/api/leagues/")
    assert listed == [league.id]


@pytest.mark.parametrize(
    "url",
    [
        "/api/games/?cursor=not-ours",
        # Well-formed cursors holding a position that is no value of the ordering's field.
        f"/api/games/?cursor={b64encode(b'p=abc').decode()}",
        f"/api/games/?cursor={b64encode(b'p=99999999999999999999999').decode()}",
        f"/api/leagues/?cursor={b64encode(b'p=not-a-date').decode()}",
        # A time whose UTC is past the year 9999 (SQLite stores times in UTC).
        f"/api/leagues/?cursor={b64encode(b'p=9999-12-31T23:59:59-01:00').decode()}",
        f"/api/matches/?cursor={b64encode(b'p=1.5').decode()}",
    ],
)
def test_a_cursor_we_did_not_make_is_a_400_naming_it(league, url):
    response = APIClient().get(url)
    assert response.status_code == 400
    body = response.json()
    assert body["code"] and body["errors"]["cursor"] == [pagination.ERROR_CURSOR]


def test_the_league_games_page_pages_through_every_game(league):
    client = Client()
    url = f"/leagues/{league.id}/games/"
    seen = []
    while url:
        page = client.get(url).content.decode()
        seen += [int(i) for i in re.findall(r'href="/games/(\d+)/"', page)]
        later = re.search(r'href="([^"]+)" rel="next"', page)
        url = later.group(1).replace("&amp;", "&") if later else None
    assert seen == list(
        Game.objects.filter(league=league).order_by("id").values_list("id", flat=True)
    )
    earlier = re.search(r'href="([^"]+)" rel="prev"', page)
    assert earlier is not None
    assert client.get(f"/leagues/{league.id}/games/?after=x").status_code == 404
