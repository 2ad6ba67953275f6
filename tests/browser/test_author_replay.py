"""What tripped a new author on the replay and game lists (issue 14, item 5), in a real browser on
real leagues: teams counted from 0 as the API counts them, seat numbers shown, partnership games
named once per team, fault badges that add up, the buttons above the fold, recent games in order.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import DESKTOP
from tournaments.models import Game, Seat

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]


def _above_the_fold(page) -> None:
    """Every step button is wholly inside the 1280x900 window without scrolling."""
    page.set_viewport_size(DESKTOP)
    page.evaluate("window.scrollTo(0, 0)")
    boxes = page.evaluate(
        """() => [...document.querySelectorAll("[data-go]")].map((b) => {
          const r = b.getBoundingClientRect();
          return [b.dataset.go, r.top, r.bottom];
        })"""
    )
    assert boxes and all(0 <= top and bottom <= DESKTOP["height"] for _, top, bottom in boxes), (
        boxes
    )


def test_partnership_replay_teams_seats_and_game_lines(league_world, live_server, page, client):
    world = league_world(players=4)
    game = Game.objects.filter(league=world.league, status="finished").order_by("pk").first()
    seats = list(Seat.objects.filter(game=game).select_related("bot").order_by("seat"))
    api_teams = {
        row["seat"]: row["team"] for row in client.get(f"/api/games/{game.pk}/").json()["seats"]
    }

    page.goto(f"{live_server.url}/games/{game.pk}/")
    headings = page.locator(".seat-name")
    expect(headings).to_have_count(4)
    for seat in seats:
        heading = page.locator(f'[data-seat="{seat.seat}"] .seat-name')
        expect(heading).to_have_text(f"{seat.bot.name} seat {seat.seat} · team {seat.team}")
        assert api_teams[seat.seat] == seat.team
    assert {seat.team for seat in seats} == {0, 1}
    _above_the_fold(page)

    # The league page and the bot page name a partnership game once per team.
    page.goto(f"{live_server.url}/leagues/{world.league.pk}/")
    lines = page.locator(".game-list li").all_inner_texts()
    assert lines
    for line in lines:
        names = re.search(r": (.*) —", line).group(1).split(" vs ")
        assert len(names) == 2 and len(set(names)) == 2, line
    page.goto(f"{live_server.url}/bots/{seats[0].bot_id}/")
    for line in page.locator(".game-list li").all_inner_texts():
        assert line.count(" vs ") == 1, line


def test_recent_games_are_newest_first(league_world, live_server, page):
    world = league_world()
    finished = Game.objects.filter(league=world.league, status="finished")
    newest_first = [game.pk for game in finished.order_by("-finished_at", "-id")]

    page.goto(f"{live_server.url}/leagues/{world.league.pk}/")
    keys = page.locator(".game-list li").evaluate_all("(items) => items.map((i) => i.dataset.key)")

    assert keys == [f"game-{pk}" for pk in newest_first]
    times = list(finished.order_by("-finished_at").values_list("finished_at", flat=True))
    assert times == sorted(times, reverse=True)


def test_a_forfeited_game_has_a_fault_badge_for_every_fault(league_world, live_server, page):
    """A bot that crashes on every move plays fallback moves, then forfeits on its fault number
    max_faults + 1: that last fault made no play, and its badge is on the round it ended."""
    world = league_world(flaky_every=1)
    game = (
        Game.objects.filter(league=world.league, status="finished", forfeit__isnull=False)
        .order_by("pk")
        .first()
    )
    assert game is not None, "the crashing bot never forfeited"
    faults = sum(Seat.objects.filter(game=game).values_list("faults", flat=True))
    assert faults == world.league.max_faults + 1

    page.goto(f"{live_server.url}/games/{game.pk}/")
    badges = page.locator("[data-part=plays] .tag.fault")

    expect(badges).to_have_count(faults)
    last = page.locator("[data-part=plays] li").last
    expect(last).to_contain_text("Score")
    expect(last.locator(".tag.fault")).to_have_count(1)
    _above_the_fold(page)
