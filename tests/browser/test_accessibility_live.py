"""Usable with a keyboard and a screen reader (issue 17), while a league runs: axe-core finds
nothing on the live league page, updates patch in place and never move focus, and a keyboard-only
journey from sign-up to a replay never loses focus."""

from __future__ import annotations

import re
import time
from urllib.parse import urlsplit

import pytest
from django.urls import resolve
from playwright.sync_api import expect

from tests.browser.a11y import at_width, page_problems
from tests.browser.conftest import DESKTOP, VIEWPORTS
from tournaments.models import Game

pytestmark = [pytest.mark.integration, pytest.mark.timeout(420)]

PASSWORD = "keyboard-only-pass-42"


def _wait_for_updates(page, count: int, timeout_s: float = 60) -> None:
    page.wait_for_function(
        f"() => window.escobaLive.updates >= {count}", timeout=timeout_s * 1000, polling=100
    )


def _done(page) -> int:
    return int(page.locator("#league-live [role=progressbar]").get_attribute("data-done"))


def test_axe_finds_nothing_on_a_running_league(
    worker_beside_live_server, league_world, live_server, page
):
    world = league_world(move_delay=0.02)
    page.goto(f"{live_server.url}/leagues/{world.league.pk}/")
    problems = []
    for _ in range(2):
        _wait_for_updates(page, page.evaluate("window.escobaLive.updates") + 1)
        status = page.locator("#league-live [data-part=status]").inner_text()
        for width, viewport in VIEWPORTS.items():
            at_width(page, viewport)
            problems += [f"{status} @{width}: {line}" for line in page_problems(page)]
    page.set_viewport_size(DESKTOP)
    assert problems == [], "\n".join(problems)


MARK_FOCUS = """() => { window.focusMark = document.activeElement; return true; }"""
SAME_FOCUS = """() => document.activeElement === window.focusMark && window.focusMark.isConnected"""


def test_live_updates_patch_in_place_and_never_move_focus(
    worker_beside_live_server, league_world, live_server, page
):
    """Finding 1: each update patches what changed; the focused link and its table stay the same
    nodes; progress is announced in a polite live region."""
    world = league_world(move_delay=0.02)
    page.goto(f"{live_server.url}/leagues/{world.league.pk}/")
    link = page.locator("[data-testid=standings] tbody tr a").last
    link.focus()
    page.evaluate(MARK_FOCUS)
    page.evaluate(
        "() => { window.standingsTable = document.querySelector('[data-testid=standings]') }"
    )
    start = _done(page)
    page.wait_for_function(
        "(start) => Number(document.querySelector('#league-live [role=progressbar]')"
        ".dataset.done) > start",
        arg=start,
        timeout=120_000,
    )
    assert page.evaluate("window.escobaLive.updates") >= 1
    assert page.evaluate(SAME_FOCUS), "focus left the link it was on"
    assert page.evaluate(
        "() => document.querySelector('[data-testid=standings]') === window.standingsTable"
    ), "the standings table was replaced, not patched"
    region = page.locator("#league-announce")
    assert region.get_attribute("aria-live") == "polite"
    expect(region).to_have_text(re.compile(r"\d+ of \d+ games played"))


PATCH_REORDER = """async () => {
  const { patchHtml } = await import("/static/web/js/patch.js");
  const box = document.createElement("div");
  const row = (key, text) => `<li data-key="${key}"><a href="#${key}">${text}</a></li>`;
  box.innerHTML = `<ul>${row("a", "A 1")}${row("b", "B 1")}${row("c", "C 1")}</ul><p>1</p>`;
  document.body.append(box);
  const b = box.querySelector("[data-key=b] a");
  b.focus();
  patchHtml(box, `<ul>${row("new", "N")}${row("b", "B 2")}${row("a", "A 2")}</ul><p>2</p>`);
  return {
    same: document.activeElement === b,
    text: b.textContent,
    order: [...box.querySelectorAll("li")].map((li) => li.dataset.key).join(","),
    paragraph: box.querySelector("p").textContent,
  };
}"""


def test_patch_keeps_nodes_and_focus_when_rows_come_go_and_reorder(live_server, page):
    page.goto(f"{live_server.url}/accounts/login/")
    result = page.evaluate(PATCH_REORDER)
    assert result == {"same": True, "text": "B 2", "order": "new,b,a", "paragraph": "2"}


