"""A person plays a bot in the browser (issue 38): a whole game by keyboard alone, from the
bot's page to the replay, axe-core clean at desktop and phone width on the way."""

from __future__ import annotations

import re
import time

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from bots_sdk.examples import greedy
from bots_sdk.server import serve_in_thread
from tests.browser.a11y import page_problems
from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.forms import log_in
from tests.play.helpers import short_games
from tournaments.models import Bot, PersonGame

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

PASSWORD = "keyboard-only-pass-38"


@pytest.fixture
def greedy_bot(transactional_db):
    server = serve_in_thread(greedy.choose, name="greedy")
    author = get_user_model().objects.create_user(username="author")
    # A game to 1 point, over with its first round that is not tied: a whole game from the
    # Play button to the replay by keyboard alone, as one to 21 points would be six times over.
    with short_games(target=1):
        yield Bot.objects.create(owner=author, name="greedy-38", url=server.url,
                                 secret="whsec_" + "A" * 32)  # fmt: skip
    server.stop()


def tab_to(page, selector: str, limit: int = 60) -> None:
    """Press Tab until the element matching ``selector`` has focus."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate(f"document.activeElement.matches({selector!r})"):
            return
    raise AssertionError(f"Tab never reached {selector}")


def test_a_whole_game_by_keyboard_alone(greedy_bot, live_server, page, screenshot):
    get_user_model().objects.create_user(username="keyboard", password=PASSWORD)
    log_in(page, live_server.url, "keyboard", PASSWORD)
    page.goto(f"{live_server.url}/bots/{greedy_bot.pk}/")
    tab_to(page, "[data-testid=play-bot]")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"/play/\d+/$"))
    problems = page_problems(page)
    page.set_viewport_size(PHONE)
    problems += page_problems(page)
    assert problems == []
    person_game = PersonGame.objects.get(person__username="keyboard")
    clock = page.get_by_test_id("clock")
    first = int(clock.text_content())
    assert 100 <= first <= 120
    expect(clock).not_to_have_text(str(first), timeout=10_000)
    assert int(clock.text_content()) < first  # the move clock counts down
    deadline = time.monotonic() + 800
    moves = 0
    part = page.locator("#play > div").first
    while time.monotonic() < deadline:
        status = part.get_attribute("data-status")
        if status == "finished":
            break
        if status != "your_turn":
            page.wait_for_timeout(200)
            continue
        before = part.get_attribute("data-moves")
        page.keyboard.press("1")  # the first card of the hand that can be played
        if page.locator("[data-testid=captures] button").count():
            tab_to(page, "[data-testid=captures] button")  # its first capture
            page.keyboard.press("Enter")
        if moves == 0:  # a card chosen, its captures shown; at both widths
            page.set_viewport_size(DESKTOP)
            screenshot(page, "play", full_page=False)
        expect(page.get_by_test_id("play-move")).to_be_enabled()
        page.keyboard.press("p")
        try:
            expect(part).not_to_have_attribute("data-moves", before, timeout=60_000)
        except AssertionError as error:
            said = page.locator("#play-assertive").text_content()
            raise AssertionError(f"no move made; the page said {said!r}") from error
        moves += 1
    assert part.get_attribute("data-status") == "finished", "the game did not end in time"
    assert moves > 5
    expect(page.locator("#play-assertive")).to_have_text("The game is over.")
    tab_to(page, "[data-testid=replay-link]")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"/games/{person_game.game_id}/(#.*)?$"))
