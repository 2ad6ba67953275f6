"""The browser does what the API does (issue 14, item 11): create a league and start it, register
a strict bot with its own secret, and read one's notifications, with errors inline."""

from __future__ import annotations

import base64
import re
import secrets

import pytest
from playwright.sync_api import expect

from games.scheduling import ERROR_TOO_FEW_BOTS
from tests.browser.a11y import page_problems
from tests.browser.forms import (
    FORM_MARKUP_PROBLEMS,
    POST_WITH_CSRF,
    focused_is_invalid_and_described,
    log_in,
)
from tests.fakebots.http_bots import StrictBot
from tournaments.models import Bot, League, Notification
from tournaments.services.bots import ERROR_SECRET_PREFIX
from tournaments.services.league_creation import ERROR_LEAGUE_NAME_TAKEN
from tournaments.services.rated_entry import ERROR_ONE_OWNER
from web.views import BOT_REGISTERED_OWN_SECRET, LEAGUE_CREATED, LEAGUE_STARTED

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

PASSWORD = "an-authors-long-pass-5"


@pytest.fixture
def author(league_world, django_user_model):
    """A finished league of example bots (owned by staff), and an author who is not staff."""
    world = league_world()
    user = django_user_model.objects.create_user(username="noa", password=PASSWORD)
    return world, user


def test_an_author_creates_an_unrated_league_and_starts_it(author, live_server, page):
    world, user = author
    log_in(page, live_server.url, user.username, PASSWORD)
    page.goto(f"{live_server.url}/leagues/")
    page.get_by_role("link", name="New league").click()
    expect(page).to_have_url(re.compile(r"/leagues/new/$"))
    # Only staff may make a rated league: the box is not even offered.
    expect(page.get_by_label("Rated")).to_have_count(0)

    page.get_by_label("Name").fill("test LEAGUE")  # the world's league, in other letters
    page.get_by_label("greedy (ana)").check()
    page.get_by_role("button", name="Create league").click()

    focused = focused_is_invalid_and_described(page)
    assert focused["id"] == "id_name"
    assert focused["invalid"] == "true"
    assert focused["described"][-1] == ERROR_LEAGUE_NAME_TAKEN
    bots_error = ERROR_TOO_FEW_BOTS.format(minimum=2, players=2)
    expect(page.locator("#id_bots_error")).to_have_text(bots_error)
    assert page.locator("fieldset.field").get_attribute("aria-describedby").split() == [
        "id_bots_helptext",
        "id_bots_error",
    ]
    assert page.evaluate(FORM_MARKUP_PROBLEMS) == []
    assert page_problems(page) == []
    # What was entered stays entered.
    expect(page.get_by_label("greedy (ana)")).to_be_checked()

    page.get_by_label("Name").fill("Noa's cup")
    page.get_by_label("random (ana)").check()
    page.get_by_role("button", name="Create league").click()

    expect(page).to_have_url(re.compile(r"/leagues/\d+/$"))
    expect(page.locator(".messages")).to_contain_text(LEAGUE_CREATED.format(name="Noa's cup"))
    league = League.objects.get(name="Noa's cup")
    assert (league.creator, league.rated, league.status) == (user, False, "open")
    assert sorted(league.bots.values_list("name", flat=True)) == ["greedy", "random"]

    page.get_by_role("button", name="Start league").click()
    expect(page.locator(".messages")).to_contain_text(LEAGUE_STARTED.format(name="Noa's cup"))
    league.refresh_from_db()
    assert league.status != "open" and league.matches.exists()
    expect(page.get_by_role("button", name="Start league")).to_have_count(0)


