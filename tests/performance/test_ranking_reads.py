"""The rankings' fast reads (tournaments/api/rankings.py, web/views.py ``rankings``) answer what
the slow paths they skip answer: the API takes a well-formed ``pool`` without making a filter set,
and every value the filter set refuses still gets the filter set's 400; the page writes its pool
switcher as the form's widget does and links every bot where ``reverse`` says.
"""

from __future__ import annotations

import re

import pytest
from django.http import QueryDict
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from tests.performance.data import fill_database, rows_for_a_module
from tournaments.api.filters import RankingFilter
from tournaments.models import Bot, BotVersion, Rating
from tournaments.selectors.ratings import published_ratings, rating_pools
from web.forms import RankingFilterForm

pytestmark = pytest.mark.django_db

# (the query's pool values, how many bots its ranking has, or None: a 400)
CASES = [
    ([""], 5),
    (["classic/2p"], 5),
    (["classic/3p"], 1),
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


def test_with_no_rating_yet_the_page_offers_the_default_pool():
    """First in the module: no rows are made yet."""
    assert rating_pools() == []
    page = Client().get("/").content.decode()
    assert "No rated sets in classic/2p yet." in page
    assert re.search(r'<select name="pool".*?</select>', page, re.DOTALL).group(0) == str(
        RankingFilterForm(None, pools=["classic/2p"])["pool"]
    )
    assert APIClient().get("/api/rankings/").json()["count"] == 0


def _fill():
    """Five bots ranked in classic/2p, one of them in classic/3p too (a second pool to switch
    to)."""
    made = fill_database(games=24, bots=5)
    rating = Rating.objects.filter(pool="classic/2p", rank=1).get()
    rating.pk, rating.pool = None, "classic/3p"
    rating.save()
    return made


@pytest.fixture(scope="module")
def filled(django_db_setup, django_db_blocker):
    with rows_for_a_module(django_db_blocker, _fill) as made:
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


PAGE_QUERIES = [
    "",
    "pool=classic/2p",
    "pool=classic/3p",
    "pool=classic/3p&sort=people",
    "pool=zzz",
    "pool=classic/3p&q=" + "x" * 41,  # too long a search: the form and both fields fall back
    "q=load-bot",
    "pool=classic/2p&pool=classic/3p",
    "pool=%3Cb%3E",
]


@pytest.mark.parametrize("query", PAGE_QUERIES, ids=[str(n) for n in range(len(PAGE_QUERIES))])
def test_the_rankings_page_writes_its_form_and_links_as_django_does(filled, query):
    page = Client().get(f"/?{query}").content.decode()
    assert rating_pools() == ["classic/2p", "classic/3p"]
    form = RankingFilterForm(QueryDict(query) or None, pools=rating_pools())
    form.is_valid()
    select = re.search(r'<select name="pool".*?</select>', page, re.DOTALL)
    assert select.group(0) == str(form["pool"])
    links = re.findall(r'<td class="name"><a href="([^"]+)">', page)
    # every case shows a whole ranking: the search matches every bot, or is too long to count
    pool = (form.is_valid() and form.cleaned_data["pool"]) or "classic/2p"
    ranked = published_ratings().filter(pool=pool)
    assert sorted(links) == sorted(reverse("bot_detail", args=[r.bot_id]) for r in ranked)


def test_the_rankings_rows_escape_every_text(filled):
    rating = Rating.objects.filter(pool="classic/2p", rank=1).select_related("bot__owner").get()
    Bot.objects.filter(pk=rating.bot_id).update(name="<b>\"Tom\" & 'Jerry'</b>")
    rating.bot.owner.username = "<i>owner</i>"
    rating.bot.owner.save()
    BotVersion.objects.filter(pk=rating.version_id).update(version="<v1>")
    page = Client().get("/").content.decode()
    assert "<b>" not in page and "<i>" not in page and "<v1>" not in page
    name = "&lt;b&gt;&#34;Tom&#34; &amp; &#39;Jerry&#39;&lt;/b&gt;"
    assert f'<tr data-bot="{name}"' in page
    assert f'>{name}</a> <span class="muted small">&lt;v1&gt;</span>' in page
    assert '<td class="hide-narrow">&lt;i&gt;owner&lt;/i&gt;</td>' in page
