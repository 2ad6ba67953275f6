"""The league pages read through fixed statements and plain rows (``league_with_progress``,
``league_table``, ``league_recent_games``, ``league_games_page``) render byte for byte what the
ORM reads of model instances they replaced rendered, kept here: the league page, its live part
and its games page (every filter and page of it), on a small database with a finished league
longer than a page, a running rated set whose games nobody may be told of, an unrated one, an
open league not started, a bot without a rating and one whose rating is of an older version.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.db.models import QuerySet
from django.template import engines
from django.test import Client
from django.urls import reverse
from jinja2 import ChoiceLoader, DictLoader

from tests.performance.data import fill_database, rows_for_a_module
from tournaments import observers
from tournaments.models import Bot, Game, League, LeagueEntry, Match, Seat
from tournaments.selectors import leagues, pages
from web import views

pytestmark = pytest.mark.django_db
CLASSIC = {"name": "classic", "version": 1, "options": {"target": 21}}

# The crosstable and standings rows as they were: each cell's markup from the selector's
# figures, each head cut by Django's filter, the points by Django's ``floatformat``.
BEFORE = Path(__file__).parent / "league_pages_before"
ROWS = settings.BASE_DIR / "web" / "jinja2" / "web" / "rows"
OLD_LEAGUE_ROWS = {
    "web/rows/crosstable.html": (BEFORE / "crosstable.html").read_text(),
    "web/rows/standings.html": (ROWS / "standings.html")
    .read_text()
    .replace('{{ row["points_shown"] }}', '{{ row["points"]|floatformat("-1") }}'),
}
# The games page's rows as they were, reading model instances (``game.match.number``) and
# each game's seats apart (``seats_of``), and the page including them so.
OLD_GAME_ROWS = (
    Path(__file__).parent / "league_pages_before" / "league_games_rows.html"
).read_text()
OLD_GAMES_PAGE = (
    (settings.BASE_DIR / "web" / "templates" / "web" / "league_games.html")
    .read_text()
    .replace(
        '{% rows "web/rows/league_games.html" games=games %}',
        '{% rows "old/league_games.html" games=games seats_of=game_seats %}',
    )
)


def _in_play(league_id: int, *, rated: bool) -> int:
    """The league running again, its last set in play: while rated, nobody may be told who
    sits at its games, and its games page leaves them out."""
    match = Match.objects.filter(league_id=league_id).order_by("number").last()
    Match.objects.filter(pk=match.pk).update(status="running")
    Game.objects.filter(match=match, number=2).update(status="pending", winner=None, totals=None)
    League.objects.filter(pk=league_id).update(status=League.Status.RUNNING, rated=rated)
    return league_id


def _fill() -> dict[str, int]:
    made = fill_database(games=56, bots=8, bots_per_league=8)  # one league, 56 games
    in_play = [fill_database(games=12, bots=4, bots_per_league=4) for _ in range(2)]
    bots = list(Bot.objects.filter(pk__in=made.bots).order_by("id"))
    creator = bots[0].owner
    finished = made.leagues[0]
    # a bot entered without a standing line or a rating, and one rated under an older version
    late = Bot.objects.create(
        owner=creator, name="late-bot", url="http://127.0.0.1:9/late", secret="whsec_" + "C" * 32
    )
    LeagueEntry.objects.create(league_id=finished, bot=late)
    Bot.objects.filter(pk=bots[1].pk).update(protocol_version="escoba-bot 2.0")
    # names cut in the crosstable's heads, escaped, normalised (a combining accent)
    Bot.objects.filter(pk=bots[2].pk).update(name="A rather long bot name")
    Bot.objects.filter(pk=bots[3].pk).update(name="Cafe\u0301")
    Bot.objects.filter(pk=bots[4].pk).update(name="<b>&\"'")
    opened = League.objects.create(
        name="not started", creator=creator, ruleset=CLASSIC, pool="classic/2p", players=2,
        seed=3, status=League.Status.OPEN,
    )  # fmt: skip
    opened.bots.set(bots[:3])
    return {
        "finished": finished,
        "rated in play": _in_play(in_play[0].leagues[0], rated=True),
        "unrated in play": _in_play(in_play[1].leagues[0], rated=False),
        "open": opened.pk,
    }


@pytest.fixture(scope="module")
def filled(django_db_setup, django_db_blocker):
    """The rows every test of the module reads (made once, rolled back after the module)."""
    with rows_for_a_module(django_db_blocker, _fill) as made:
        yield made


def _old_live_context(league_id: int) -> dict:
    """The live part's context as the ORM reads built it."""
    league = League.objects.select_related("creator").get(pk=league_id)
    bots = leagues.league_bot_names(league)
    recent = (
        Game.objects.filter(league=league, status=Game.Status.FINISHED)
        .exclude(observers.rated_games_in_play())  # they would name a set's bots in play
        .order_by("-finished_at", "-id")
        .values("id")[: views.RECENT_GAMES]
    )
    table = leagues.league_crosstable(league, bots=bots)
    games_url = reverse("league_games", args=[league.pk])
    return {
        "league": league,
        "progress": views._progress(league, leagues.league_progress(league)),
        "standings": leagues.league_standings(league, bots=bots),
        "recent_games": pages._games_with_seats(recent, totals="totals", faults="faults"),
        "crosstable": {
            "bots": table["bots"],
            "rows": [{**row, "games_url": games_url} for row in table["rows"]],
        },
        "fault_rows": pages.league_fault_rows(league=league, limit=views.RECENT_GAMES),
    }


