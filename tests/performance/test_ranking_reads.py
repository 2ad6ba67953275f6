"""The rankings' fast reads (tournaments/api/rankings.py, web/views.py ``rankings``) answer what
the slow paths they skip answer: the API takes a well-formed ``pool`` without making a filter set,
and every value the filter set refuses still gets the filter set's 400.
"""

from __future__ import annotations

import pytest
from django.http import QueryDict
from rest_framework.test import APIClient

from tests.performance.data import fill_database, rows_for_a_module
from tournaments.api.filters import RankingFilter
from tournaments.selectors.ratings import published_ratings

pytestmark = pytest.mark.django_db

# (the query's pool values, how many bots its ranking has, or None: a 400)
CASES = [
    ([""], 5),
    (["classic/2p"], 5),
    (["classic/3p"], 0),
    (["x" * 40 + "/2p"], 0),
    (["bad", ""], 5),  # the last value counts
    (["classic/2p", "bad"], None),
    (["classic/2p\n"], None),
    ([" classic/2p"], None),
    (["Classic/2p"], None),
    (["classic/5p"], None),
    (["classic"], None),
    (["a\x00b"], None),
    (["x" * 41 + "/2p"], None),
    (["classic/2p/2p"], None),
    (["ñandú/2p"], None),
]


@pytest.fixture(scope="module")
def filled(django_db_setup, django_db_blocker):
    with rows_for_a_module(django_db_blocker, lambda: fill_database(games=24, bots=5)) as made:
        yield made


@pytest.mark.parametrize(("values", "ranked"), CASES, ids=[str(n) for n in range(len(CASES))])
def test_the_pool_is_checked_as_the_ranking_filter_checks_it(filled, values, ranked):
    data = QueryDict(mutable=True)
    data.setlist("pool", values)
    expected = RankingFilter(data, queryset=published_ratings())
    assert expected.is_valid() == (ranked is not None)
    response = APIClient().get("/api/rankings/", data)
    if ranked is None:
        assert response.status_code == 400
        assert response.json()["errors"] == {"pool": list(expected.errors["pool"])}
    else:
        assert response.status_code == 200
        bots = [row["bot"] for row in response.json()["results"]]
        assert bots == [rating.bot_id for rating in expected.qs]
        assert len(bots) == ranked