FOCUS_STEP = """() => {
  const el = document.activeElement;
  const before = window.lastFocus;
  window.lastFocus = el;
  const forward = !before || before === el ? true
    : Boolean(before.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING);
  return { tag: el.tagName, id: el.id, href: el.getAttribute("href"), text: el.textContent.trim(),
    forward, body: el === document.body };
}"""


def _tab(page, shift: bool = False) -> dict:
    page.keyboard.press("Shift+Tab" if shift else "Tab")
    focus = page.evaluate(FOCUS_STEP)
    assert not focus["body"], f"focus fell back to the page at {page.url}"
    return focus


def _tab_to(page, wanted, shift: bool = False, limit: int = 120) -> dict:
    for _ in range(limit):
        focus = _tab(page, shift)
        if wanted(focus):
            return focus
    raise AssertionError(f"Tab never reached what was wanted; last: {focus}")


def test_keyboard_only_journey(worker_beside_live_server, league_world, live_server, page):
    """No mouse: sign up, register a bot, open a running league and Tab through all of it while
    it updates, open a replay, step it, and leave it; focus is never lost on the way."""
    from bots_sdk.examples.greedy import choose
    from bots_sdk.server import serve_in_thread

    world = league_world(move_delay=0.03)
    page.goto(f"{live_server.url}/")
    _tab_to(page, lambda f: f["text"] == "Sign up")
    page.keyboard.press("Enter")
    expect(page.get_by_label("Username")).to_be_focused()
    page.keyboard.type("carmen")
    _tab_to(page, lambda f: f["id"] == "id_password")
    page.keyboard.type(PASSWORD)
    _tab_to(page, lambda f: f["id"] == "id_password_again")
    page.keyboard.type(PASSWORD)
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="My bots", exact=True)).to_be_visible()

    with serve_in_thread(choose, name="carmens-greedy") as server:
        _tab_to(page, lambda f: f["id"] == "id_name")
        page.keyboard.type("carmens-greedy")
        _tab_to(page, lambda f: f["id"] == "id_url")
        page.keyboard.type(server.url)
        _tab_to(page, lambda f: f["text"] == "Register bot")
        page.keyboard.press("Enter")
        expect(page.get_by_test_id("secret")).to_have_text(re.compile(r"^whsec_"))

    _tab_to(page, lambda f: f["text"] == "Leagues", shift=True)
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"/leagues/$"))
    _tab_to(page, lambda f: f["text"] == world.league.name)
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name=world.league.name)).to_be_visible()
    page.wait_for_function(
        "() => document.querySelector('#league-live .game-list a') !== null", timeout=120_000
    )
    assert page.locator("#league-live [data-part=status]").inner_text() == "running"
    updates = page.evaluate("window.escobaLive.updates")
    page.evaluate("() => { window.lastFocus = null; }")
    stops = []
    while not stops or stops[-1]["href"] != "/admin/":
        stops.append(_tab(page))
        assert stops[-1]["forward"], f"focus jumped back: {stops[-2:]}"
        page.wait_for_timeout(250)  # the page updates every 2 s while this goes on
        assert len(stops) < 150, "Tab never reached the end of the page"
    assert page.evaluate("window.escobaLive.updates") > updates, "no update while tabbing"
    assert any(stop["href"] and stop["href"].startswith("/bots/") for stop in stops)
    assert any("against" in stop["text"] or "/games/" in (stop["href"] or "") for stop in stops)

    game = _tab_to(page, lambda f: (f["href"] or "").startswith("/games/"), shift=True)
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(re.escape(game["href"].split("#")[0])))
    page.wait_for_load_state()
    if page.get_by_test_id("set-in-play").count():
        # Its set's other games were still being played, so the page says the replay opens
        # when they end (and has no viewer to Tab to); a keyboard user reloads then.
        game_id = int(resolve(urlsplit(game["href"]).path).kwargs["game_id"])
        deadline = time.monotonic() + 120
        while Game.objects.get(pk=game_id).match.sealed:
            assert time.monotonic() < deadline, "the game's set never ended"
            page.wait_for_timeout(500)
        page.reload()
    _tab_to(page, lambda f: f["text"].startswith("Next"))
    page.keyboard.press("Enter")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    expect(page).to_have_url(re.compile(r"#r1p3$"))
    page.keyboard.press("PageDown")
    expect(page).to_have_url(re.compile(r"#r2p0$"))
    expect(page.locator("[data-part=step-label]")).to_have_text("Round 2, deal")
    page.evaluate("() => { window.lastFocus = null; }")
    bot = _tab_to(page, lambda f: (f["href"] or "").startswith("/bots/"))
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"{re.escape(bot['href'])}$"))
