"""The API's hot reads, built from plain rows (tournaments/api/rows.py), answer byte for byte
what the serializers that describe them in the schema answer from model instances.

On a small filled database (rated leagues played by the engine, a rated set in play whose
finished game is sealed and names no bot, an unrated set in play, a seat with faults and no
latencies), every game, league, ranking and bot read of benchmarks/api_load.py is asked of the
API and compared with the serializer's answer for the same rows, rendered by the same renderer.
"""

from __future__ import annotations

import pytest
from django.db.models import F, Prefetch
from rest_framework.renderers import JSONRenderer
from rest_framework.test import APIClient

from tests.performance.data import fill_database, rows_for_a_module, set_in_play
from tournaments.api.bot_serializers import BotSerializer
from tournaments.api.league_serializers import (
    BOTS,
    SEATS,
    GameSerializer,
    LeagueDetailSerializer,
    LeagueSerializer,
)
from tournaments.api.rankings import RankingRowSerializer
from tournaments.models import Bot, Game, League, Rating, Seat
from tournaments.selectors.leagues import (
    league_progress,
    league_standings,
    match_games_numbered,
    seats_with_bots,
)
from tournaments.selectors.play import with_people_record
from tournaments.selectors.ratings import ranking

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def filled(django_db_setup, django_db_blocker):
    """The rows every test of the module reads (made once, rolled back after the module)."""
    with rows_for_a_module(django_db_blocker, _fill) as made:
        yield made


def _fill():
    made = fill_database(games=60, bots=6, bots_per_league=6)
    bots = list(Bot.objects.filter(pk__in=made.bots).order_by("id"))
    creator = bots[0].owner
    in_play = [
        *set_in_play(rated=True, bots=bots[:2], creator=creator),
        *set_in_play(rated=False, bots=bots[2:4], creator=creator),
    ]
    seat = Seat.objects.filter(game__league_id=made.leagues[0]).order_by("id").first()
    Seat.objects.filter(pk=seat.pk).update(
        faults=2, fault_kinds={"timeout": 1, "illegal": 1}, latency_p95_ms=None
    )
    return made, in_play


def _rendered(data) -> bytes:
    return JSONRenderer().render(data)


def _pages(client: APIClient, path: str) -> list[tuple[bytes, dict]]:
    """Every page of a list: its body and its parsed envelope."""
    pages = []
    while path:
        response = client.get(path)
        assert response.status_code == 200, (path, response.content)
        pages.append((response.content, response.json()))
        path = response.json()["next"]
    return pages


def _old_games(ids: list[int]) -> dict[int, dict]:
    """The games as GameSerializer shows them, read as the games API read them before."""
    games = (
        Game.objects.filter(pk__in=ids)
        .select_related("match", "league")
        .annotate(fault_list=F("log__faults"))
        .prefetch_related(seats_with_bots(to_attr=SEATS), match_games_numbered())
    )
    serializer = GameSerializer(context={})
    return {game.pk: serializer.to_representation(game) for game in games}


def test_games_list_and_detail_answer_what_the_serializer_does(filled):
    _, in_play = filled
    client = APIClient()
    old = _old_games(list(Game.objects.values_list("id", flat=True)))
    assert len(old) == Game.objects.count() > 60
    for path in ("/api/games/", "/api/games/?ordering=-id", *(
        f"/api/games/?league={league}" for league in League.objects.values_list("id", flat=True)
    )):  # fmt: skip
        for body, page in _pages(client, path):
            expected = {**page, "results": [old[row["id"]] for row in page["results"]]}
            assert body == _rendered(expected), path
    for game_id, shown in old.items():
        assert client.get(f"/api/games/{game_id}/").content == _rendered(shown)
    # the cases the rows decide themselves: no bot named in rated play, no seed while sealed
    rated_over, rated_playing, unrated_over, _ = (old[game_id] for game_id in in_play)
    assert [seat["bot"] for seat in rated_over["seats"] + rated_playing["seats"]] == [None] * 4
    assert rated_over["duplicate"]["seed"] is None and rated_over["result"] is not None
    assert all(seat["bot"] for seat in unrated_over["seats"])
    assert any(seat["fault_kinds"] for game in old.values() for seat in game["seats"])


def test_leagues_list_and_detail_answer_what_the_serializers_do(filled):
    client = APIClient()
    leagues = League.objects.select_related("creator").prefetch_related(
        Prefetch("bots", queryset=Bot.objects.only("id", "name"), to_attr=BOTS)
    )
    old = {league.pk: LeagueSerializer(league).data for league in leagues}
    listed = 0
    for body, page in _pages(client, "/api/leagues/?kind=all"):
        assert body == _rendered({**page, "results": [old[r["id"]] for r in page["results"]]})
        listed += len(page["results"])
    assert listed == len(old) > 2
    for league in leagues:
        context = {"progress": league_progress(league), "standings": league_standings(league)}
        shown = LeagueDetailSerializer(league, context=context).data
        assert client.get(f"/api/leagues/{league.pk}/").content == _rendered(shown)
        assert any(row["rating"] is not None for row in shown["standings"]) or not league.rated


def _old_ranking(sort: bool) -> list[dict]:
    """The ranking as RankingRowSerializer showed it from Rating instances."""
    ratings = list(with_people_record(ranking("classic/2p")))
    if sort:
        ratings.sort(key=lambda r: (-r.people_wins, -r.people_games, r.rank))
    return RankingRowSerializer(ratings, many=True).data


def test_rankings_and_bots_answer_what_the_serializers_do(filled):
    made, _ = filled
    client = APIClient()
    for sort in (False, True):
        path = "/api/rankings/?pool=classic/2p" + ("&sort=people" if sort else "")
        (body, page), *more = _pages(client, path)
        assert not more and page["results"]
        assert body == _rendered({**page, "results": _old_ranking(sort)})
    assert Rating.objects.filter(los_next__isnull=True).exists()
    bots = Bot.objects.select_related("owner").prefetch_related(
        "ratings__version", "versions__ratings__version", "versions__bot"
    )
    for bot in bots.filter(pk__in=made.bots):
        shown = BotSerializer(bot).data  # no request: the public view
        assert "url" not in shown and shown["versions"]
        assert client.get(f"/api/bots/{bot.pk}/").content == _rendered(shown)
