"""Usable with a keyboard and a screen reader (issue 17), forms and tables: errors tied to their
fields with focus on the first, a focus ring of 3:1 contrast on every surface, tables that fit or
scroll by keyboard at phone width, and a favicon the admin finds."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.a11y import FOCUS_RING, UNREACHABLE_SCROLLERS
from tests.browser.conftest import PHONE
from tests.browser.forms import FORM_MARKUP_PROBLEMS, focused_is_invalid_and_described, log_in
from tournaments.models import Bot, Game, League, LeagueEntry
from web.forms import PASSWORDS_DIFFER

pytestmark = [pytest.mark.integration, pytest.mark.timeout(420)]


def test_form_errors_are_tied_to_fields_and_focus_goes_to_the_first(
    league_world, live_server, page
):
    """Finding 2, on sign-up, log-in and My bots."""
    world = league_world()
    page.goto(f"{live_server.url}/accounts/signup/")
    page.get_by_label("Username").fill("luz")
    page.get_by_label("Password", exact=True).fill("a-long-pass-991")
    page.get_by_label("Password (again)").fill("a-long-pass-992")
    page.get_by_role("button", name="Create account").click()
    focused = focused_is_invalid_and_described(page)
    assert focused["id"] == "id_password_again"
    assert focused["invalid"] == "true"
    assert focused["described"] == [PASSWORDS_DIFFER]
    assert page.evaluate(FORM_MARKUP_PROBLEMS) == []

    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill(world.owner.username)
    page.get_by_label("Password").fill("not the password")
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("#form-errors")).to_be_focused()
    expect(page.locator("#form-errors")).to_contain_text("correct username and password")
    assert page.evaluate(FORM_MARKUP_PROBLEMS) == []

    log_in(page, live_server.url, world.owner.username, world.password)
    page.get_by_label("Name").fill("ghost")
    page.get_by_label("URL").fill("http://127.0.0.1:9/")
    page.get_by_role("button", name="Register bot").click()
    focused = focused_is_invalid_and_described(page)
    assert focused["id"] == "id_url"
    assert focused["invalid"] == "true"
    assert focused["described"][-1], focused
    assert page.evaluate(FORM_MARKUP_PROBLEMS) == []


def _tab_until(page, done, limit: int = 200) -> list[dict]:
    """Press Tab until ``done(ring)`` holds for the focused element's ring; return every ring."""
    rings = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        ring = page.evaluate(FOCUS_RING)
        assert ring is not None, f"focus was lost after {len(rings)} Tab presses"
        rings.append(ring)
        if done(ring):
            return rings
    raise AssertionError(f"never done after {limit} Tab presses: {rings[-3:]}")


def _weak(rings: list[dict]) -> list[dict]:
    return [ring for ring in rings if ring["ratio"] < 3 or ring["width"] < 2]


def test_the_focus_ring_has_3_to_1_contrast_on_every_surface(league_world, live_server, page):
    """Finding 5: the header, the card table (felt), forms, tables; and form-field borders."""
    world = league_world()
    game = Game.objects.filter(status=Game.Status.FINISHED).order_by("pk").first()
    weak = []
    for path in ("/", f"/games/{game.pk}/#r1end", "/accounts/login/"):
        page.goto(f"{live_server.url}{path}")
        page.locator("[data-seat] summary").evaluate_all("els => els.forEach(e => e.click())")
        rings = _tab_until(page, lambda ring: "/admin/" in ring["label"])
        assert len(rings) >= 3, rings
        weak += [(path, ring) for ring in _weak(rings)]
    log_in(page, live_server.url, world.owner.username, world.password)
    rings = _tab_until(page, lambda ring: "/admin/" in ring["label"])
    weak += [("/my/bots/", ring) for ring in _weak(rings)]
    assert weak == [], "\n".join(str(item) for item in weak)
    borders = page.evaluate(
        """() => [...document.querySelectorAll("input:not([type=hidden]), textarea")].map((el) =>
          getComputedStyle(el).borderTopColor)"""
    )
    assert borders and set(borders) == {"rgb(118, 112, 98)"}, borders  # #767062: 4.1:1 on white


def test_tables_fit_or_scroll_by_keyboard_at_phone_width(league_world, live_server, page):
    """Finding 6: the check report and the standings fit a phone, even with long bot names; the
    crosstable's row names stay in view while its cells scroll."""
    world = league_world()
    page.set_viewport_size(PHONE)
    log_in(page, live_server.url, world.owner.username, world.password)
    page.locator(f"#bot-{world.bots[0].pk}").get_by_role(
        "button", name="Run protocol check"
    ).click()
    report = page.get_by_test_id("check-report")
    expect(report).to_be_visible()
    assert report.evaluate("t => t.parentElement.scrollWidth <= t.parentElement.clientWidth")
    assert page.evaluate(UNREACHABLE_SCROLLERS) == []

    league = League.objects.create(
        name="Crowded",
        creator=world.owner,
        ruleset=world.league.ruleset,
        pool=world.league.pool,
        players=2,
        seed=1,
        status=League.Status.FINISHED,
    )
    for number in range(8):
        bot = Bot.objects.create(
            owner=world.owner,
            name=f"a-bot-with-a-long-name-number-{number}",
            url="http://127.0.0.1:9/",
            secret="x",
        )
        LeagueEntry.objects.create(league=league, bot=bot)
    page.goto(f"{live_server.url}/leagues/{league.pk}/")
    standings = page.locator("[data-testid=standings]")
    assert standings.evaluate("t => t.parentElement.scrollWidth <= t.parentElement.clientWidth")
    wrap = page.locator(".crosstable").locator("xpath=..")
    assert wrap.evaluate("w => w.scrollWidth > w.clientWidth"), "the crosstable fits: no test"
    expect(wrap).to_have_attribute("tabindex", "0")
    name = page.locator(".crosstable tbody th").first
    before = name.bounding_box()["x"]
    wrap.focus()
    for _ in range(8):
        page.keyboard.press("ArrowRight")  # scrolls the focused region sideways
    page.wait_for_function(
        "() => document.querySelector('.crosstable').parentElement.scrollLeft > 0"
    )
    assert name.bounding_box()["x"] == pytest.approx(before, abs=1)
    assert name.bounding_box()["x"] == pytest.approx(wrap.bounding_box()["x"], abs=2)


def test_a_real_favicon_is_served_and_the_admin_asks_for_nothing_missing(live_server, page, db):
    response = page.request.get(f"{live_server.url}/favicon.ico")
    assert response.status == 200
    assert response.headers["content-type"] == "image/x-icon"
    body = response.body()
    assert body[:4] == b"\x00\x00\x01\x00" and int.from_bytes(body[4:6], "little") >= 1
    assert b"PNG" in body[:200]
    missing = []
    page.on("response", lambda r: missing.append(r.url) if r.status >= 400 else None)
    page.goto(f"{live_server.url}/admin/login/")
    page.wait_for_load_state("networkidle")
    assert missing == []
