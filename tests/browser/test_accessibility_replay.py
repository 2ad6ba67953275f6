"""Usable with a keyboard and a screen reader (issue 17), the replay page: keys act only inside the
viewer, focus moves to the other button when one is disabled, controls are named as labelled,
the play list is one tab stop, cards keep their text with WCAG text spacing, and the skip link
keeps the step in the address."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

from tests.browser.a11y import TEXT_SPACING_CSS
from tournaments.models import Game

pytestmark = [pytest.mark.integration, pytest.mark.timeout(420)]


def _step(page) -> str:
    return urlsplit(page.url).fragment


def test_replay_keys_act_only_inside_the_viewer(league_world, live_server, page):
    """Finding 3: with focus on a link outside the viewer, the keys keep their usual jobs."""
    league_world()
    game = Game.objects.filter(status=Game.Status.FINISHED).order_by("pk").first()
    page.set_viewport_size({"width": 1280, "height": 500})
    page.goto(f"{live_server.url}/games/{game.pk}/#r1p2")
    expect(page.locator("[data-part=step-label]")).to_contain_text("play 2")
    page.locator(".replay-head a").first.focus()
    # Each key must do its usual job: End scrolls to the bottom, Home to the top, PageDown down.
    at_bottom = "() => scrollY + innerHeight >= document.documentElement.scrollHeight - 1"
    at_top = "() => scrollY === 0"
    lower = "() => scrollY > 0"
    for key, scrolled in (
        ("ArrowRight", at_top),
        ("ArrowLeft", at_top),
        ("End", at_bottom),
        ("Home", at_top),
        ("PageUp", at_top),
        ("PageDown", lower),
    ):
        page.keyboard.press(key)
        try:
            page.wait_for_function(scrolled, timeout=5000)
        except PlaywrightTimeoutError:
            pytest.fail(
                f"{key} did not scroll the page as it should (scrollY {page.evaluate('scrollY')})"
            )
        assert _step(page) == "r1p2", key
    page.locator('[data-go="play"]').focus()
    page.keyboard.press("ArrowRight")
    assert _step(page) == "r1p3"


def test_focus_moves_to_the_other_button_when_prev_or_next_is_disabled(
    league_world, live_server, page
):
    """Finding 4."""
    league_world()
    game = Game.objects.filter(status=Game.Status.FINISHED).order_by("pk").first()
    page.goto(f"{live_server.url}/games/{game.pk}/#r1p1")
    next_button, prev_button = page.locator('[data-go="next"]'), page.locator('[data-go="prev"]')
    next_button.focus()
    page.keyboard.press("End")
    expect(next_button).to_be_disabled()
    expect(prev_button).to_be_focused()
    page.keyboard.press("Home")
    expect(prev_button).to_be_disabled()
    expect(next_button).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("[data-part=step-label]")).to_have_text(re.compile(r"^Round 1, play 1 of"))
    expect(next_button).to_be_focused()


def test_replay_controls_are_named_as_labelled_and_the_play_list_is_one_tab_stop(
    league_world, live_server, page
):
    """Findings 7 and 8."""
    league_world()
    game = Game.objects.filter(status=Game.Status.FINISHED).order_by("pk").first()
    page.goto(f"{live_server.url}/games/{game.pk}/#r1p3")
    prev = page.get_by_role("button", name="Prev", exact=True)
    expect(prev).to_have_count(1)
    expect(page.get_by_role("button", name="Next", exact=True)).to_have_count(1)
    play = page.get_by_role("button", name="Play", exact=True)
    assert play.get_attribute("aria-pressed") is None
    play.click()
    pause = page.get_by_role("button", name="Pause", exact=True)
    expect(pause).to_have_count(1)
    assert pause.get_attribute("aria-pressed") is None
    pause.click()
    expect(play).to_have_count(1)

    page.goto(f"{live_server.url}/games/{game.pk}/#r1p3")
    page.reload()
    links = page.locator("[data-part=plays] a")
    assert links.count() > 40
    assert links.evaluate_all("els => els.filter(a => a.tabIndex >= 0).length") == 1
    page.get_by_role("link", name="Raw log (JSON)").focus()
    seen = []
    for _ in range(4):
        page.keyboard.press("Tab")
        seen.append(
            page.evaluate("() => document.activeElement.closest('[data-part=plays]') !== null")
        )
    assert seen.count(True) == 1, seen
    page.get_by_role("link", name="Raw log (JSON)").focus()
    while not page.evaluate("() => document.activeElement.closest('[data-part=plays]') !== null"):
        page.keyboard.press("Tab")
    current = page.locator("[data-part=plays] a[aria-current=step]")
    expect(current).to_be_focused()
    expect(current).to_have_attribute("href", "#r1p3")
    page.keyboard.press("ArrowDown")
    expect(page).to_have_url(re.compile(r"#r1p4$"))
    expect(page.locator("[data-part=plays] a[aria-current=step]")).to_be_focused()
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")
    expect(page).to_have_url(re.compile(r"#r1p2$"))
    expect(page.locator("[data-part=plays] a[href='#r1p2']")).to_be_focused()


CARD_OVERFLOWS = """() => [...document.querySelectorAll(".card")].filter((card) => {
  const box = card.getBoundingClientRect();
  if (!box.width) return false;
  return [...card.children].some((part) => {
    const inner = part.getBoundingClientRect();
    return inner.width && (inner.left < box.left - 0.5 || inner.right > box.right + 0.5);
  });
}).map((card) => card.dataset.card)"""


def test_cards_keep_their_text_inside_with_wcag_text_spacing(league_world, live_server, page):
    """Also: 1.4.12 text spacing; every card of a round's piles, the caballos among them."""
    league_world()
    game = Game.objects.filter(status=Game.Status.FINISHED).order_by("pk").first()
    page.goto(f"{live_server.url}/games/{game.pk}/#r1end")
    page.locator("[data-seat] summary").evaluate_all("els => els.forEach(e => e.click())")
    page.add_style_tag(content=TEXT_SPACING_CSS)
    shown = page.locator("[data-part=pile] .card").evaluate_all(
        "els => els.map(e => e.dataset.card)"
    )
    assert {"9o", "9c", "9e", "9b"} <= set(shown)
    assert page.evaluate(CARD_OVERFLOWS) == []


def test_the_skip_link_keeps_the_replay_step_in_the_address(league_world, live_server, page):
    league_world()
    game = Game.objects.filter(status=Game.Status.FINISHED).order_by("pk").first()
    page.goto(f"{live_server.url}/games/{game.pk}/#r2p14")
    page.keyboard.press("Tab")
    expect(page.locator(".skip-link")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("main")).to_be_focused()
    assert _step(page) == "r2p14"
    expect(page.locator("[data-part=step-label]")).to_contain_text("Round 2, play 14")
