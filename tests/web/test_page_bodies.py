"""A bot's page and a game's page read their rows through statements compiled once
(``fixed_rows``) and build the few instances they show from those rows; the HTML they render is
byte for byte what the same views render from the ORM reads they replaced, kept here as the
reference: the bot with its owner and its rating series from model instances, its recent games
from a query built per request, a game with its league, match, log, seats and set from
``game_find`` and ``observers.game_sight``; and no page makes more queries than the reference
(a column left out of a row the page reads would be fetched afterwards, a query each time).

The database: rated leagues played by the engine, a bot with a new version and no rated set, a
rated set in play (its finished game sealed, its bots unnamed), an unrated set in play and an
aborted game; each page is read by a visitor, the owner of a bot at the table and another user.
"""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from tests.performance.data import fill_database, rows_for_a_module, set_in_play
from tournaments import observers
from tournaments.models import Bot, Game, Seat
from tournaments.selectors import game_pages
from tournaments.selectors import pages as page_selectors
from tournaments.selectors import ratings as rating_selectors
from tournaments.services.bot_versions import bot_version_observe

pytestmark = pytest.mark.django_db
POOL = "classic/2p"


def _orm_bot_shown(bot_id: int) -> Bot | None:
    bots = Bot.objects.select_related("owner").defer("secret", "last_check_report")
    return bots.filter(pk=bot_id).first()


def _orm_rating_series(bot: Bot, pool: str, limit: int = 200) -> list[dict]:
    """The series from ``RatingPoint`` instances, newest ``limit`` points, oldest version first."""
    points = list(rating_selectors.bot_rating_history(bot, pool).order_by("-id")[:limit])[::-1]
    series: dict[int, dict] = {}
    for point in points:
        series.setdefault(
            point.version_id,
            {
                "version": point.version.version,
                "current": point.version.version == bot.protocol_version,
                "points": [],
            },
        )["points"].append(
            {
                "at": point.created_at,
                **{name: float(getattr(point, name)) for name in ("rating", "rating_low")},
                "rating_high": float(point.rating_high),
                **{name: getattr(point, name) for name in ("provisional", "sets", "games")},
            }
        )
    return list(series.values())


def _orm_recent_game_rows(*, bot: Bot, limit: int) -> list[dict]:
    """The rows as a Django query built per request (the games of a subquery of the bot's
    latest seats, with their seats), as before the statement compiled once."""
    recent = Seat.objects.filter(bot=bot, finished_at__isnull=False).order_by(
        "-finished_at", "-game_id"
    )
    return page_selectors._games_with_seats(
        recent.values("game_id")[:limit],
        totals="totals", league_id="league_id", league_name="league__name",
    )  # fmt: skip


def _orm_game_page(game_id: int) -> game_pages.GamePage | None:
    game = page_selectors.game_find(game_id)
    if game is None:
        return None
    others = Game.objects.filter(match_id=game.match_id).exclude(pk=game.pk).order_by("number")
    return game_pages.GamePage(
        game=game,
        log=getattr(game, "log", None),
        seats=sorted(game.seats.all(), key=lambda seat: seat.seat),
        sight=observers.game_sight(game),
        other_game_ids=list(others.values_list("pk", flat=True)),
    )


@pytest.fixture(scope="module")
def pages_of(django_db_setup, django_db_blocker):
    """The paths read and the viewers reading them (made once, rolled back after the module)."""
    with rows_for_a_module(django_db_blocker, _fill) as made:
        yield made


def _fill() -> tuple[list[str], list]:
    filled = fill_database(games=20, bots=4, bots_per_league=4)
    bots = list(Bot.objects.filter(pk__in=filled.bots).order_by("id"))
    bots[0].protocol_version = "2.0"  # a new version: listed, current, no rated set yet
    bots[0].save(update_fields=["protocol_version"])
    bot_version_observe(bot=bots[0])
    set_in_play(rated=True, bots=bots[:2], creator=bots[0].owner)
    set_in_play(rated=False, bots=bots[2:], creator=bots[0].owner)
    unplayed = Game.objects.filter(league_id=filled.leagues[0]).order_by("-id").first()
    Game.objects.filter(pk=unplayed.pk).update(status=Game.Status.ABORTED, reason="stopped")
    game_ids = list(Game.objects.order_by("id").values_list("pk", flat=True))
    paths = [f"/bots/{bot.pk}/" for bot in bots] + [f"/bots/{bots[1].pk}/?pool={POOL}"]
    paths += [f"/games/{pk}/" for pk in game_ids] + ["/bots/987654/", "/games/987654/"]
    stranger = get_user_model().objects.create_user("stranger", password="x")
    return paths, [None, bots[1].owner, stranger]


def _bodies(paths: list[str], viewer) -> list[tuple[str, int, str, int]]:
    """Each path's status, body (its CSRF token left out) and how many queries it made."""
    client = Client()
    if viewer is not None:
        client.force_login(viewer)
    bodies = []
    for path in paths:
        with CaptureQueriesContext(connection) as queries:
            response = client.get(path)
        body = re.sub(r'(csrfmiddlewaretoken" value=)"[^"]*"', r"\1", response.content.decode())
        bodies.append((path, response.status_code, body, len(queries)))
    return bodies


@pytest.mark.parametrize("viewer", [0, 1, 2], ids=["visitor", "owner", "stranger"])
def test_bot_and_game_pages_are_those_of_the_orm_reads(pages_of, viewer, monkeypatch, settings):
    settings.ESCOBA_READ_CACHE_S = 0
    paths, viewers = pages_of
    bodies = _bodies(paths, viewers[viewer])
    monkeypatch.setattr(page_selectors, "bot_shown", _orm_bot_shown)
    monkeypatch.setattr(page_selectors, "bot_recent_game_rows", _orm_recent_game_rows)
    monkeypatch.setattr(game_pages, "game_page", _orm_game_page)
    monkeypatch.setattr(rating_selectors, "bot_rating_series", _orm_rating_series)
    reference = _bodies(paths, viewers[viewer])
    assert [(path, status) for path, status, *_ in bodies] == [
        (path, status) for path, status, *_ in reference
    ]
    assert {status for _, status, *_ in bodies} == {200, 404}
    for (path, _, body, queries), (_, _, expected, reference_queries) in zip(
        bodies, reference, strict=True
    ):
        assert body == expected, path
        # no column left out of a row is read afterwards, one query at a time
        assert queries <= reference_queries, path
    shown = "".join(body for _, _, body, _ in bodies)
    # what the pages show of the cases made: a sealed game, a live one, an aborted one, a chart
    for part in ('data-testid="set-in-play"', "data-live-game", "stopped", "<polyline"):
        assert part in shown
    if viewer == 1:
        assert 'id="replay-own-plays"' in shown and "Your bot: check it" in shown
