"""The SQL queries a read costs must not grow with the rows behind it.

Each endpoint is read twice: on a small database (one league of 4 bots, 12 games) about the
small league's objects, then on a database twenty times larger about the largest league's
objects (10 bots, 90 games, longer rating histories). An N+1 query (one per bot, per game, per
rating change) would show up as a higher count the second time.
"""

import re

import pytest
from django.core.cache import cache
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from tests.performance.data import fill_database
from tournaments.models import Bot, Game, League

# The data is made once by a module fixture; the mark makes pytest-django set up the test database.
pytestmark = pytest.mark.django_db

ENDPOINTS = {
    "rankings": "/api/rankings/?pool=classic/2p",
    "rating history": "/api/rankings/history/?bot={bot}",
    "leagues": "/api/leagues/",
    "league": "/api/leagues/{league}/",
    "crosstable": "/api/leagues/{league}/crosstable/",
    "matches": "/api/matches/?league={league}",
    "games": "/api/games/?league={league}",
    "game": "/api/games/{game}/",
    "game log": "/api/games/{game}/log/",
    "game diagnostics": "/api/games/{game}/diagnostics/",
    "bots": "/api/bots/",
    "bot": "/api/bots/{bot}/",
    "rankings page": "/?pool=classic/2p",
    "league list page": "/leagues/",
    "league page": "/leagues/{league}/",
    "league games page": "/leagues/{league}/games/",
    "game page": "/games/{game}/",
    "bot page": "/bots/{bot}/",
}


# These read one game's log or diagnostics on purpose. A bot page draws its latencies and faults
# from the figures each seat stored when its game finished, never from logs.
LOG_READERS = {"game log", "game diagnostics", "game page"}
LOG_CONTENT = re.compile(r'"tournaments_gamelog"\."(document_gzip|diagnostics_gzip)"')


def queries_per_endpoint(league: League) -> dict[str, list[str]]:
    """The SQL each endpoint ran, by endpoint name."""
    client = APIClient()
    ids = {
        "league": league.id,
        "game": Game.objects.filter(league=league).order_by("-id").values_list("id", flat=True)[0],
        "bot": league.bots.order_by("-id").values_list("id", flat=True)[0],
    }
    sql = {}
    for name, path in ENDPOINTS.items():
        cache.clear()  # the queries of building the answer, not of a cached one (zero)
        with CaptureQueriesContext(connection) as queries:
            response = client.get(path.format(**ids))
        assert response.status_code == 200, (name, response.status_code)
        sql[name] = [query["sql"] for query in queries]
    return sql


@pytest.fixture(scope="module")
def reads(django_db_setup, django_db_blocker) -> tuple[dict[str, list], dict[str, list]]:
    """The SQL of every endpoint on the small and on the big database (made once, rolled back)."""
    with django_db_blocker.unblock(), transaction.atomic():
        small = fill_database(games=12, bots=4, bots_per_league=4)
        small_sql = queries_per_endpoint(League.objects.get(pk=small.leagues[0]))
        big = fill_database(games=270, bots=12, bots_per_league=10)
        assert Game.objects.count() == 282 and Bot.objects.count() == 16
        big_sql = queries_per_endpoint(League.objects.get(pk=big.leagues[-1]))
        transaction.set_rollback(True)
    return small_sql, big_sql


@pytest.fixture(scope="module")
def counts(reads) -> tuple[dict[str, int], dict[str, int]]:
    """Query counts per endpoint on the small and on the big database."""
    small, big = reads
    return {name: len(sql) for name, sql in small.items()}, {k: len(v) for k, v in big.items()}


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_query_count_does_not_grow_with_rows(counts, endpoint):
    small, big = counts
    assert big[endpoint] <= small[endpoint], (
        f"{ENDPOINTS[endpoint]}: {small[endpoint]} queries on the small database, "
        f"{big[endpoint]} on the big one"
    )


@pytest.mark.parametrize("endpoint", sorted(set(ENDPOINTS) - LOG_READERS))
def test_no_list_or_summary_loads_a_game_log(reads, endpoint):
    """A log is tens of KB: only the endpoints that show one may read its table's contents (a
    list may read each game's small fault list from it)."""
    _, big = reads
    assert not [sql for sql in big[endpoint] if LOG_CONTENT.search(sql)], ENDPOINTS[endpoint]


# Game's default ordering: by match, so by the match's league (newest first), then number.
GAME_DEFAULT_ORDER = (
    'ORDER BY "tournaments_league"."created_at" DESC, "tournaments_league"."id" DESC, '
    '"tournaments_match"."number" ASC, "tournaments_game"."number" ASC'
)


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_no_read_sorts_games_through_their_league(reads, endpoint):
    """``Game``'s default ordering joins the match and league tables and sorts on four keys, for
    any read of games that does not say its own order: one game by its key, or the few games of
    a set, would pay for that join on every read. Every read of games names its order."""
    _, big = reads
    assert not [sql for sql in big[endpoint] if GAME_DEFAULT_ORDER in sql], ENDPOINTS[endpoint]