def test_staff_may_rate_and_others_cannot_start_someone_else_s_league(author, live_server, page):
    world, user = author
    log_in(page, live_server.url, world.owner.username, world.password)
    page.goto(f"{live_server.url}/leagues/new/")
    page.get_by_label("Name").fill("Rated by staff")
    page.get_by_label("Rated").check()
    for name in ("greedy", "expert"):
        page.get_by_label(f"{name} (ana)").check()
    page.get_by_role("button", name="Create league").click()
    # two bots of one owner never meet in rated play: refused, on the field
    expect(page.locator("#id_bots_error")).to_have_text(
        ERROR_ONE_OWNER.format(names="greedy, expert")
    )
    Bot.objects.create(
        owner=user, name="noas", url=world.bots[1].url, secret="whsec_" + "N" * 32,
        health=Bot.Health.HEALTHY,
    )  # fmt: skip
    page.goto(f"{live_server.url}/leagues/new/")
    page.get_by_label("Name").fill("Rated by staff")
    page.get_by_label("Rated").check()
    page.get_by_label("greedy (ana)").check()
    page.get_by_label("noas (noa)").check()
    page.get_by_role("button", name="Create league").click()
    expect(page).to_have_url(re.compile(r"/leagues/\d+/$"))
    league = League.objects.get(name="Rated by staff")
    assert league.rated

    # Another user sees no start button, and a forged start is a 403 that changes nothing.
    page.context.clear_cookies()
    log_in(page, live_server.url, user.username, PASSWORD)
    page.goto(f"{live_server.url}/leagues/{league.pk}/")
    expect(page.get_by_role("button", name="Start league")).to_have_count(0)
    page.evaluate(POST_WITH_CSRF, f"/leagues/{league.pk}/start/")
    expect(page.get_by_role("heading", name="Not allowed")).to_be_visible()
    league.refresh_from_db()
    assert league.status == "open"


def test_a_strict_bot_registers_with_the_secret_entered_in_the_page(author, live_server, page):
    world, user = author
    secret = "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()
    log_in(page, live_server.url, user.username, PASSWORD)
    with StrictBot(secret) as strict:
        page.get_by_label("Name").fill("strict")
        page.get_by_label("URL").fill(strict.url)
        page.get_by_label("Signing secret (optional)").fill("not-a-secret")
        page.get_by_role("button", name="Register bot").click()
        focused = focused_is_invalid_and_described(page)
        assert focused["id"] == "id_secret"
        assert focused["described"][-1] == ERROR_SECRET_PREFIX
        assert strict.calls == []  # refused before any call

        page.get_by_label("Signing secret (optional)").fill(secret)
        page.get_by_role("button", name="Register bot").click()
        expect(page.locator(".messages")).to_contain_text(
            BOT_REGISTERED_OWN_SECRET.format(name="strict")
        )
        assert strict.calls == [("GET", "/", True)]
    bot = Bot.objects.get(name="strict")
    assert bot.owner == user and bot.secret == secret
    # The owner brought the secret: it is not shown back.
    expect(page.get_by_test_id("secret")).to_have_count(0)
    assert page.evaluate(FORM_MARKUP_PROBLEMS) == []


def test_my_bots_lists_the_owner_s_notifications_newest_first(author, live_server, page):
    world, user = author
    mine = Bot.objects.create(owner=user, name="mine", url="http://127.0.0.1:9/", secret="x")
    older = Notification.objects.create(
        user=user, event="bot.unhealthy", bot=mine, subject="mine is unhealthy",
        message="The check failed three times in a row.", email_status="sent",
        webhook_status="skipped",
    )  # fmt: skip
    Notification.objects.create(
        user=user, event="bot.healthy", bot=mine, subject="mine is back",
        message="A check passed.", email_status="sent", webhook_status="failed",
    )  # fmt: skip
    Notification.objects.create(
        user=world.owner, event="bot.paused", subject="not for noa", message="-",
    )  # fmt: skip
    Notification.objects.filter(pk=older.pk).update(created_at=older.created_at.replace(year=2020))

    log_in(page, live_server.url, user.username, PASSWORD)

    notices = page.get_by_test_id("notifications").locator("li")
    expect(notices).to_have_count(2)
    expect(notices.nth(0)).to_contain_text("mine is back")
    expect(notices.nth(0)).to_contain_text("Webhook: failed")
    expect(notices.nth(1)).to_contain_text("mine is unhealthy")
    expect(notices.nth(1)).to_contain_text("2020-")
    expect(page.get_by_text("not for noa")).to_have_count(0)
    assert page_problems(page) == []
