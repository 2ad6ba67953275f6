"""Pages say what is, not what will be (issue 39): a league before its start shows the games it
plans and claims no fault-free play before any game; the messages after a form quote the name."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.a11y import page_problems
from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.forms import log_in
from tournaments.models import Bot, League
from web.views import LEAGUE_CREATED

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

PASSWORD = "an-honest-long-pass-39"


@pytest.fixture
def author(transactional_db, django_user_model):
    """An author with four bots a league may enter (never called: the league never starts)."""
    user = django_user_model.objects.create_user(username="noa", password=PASSWORD)
    for n, name in enumerate(("alba", "bruma", "cierzo", "dolina")):
        Bot.objects.create(owner=user, name=name, url=f"http://127.0.0.1:{9000 + n}/")
    return user


def test_a_league_before_its_start_shows_the_games_it_plans_and_no_fault_claim(
    author, live_server, page, screenshot
):
    log_in(page, live_server.url, author.username, PASSWORD)
    page.goto(f"{live_server.url}/leagues/new/")
    name = "Noa's “first” cup"
    page.get_by_label("Name").fill(name)
    for bot in ("alba", "bruma", "cierzo"):
        page.get_by_label(f"{bot} (noa)").check()
    page.get_by_role("button", name="Create league").click()

    expect(page).to_have_url(re.compile(r"/leagues/\d+/$"))
    message = LEAGUE_CREATED.format(name=name)
    assert message.startswith(f"League “{name}” is created")  # the name, quoted
    expect(page.locator(".messages")).to_contain_text(message)
    league = League.objects.get(name=name)
    assert league.status == "open" and not league.games.exists()

    # three bots, two seats: three pairings, each of games_per_pairing games
    planned = 3 * league.games_per_pairing
    expect(page.get_by_test_id("planned")).to_contain_text(f"{planned} games planned")
    expect(page.locator(".progress-text")).to_have_text(f"0 / {planned}")
    expect(page.get_by_role("progressbar")).to_have_attribute("aria-valuemax", str(planned))
    expect(page.get_by_test_id("no-faults-yet")).to_be_visible()
    expect(page.get_by_text("No faults: every bot answered")).to_have_count(0)
    for viewport in (DESKTOP, PHONE):
        page.set_viewport_size(viewport)
        assert page_problems(page) == []
    page.set_viewport_size(DESKTOP)
    page.evaluate("scrollTo(0, 0)")
    screenshot(page, "league-open")

    # a fourth bot entered changes the plan: six pairings
    league.entries.create(bot=Bot.objects.get(name="dolina"))
    page.reload()
    expect(page.get_by_test_id("planned")).to_contain_text(f"{6 * league.games_per_pairing} games")