def _old_page(games: QuerySet[Game], *, after: int | None, before: int | None):
    """A page of ``games`` (model instances) as the games page's keyset read it."""
    size = leagues.GAMES_PER_PAGE
    if before is not None:
        page = list(games.filter(pk__lt=before).order_by("-pk")[: size + 1])
        earlier = len(page) > size
        page = page[:size][::-1]
        return page, (page[-1].pk if page else None), (page[0].pk if earlier else None)
    if after is not None:
        games = games.filter(pk__gt=after)
    page = list(games.order_by("pk")[: size + 1])
    later = len(page) > size
    page = page[:size]
    return page, (page[-1].pk if later else None), (page[0].pk if page and after else None)


def _old_games_context(request, league_id: int) -> dict:
    """The games page's context as the ORM reads built it."""
    league = League.objects.select_related("creator").get(pk=league_id)
    bot_ids = sorted({int(request.GET[name]) for name in ("a", "b") if name in request.GET})
    after, before = (views._row_id(request, name) for name in ("after", "before"))
    bots = list(Bot.objects.filter(pk__in=bot_ids).order_by("name"))
    games = (
        Game.objects.filter(league=league)
        .exclude(observers.rated_games_in_play())
        .select_related("match")
        .only("id", "number", "match", "match__number", "totals", "status", "winner", "faults")
    )
    for bot in bots:
        games = games.filter(seats__bot=bot)
    if bots:
        games = games.distinct()
    page, later, earlier = _old_page(games, after=after, before=before)
    seats = {game.pk: [] for game in page}
    for game_id, team, name in (
        Seat.objects.filter(game_id__in=list(seats))
        .order_by("game_id", "seat")
        .values_list("game_id", "team", "bot__name")
    ):
        seats[game_id].append((team, name))
    return {
        "nav": "leagues",
        "league": league,
        "bots": bots,
        "games": page,
        "game_seats": seats,
        "next_url": views._page_url(request, "after", later),
        "previous_url": views._page_url(request, "before", earlier),
    }


def _old_rows(monkeypatch, rows: dict[str, str]) -> None:
    """``{% rows %}`` finds ``rows`` (template name -> source) before the templates."""
    env = engines["jinja2"].env
    monkeypatch.setattr(env, "loader", ChoiceLoader([DictLoader(rows), env.loader]))


@pytest.mark.parametrize("name", ["finished", "rated in play", "unrated in play", "open"])
def test_the_league_page_and_its_live_part_render_as_before(filled, name, monkeypatch):
    league_id = filled[name]
    client = Client()
    page = client.get(f"/leagues/{league_id}/")
    live = client.get(f"/leagues/{league_id}/live/")
    assert page.status_code == live.status_code == 200
    _old_rows(monkeypatch, OLD_LEAGUE_ROWS)
    old = _old_live_context(league_id)
    django = engines["django"]
    expected_live = django.get_template("web/partials/league_live.html").render(
        old, live.wsgi_request
    )
    expected_page = django.get_template("web/league_detail.html").render(
        {**old, "nav": "leagues"}, page.wsgi_request
    )
    assert live.content.decode() == expected_live
    assert page.content.decode() == expected_page
    if name == "finished":  # what the page's rows must show
        assert "late-bot" in expected_page and "Game " in expected_page
        assert "A rather …" in expected_page and ">Caf\u00e9</th>" in expected_page
        assert "&lt;b&gt;&amp;&#34;&#39;" in expected_page


def _games_queries(filled) -> list[str]:
    """Every filter and page of each league's games page."""
    queries = []
    for league_id in filled.values():
        games = list(
            Game.objects.filter(league_id=league_id).order_by("id").values_list("id", flat=True)
        )
        bots = list(
            LeagueEntry.objects.filter(league_id=league_id)
            .order_by("bot_id")
            .values_list("bot_id", flat=True)
        )
        path = f"/leagues/{league_id}/games/"
        queries.append(path)
        if len(games) > 3:
            middle = games[len(games) // 2]
            queries += [
                f"{path}?a={bots[0]}&b={bots[1]}", f"{path}?a={bots[1]}",
                f"{path}?a={bots[0]}&b={bots[0]}", f"{path}?after={games[1]}",
                f"{path}?after={middle}", f"{path}?after={games[-1]}",
                f"{path}?before={games[-1]}", f"{path}?before={middle}",
                f"{path}?before={games[2]}", f"{path}?before={games[0]}",
                f"{path}?a={bots[0]}&after={games[3]}", f"{path}?b={bots[1]}&before={games[-1]}",
            ]  # fmt: skip
    return queries


def test_the_games_page_renders_as_before(filled, monkeypatch):
    queries = _games_queries(filled)
    _old_rows(monkeypatch, {"old/league_games.html": OLD_GAME_ROWS})
    old_page = engines["django"].from_string(OLD_GAMES_PAGE)
    longest = 0
    for path in queries:
        response = Client().get(path)
        assert response.status_code == 200, path
        expected = old_page.render(
            _old_games_context(response.wsgi_request, filled[_league_of(filled, path)]),
            response.wsgi_request,
        )
        assert response.content.decode() == expected, path
        longest = max(longest, expected.count("<tr>"))
    # the rated set in play is left out, the unrated one shown
    for name, shown in (("rated in play", False), ("unrated in play", True)):
        last = Match.objects.filter(league_id=filled[name]).order_by("number").last()
        body = Client().get(f"/leagues/{filled[name]}/games/?after={last.games.first().pk - 1}")
        assert (f'href="/games/{last.games.first().pk}/"' in body.content.decode()) is shown
    # the finished league is longer than a page: its first page is full and links the next
    assert longest == leagues.GAMES_PER_PAGE + 1


def _league_of(filled, path: str) -> str:
    league_id = int(path.split("/")[2])
    return next(name for name, value in filled.items() if value == league_id)
