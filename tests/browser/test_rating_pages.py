"""The published ratings on the rankings and bot pages (issue 12): each bot's Elo with its 95 %
interval, "?" on provisional ratings, sets, no-shows, versions and the history of fits, visible
and read out in words, at desktop and phone width, by keyboard, with axe-core finding nothing.

The data is real: a league played by the SDK's example bots, then more rated sets of the same
pool recorded the way a finished match records them (``rated_set_store``), a new version of one
bot (``bot_version_observe``) and no-shows on two bots' records.
"""

from __future__ import annotations

import random
import re

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from tests.browser.a11y import at_width, axe_violations
from tests.browser.conftest import DESKTOP, PHONE
from tests.ratings.conftest import record_sets, staff  # noqa: F401 (fixtures)
from tournaments.models import Bot, Rating
from tournaments.services.bot_versions import bot_version_observe
from tournaments.services.rating_fits import ratings_fit

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]


@pytest.fixture
def rated_world(league_world, request):
    """random (provisional, paused after 3 no-shows), greedy (established, 1 no-show) and
    expert (version 2.0 just announced: provisional, its 1.x rating kept in its profile)."""

    def rate(world) -> str:
        """The rated sets, no-shows and new version above, added to the played league, and
        fitted; returns expert's old version. Played once per session (``league_world``)."""
        record = request.getfixturevalue("record_sets")
        random_bot, greedy, expert = world.bots
        pool = world.league.pool
        rng = random.Random(12)
        record(pool, [(greedy, expert, float(rng.random() < 0.3)) for _ in range(90)], fit=False)
        Bot.objects.filter(pk=random_bot.pk).update(
            no_shows=3, no_shows_in_row=3, rated_paused_at=timezone.now()
        )
        Bot.objects.filter(pk=greedy.pk).update(no_shows=1)
        old_version = Bot.objects.get(pk=expert.pk).protocol_version
        Bot.objects.filter(pk=expert.pk).update(protocol_version="2.0")
        expert.refresh_from_db()
        bot_version_observe(bot=expert)
        # A few sets each for the provisional ones (with the anchor at their mean, greedy's
        # interval narrows below ±100 only once theirs are not wild): about ±130 against
        # greedy's ±85.
        few = 8
        record(
            pool,
            [(expert, greedy, 1.0 if i % 2 else 0.5) for i in range(few)]
            + [(expert, random_bot, 0.5 if i % 2 else 1.0) for i in range(few)]
            + [(random_bot, greedy, 0.0 if i % 3 else 1.0) for i in range(few)],
            fit=False,
        )
        ratings_fit(pool=pool)
        return old_version

    world = league_world(prepare=rate)
    world.old_version = world.prepared
    return world


def _rating(bot: Bot, version: str | None = None) -> Rating:
    return Rating.objects.get(bot=bot, version__version=version or bot.protocol_version)


def _spoken(rating: Rating) -> str:
    """The words a screen reader reads for a rating (the glyphs are hidden from it)."""
    provisional = " (provisional)" if rating.provisional else ""
    return (
        f"{rating.rating:.0f}{provisional} plus or minus {_half(rating)} (95 % interval "
        f"{rating.rating_low:.0f} to {rating.rating_high:.0f})"
    )


def _half(rating: Rating) -> str:
    return f"{(rating.rating_high - rating.rating_low) / 2:.0f}"


def expect_figure(figure, rating: Rating) -> None:
    """What the eye sees in ``figure`` (a ``.rating-figure``): "1523 ± 41", "?" when
    provisional; what a screen reader reads is checked by role and name (``_spoken``)."""
    expect(figure.locator("strong")).to_be_visible()
    expect(figure.locator("strong")).to_have_text(f"{rating.rating:.0f}")
    expect(figure.locator(".interval")).to_be_visible()
    expect(figure.locator(".interval")).to_have_text(f" ± {_half(rating)}")
    mark = figure.locator("abbr.provisional")
    if rating.provisional:
        expect(mark).to_be_visible()
        expect(mark).to_have_text("?")
    else:
        expect(mark).to_have_count(0)


