"""The replay shows a bot's owner its debug output and lets them download each play's request;
nobody else sees either (issue 14, items 6 and 7)."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from bots_sdk import Reply, serve_in_thread
from bots_sdk.examples.greedy import choose as greedy
from tests.browser.a11y import axe_violations
from tests.browser.conftest import DESKTOP, OWNER_PASSWORD, PHONE
from tournaments.models import Bot, Game
from tournaments.selectors.leagues import game_diagnostics
from tournaments.services.bots import bot_register
from tournaments.services.league_creation import league_create
from tournaments.services.league_schedules import league_start

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]


def talker(state):
    return Reply(state.legal_moves[0], debug=f"{len(state.legal_moves)} legal, took the first")


@pytest.fixture
def debug_game(saved_database, django_user_model):
    """A finished game between the owner's talking bot and another user's greedy bot (played
    once per session: ``saved_database``)."""
    servers = [serve_in_thread(talker, name="talker"), serve_in_thread(greedy, name="greedy")]

    def play() -> dict:
        owner = django_user_model.objects.create_user(username="ana", password=OWNER_PASSWORD)
        rival = django_user_model.objects.create_user(username="rui", password=OWNER_PASSWORD)
        mine = bot_register(owner=owner, name="talker", url=servers[0].url)
        theirs = bot_register(owner=rival, name="greedy", url=servers[1].url)
        Bot.objects.update(health=Bot.Health.HEALTHY)
        league = league_create(creator=owner, name="talk", bot_ids=[mine.pk])
        league.entries.create(bot=theirs)
        league_start(league_id=league.pk, user=owner)  # eager Celery: played on commit
        game = Game.objects.filter(league=league).order_by("pk").first()
        return {"game": game.pk, "bots": [mine.pk, theirs.pk]}

    rows = saved_database("debug game", play)
    for pk, server in zip(rows["bots"], servers, strict=True):  # this test's own servers
        Bot.objects.filter(pk=pk).update(url=server.url)
    game = Game.objects.get(pk=rows["game"])
    mine = Bot.objects.get(pk=rows["bots"][0])
    yield game, mine.owner, mine
    for server in servers:
        server.stop()


def _log_in(page, base_url: str, username: str) -> None:
    page.goto(f"{base_url}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(OWNER_PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(re.compile(r"/my/bots/$"))


def test_owner_reads_debug_and_downloads_the_request_others_see_neither(
    debug_game, live_server, page, tmp_path
):
    game, owner, mine = debug_game
    plays = game_diagnostics(game=game, viewer=owner)["plays"]
    first = next(p for p in plays if p["bot"] == mine.pk and p["move"] is not None)
    url = f"{live_server.url}/games/{game.pk}/#r{first['round']}p{first['play']}"

    page.goto(url)
    expect(page.get_by_role("heading", name="Plays")).to_be_visible()
    expect(page.get_by_text("legal, took the first")).to_have_count(0)
    expect(page.get_by_role("button", name="Download request (JSON)")).to_have_count(0)

    _log_in(page, live_server.url, "rui")  # the opponent's owner: their own plays only
    page.goto(url)
    expect(page.get_by_text("legal, took the first")).to_have_count(0)

    _log_in(page, live_server.url, owner.username)
    page.goto(url)
    panel = page.get_by_role("region", name="Your bot's debug output")
    expect(panel.locator("pre")).to_have_text(first["debug"])
    button = panel.get_by_role("button", name="Download request (JSON)")
    expect(button).to_have_attribute("aria-disabled", "false")
    button.focus()
    with page.expect_download() as download:
        page.keyboard.press("Enter")
    saved = tmp_path / "request.json"
    download.value.save_as(saved)
    assert json.loads(saved.read_text()) == first["request"]
    assert download.value.suggested_filename == (
        f"game-{game.pk}-r{first['round']}p{first['play']}-request.json"
    )
    assert axe_violations(page) == []
    page.set_viewport_size(PHONE)
    assert axe_violations(page) == []
    # stepping on keeps focus on the button; an opponent's play has nothing to download
    page.keyboard.press("ArrowRight")
    expect(button).to_be_focused()
    expect(button).to_have_attribute("aria-disabled", "true")
    expect(panel.locator("pre")).to_be_hidden()


# The box of `el` lies inside the window and is what the reader sees there: the topmost element at
# its centre is itself or inside it (nothing sticky covers it).
IN_VIEW = """(el) => {
  const box = el.getBoundingClientRect();
  if (box.height === 0 || box.top < 0 || box.bottom > innerHeight) return false;
  const top = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
  return el === top || el.contains(top);
}"""


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_stepping_keeps_the_narration_and_the_debug_text_beside_the_step_buttons(
    debug_game, live_server, page, screenshot, viewport
):
    """Issue 39: what the author reads at each step (the narration, their bot's debug text, the
    request to download) is in the window with the step buttons, from the top of the page on,
    and stepping never scrolls; with the felt in view, no hand lies under the step dock."""
    game, owner, _mine = debug_game
    _log_in(page, live_server.url, owner.username)
    page.set_viewport_size(viewport)
    page.goto(f"{live_server.url}/games/{game.pk}/")
    narration = page.locator("[data-part=event]")
    debug = page.get_by_role("region", name="Your bot's debug output").locator("pre")
    download = page.get_by_role("button", name="Download request (JSON)")
    box = page.get_by_role("button", name="Next", exact=True).bounding_box()
    seen_debug = 0
    for step in range(1, 7):
        # A person's click: Playwright's own click first scrolls a sticky element "into view".
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        expect(page.locator("[data-part=step-label]")).to_contain_text(f"play {step} of")
        assert page.evaluate("scrollY") == 0
        assert narration.evaluate(IN_VIEW), f"the narration is out of view at play {step}"
        assert download.evaluate(IN_VIEW), f"the download is out of view at play {step}"
        if debug.is_visible():
            assert debug.evaluate(IN_VIEW), f"the debug text is out of view at play {step}"
            seen_debug += 1
            if seen_debug == 1:
                name = "replay-debug-phone" if viewport == PHONE else "replay-debug"
                screenshot(page, name, phone=False, full_page=False)
    assert seen_debug >= 2  # the owner's bot plays every other move
    page.keyboard.press("ArrowRight")  # focus is on Next: the keys step too, still in place
    assert page.evaluate("scrollY") == 0
    assert narration.evaluate(IN_VIEW) and download.evaluate(IN_VIEW)

    page.locator(".felt").evaluate("(felt) => felt.scrollIntoView()")
    dock_top = page.locator("[data-part=dock]").bounding_box()["y"]
    for hand in page.locator("[data-part=hand]").all():
        hand_box = hand.bounding_box()
        assert hand_box["y"] >= 0 and hand_box["y"] + hand_box["height"] <= dock_top
    assert narration.evaluate(IN_VIEW)
    assert axe_violations(page) == []