def test_rankings_show_interval_provisional_sets_and_no_shows(rated_world, live_server, page):
    random_bot, greedy, expert = (Bot.objects.get(pk=b.pk) for b in rated_world.bots)
    ratings = {bot.name: _rating(bot) for bot in (random_bot, greedy, expert)}
    assert not ratings["greedy"].provisional
    assert ratings["random"].provisional and ratings["expert"].provisional

    page.goto(f"{live_server.url}/")
    rows = page.locator("[data-testid=rankings] tbody tr")
    expect(rows).to_have_count(3)
    assert rows.first.get_attribute("data-bot") == "greedy"  # established before provisional
    for viewport in (DESKTOP, PHONE):
        page.set_viewport_size(viewport)
        for name, rating in ratings.items():
            row = page.locator(f"[data-testid=rankings] tr[data-bot='{name}']")
            expect_figure(row.locator("[data-testid=rating] .rating-figure"), rating)
            expect(row.get_by_role("cell", name=_spoken(rating), exact=True)).to_be_visible()
            sets = row.get_by_role("cell", name=str(rating.sets), exact=True)
            expect(sets.first).to_be_visible()
        paused = page.locator("tr[data-bot='random'] [data-testid=paused]")
        expect(paused).to_be_visible()
        expect(paused).to_have_text("paused: 3 no-shows in a row")
        expect(page.locator("tr[data-bot='greedy'] [data-testid=no-shows]")).to_have_text(
            "1 no-show"
        )
        expect(page.locator("tr[data-bot='expert'] .badge")).to_have_count(0)
    page.set_viewport_size(DESKTOP)
    expect(page.locator("#provisional-help")).to_contain_text("wider than ±100 Elo")
    title = page.locator("tr[data-bot='random'] abbr.provisional").get_attribute("title")
    assert title.startswith("Provisional")

    # by keyboard: Tab reaches the provisional bot's link and Enter opens its page
    page.goto(f"{live_server.url}/")
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent") == "random":
            break
    else:
        raise AssertionError("Tab never reached the link to random")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"/bots/{random_bot.pk}/$"))


def test_bot_page_shows_fits_interval_versions_and_no_shows(rated_world, live_server, page):
    random_bot, greedy, expert = (Bot.objects.get(pk=b.pk) for b in rated_world.bots)
    new, old = _rating(expert), _rating(expert, rated_world.old_version)
    assert new.provisional and old.rank is None and old.sets > new.sets

    page.goto(f"{live_server.url}/bots/{expert.pk}/")
    chart_title = page.locator("svg.chart title, [data-testid=rating-panel] p.muted").first
    expect(chart_title).to_contain_text(re.compile("after each fit|One fit so far"))
    current = page.locator(f"[data-testid=current-ratings] li[data-pool='{new.pool}']")
    expect_figure(current.locator(".rating-figure"), new)
    expect(current).to_contain_text(f"{new.sets} sets")
    versions = page.locator("[data-testid=versions] tbody tr")
    expect(versions).to_have_count(2)
    expect(versions.nth(0).get_by_role("rowheader")).to_have_text("2.0 current")
    expect_figure(versions.nth(0).locator(".rating-figure"), new)
    expect(versions.nth(0).get_by_role("cell", name=_spoken(new), exact=True)).to_be_visible()
    expect(versions.nth(1).get_by_role("rowheader")).to_have_text(rated_world.old_version)
    expect_figure(versions.nth(1).locator(".rating-figure"), old)
    expect(versions.nth(1).get_by_role("cell", name=_spoken(old), exact=True)).to_be_visible()
    expect(versions.nth(1).get_by_role("cell", name=str(old.sets), exact=True)).to_be_visible()
    since = versions.nth(1).locator("time")
    assert since.get_attribute("datetime").startswith(f"{timezone.now():%Y-%m-%d}")
    expect(page.locator("[data-testid=no-shows]")).to_contain_text("0 no-shows in all")

    page.goto(f"{live_server.url}/bots/{greedy.pk}/")
    chart = page.locator("svg.chart")
    expect(chart.locator("title")).to_have_text("Elo rating after each fit")
    points = Rating.objects.get(pk=_rating(greedy).pk).version.points.count()
    assert int(chart.get_attribute("data-points")) == points >= 2
    expect(chart.locator("desc")).to_contain_text(f"{points} fits")
    expect_figure(page.locator("[data-testid=current-ratings] .rating-figure"), _rating(greedy))

    # the league page shows the same one figure, never a second Elo
    page.goto(f"{live_server.url}/leagues/{rated_world.league.pk}/")
    standing = page.locator("[data-testid=standings] tr[data-bot='greedy'] .rating-figure")
    expect_figure(standing, _rating(greedy))

    page.goto(f"{live_server.url}/bots/{random_bot.pk}/")
    no_shows = page.locator("[data-testid=no-shows]")
    for viewport in (DESKTOP, PHONE):
        page.set_viewport_size(viewport)
        expect(no_shows).to_be_visible()
        expect(no_shows).to_contain_text("3 no-shows in all")
        expect(no_shows).to_contain_text("3 in a row now")
        expect(no_shows.locator(".badge.paused")).to_have_text("paused from rated play")


def test_axe_finds_nothing_on_rankings_and_bot_pages_with_every_rating_state(
    rated_world, live_server, page
):
    problems = []
    paths = [
        "/",
        f"/leagues/{rated_world.league.pk}/",
        *(f"/bots/{bot.pk}/" for bot in rated_world.bots),
    ]
    for path in paths:
        page.goto(f"{live_server.url}{path}")
        for viewport in (DESKTOP, PHONE):
            at_width(page, viewport)
            problems += [f"{path} {viewport['width']}px: {line}" for line in axe_violations(page)]
        page.set_viewport_size(DESKTOP)
    assert problems == []


def test_my_bots_shows_each_bots_rating_rank_no_shows_and_latest_games(
    rated_world, live_server, page, screenshot
):
    """Issue 39: "My bots" says how each bot is doing, not only its health: its current rating
    per pool, as the rankings show it, and its rank; its no-shows; its latest games and how each
    went for it, newest first."""
    from tests.browser.conftest import OWNER_PASSWORD
    from tests.browser.forms import log_in
    from tournaments.selectors.pages import bot_recent_games
    from web.views import MY_BOT_GAMES

    bots = {bot.name: Bot.objects.get(pk=bot.pk) for bot in rated_world.bots}
    log_in(page, live_server.url, rated_world.owner.username, OWNER_PASSWORD)
    pool = rated_world.league.pool
    for viewport in (DESKTOP, PHONE):
        page.set_viewport_size(viewport)
        for name, bot in bots.items():
            section = page.locator(f"#bot-{bot.pk}")
            rating = _rating(bot)
            item = section.locator(f"[data-testid=bot-ratings] li[data-pool='{pool}']")
            expect_figure(item.locator(".rating-figure"), rating)
            expect(item).to_contain_text(f"{pool}, rank {rating.rank}:")
            no_shows = section.get_by_test_id("bot-no-shows")
            expect(no_shows).to_contain_text(
                f"No-shows: {bot.no_shows} in all, {bot.no_shows_in_row} in a row"
            )
            expect(no_shows.locator(".badge.paused")).to_have_count(1 if name == "random" else 0)

            games = list(bot_recent_games(bot=bot, limit=MY_BOT_GAMES))
            rows = section.locator("[data-testid=bot-latest-games] li")
            expect(rows).to_have_count(len(games))
            assert len(games) == 4  # two duplicate sets of two games in the league
            for row, game in zip(rows.all(), games, strict=True):
                seat = game.seats.get(bot=bot)
                result = (
                    "drawn" if game.winner is None
                    else "won" if game.winner == seat.team else "lost"
                )  # fmt: skip
                ours, theirs = game.totals[seat.team], game.totals[1 - seat.team]
                expect(row.get_by_role("link")).to_have_text(f"Game {game.pk}")
                expect(row).to_contain_text(f"Game {game.pk}: {result} {ours}–{theirs}")
        assert axe_violations(page) == []
    page.set_viewport_size(DESKTOP)
    screenshot(page, "my-bots-ratings")
