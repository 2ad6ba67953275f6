"""Watching a game while it is played (issue 15, item 3): the ASGI server (uvicorn, as `make run`
and compose serve it), a real Celery worker, real HTTP bots that think before each move, real
Redis, and Chromium. The game page follows the game move by move over Server-Sent Events and
ends on the stored log's final score; the league page changes without polling.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress

import pytest
from playwright.sync_api import expect

from tests.browser.a11y import axe_violations
from tests.live.servers import AsgiServer

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

THINK_S = 0.1  # per move: a game of 150 to 300 plays lasts 15 to 30 seconds


@pytest.fixture
def asgi_server(celery_worker_factory, redis_url, tmp_path) -> Iterator[AsgiServer]:
    """uvicorn beside a real worker: the worker publishes, the server streams.

    Both start at once (uvicorn from a thread: each only waits for its own process). After
    the test the worker is killed, not stopped warmly: the league it plays is of no more use,
    and a warm shutdown would wait out the match in play (15 s before it kills anyway)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        starting = pool.submit(AsgiServer, redis_url, tmp_path / "uvicorn.log")
        try:
            worker = celery_worker_factory()
        except BaseException:
            with suppress(Exception):
                starting.result().stop()
            raise
        server = starting.result()
    yield server
    server.stop()
    worker.kill()


def _first_game(league):
    """The first game of the league's first match: the worker plays it first."""
    from tournaments.models import Game

    # The schedule is written by a task (leagues.schedule) that a real worker runs after the
    # start: wait for its first match.
    deadline = time.monotonic() + 60
    while (first := league.matches.order_by("number").first()) is None:
        assert time.monotonic() < deadline, "the league's schedule was never written"
        time.sleep(0.1)
    return Game.objects.filter(match=first).order_by("number").first()


# What the page shows at one instant.
LIVE_STATE = """() => ({
  state: window.escobaLiveGame.state,
  backs: document.querySelectorAll("[data-seat] [data-part=hand] .card.back").length,
  faces: document.querySelectorAll("[data-seat] [data-part=hand] .card[data-card]").length,
  listed: document.querySelectorAll("[data-part=plays] a").length,
  status: document.querySelector("[data-part=live-status]").textContent,
  focus: document.activeElement.dataset.part,
})"""

# Every change of the polite region's text, with when it happened (performance.now(), ms).
WATCH_ANNOUNCEMENTS = """() => {
  window.announced = [];
  const region = document.getElementById("live-announce");
  new MutationObserver(() => window.announced.push([performance.now(), region.textContent]))
    .observe(region, { childList: true, characterData: true, subtree: true });
}"""


def test_a_game_is_watched_live_to_its_end(asgi_server, league_world, page):
    from tournaments.models import GameLog

    world = league_world(move_delay=THINK_S)
    game = _first_game(world.league)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{asgi_server.url}/games/{game.pk}/")
    expect(page.locator("[data-part=live-status]")).to_be_visible()
    page.evaluate(WATCH_ANNOUNCEMENTS)
    follow = page.get_by_role("button", name="Follow live")
    expect(follow).to_have_attribute("aria-pressed", "true")
    follow.focus()

    # Moves arrive one by one while the game is played; the hands stay face down.
    # (Read while a hand holds cards: after a deal's last play both hands are empty until the
    # next play deals again; and once the plays list is drawn, which the page does at most every
    # 200 ms, so it may be a play or two behind the events.)
    page.wait_for_function(
        "() => window.escobaLiveGame.events >= 5"
        " && document.querySelector('[data-seat] [data-part=hand] .card')"
        " && document.querySelectorAll('[data-part=plays] a').length > 5",
        timeout=90_000,
        polling=50,
    )
    seen = page.evaluate(LIVE_STATE)
    assert seen["state"] == "live", seen
    assert seen["backs"] > 0 and seen["faces"] == 0, seen
    assert seen["listed"] > 5, seen
    assert seen["status"].startswith("Live: round"), seen
    # Live updates never move focus.
    assert seen["focus"] == "follow", seen
    assert axe_violations(page) == []

    # The end: the stored log is shown whole, and the final score is the stored log's.
    page.wait_for_function("() => window.escobaLiveGame.state === 'over'", timeout=120_000)
    stored = GameLog.objects.get(game_id=game.pk).document
    totals = stored["result"]["totals"]
    status = page.locator("[data-part=live-status]")
    expect(status).to_have_attribute("data-totals", ",".join(map(str, totals)))
    expect(status).to_contain_text(f"Final score {' – '.join(map(str, totals))}")
    last_round = len(stored["rounds"])
    expect(page.locator("[data-part=step-label]")).to_contain_text(f"Round {last_round}")
    assert page.locator("[data-part=plays] a").count() == sum(
        len(r["plays"]) + 2 for r in stored["rounds"]
    )
    assert page.evaluate("() => document.activeElement.dataset.part") == "follow"
    # Every play after the first snapshot arrived as its own event, spread over the game's
    # length (each move took THINK_S), not in one burst at the end.
    live = page.evaluate("window.escobaLiveGame")
    plays = sum(len(r["plays"]) for r in stored["rounds"])
    assert live["snapshots"] == 1 and live["snapshotAt"] + live["events"] == plays, live
    assert live["endAt"] - live["firstAt"] >= live["events"] * THINK_S * 1000 / 2, live
    assert errors == []

    # Announcements are polite and throttled: one every 5 s at most, the end at once.
    region = page.locator("#live-announce")
    assert region.get_attribute("aria-live") == "polite"
    announced = page.evaluate("window.announced")
    assert announced, "nothing was announced"
    times = [at for at, _ in announced[:-1]]
    assert all(b - a >= 4900 for a, b in zip(times, times[1:], strict=False)), announced
    assert "Final score" in announced[-1][1]


def test_the_step_controls_wait_for_the_game_and_no_focus_is_lost_when_it_comes(
    asgi_server, league_world, page
):
    """Until the stream's first snapshot starts the viewer, its step controls are disabled: one
    focused before then (Tab reaches them at once) would be disabled under the user by the first
    live update, which drops focus to the page."""
    world = league_world(move_delay=THINK_S)
    game = _first_game(world.league)
    held = []  # the page's event stream, held until the controls have been looked at
    page.route("**/live/games/**", lambda route: held.append(route))
    page.goto(f"{asgi_server.url}/games/{game.pk}/")
    controls = page.locator("[data-replay] [data-go], [data-replay] [data-part=slider]")
    assert controls.count() == 8
    for control in controls.all():
        expect(control).to_be_disabled()
    follow = page.get_by_role("button", name="Follow live")
    follow.focus()
    page.keyboard.press("Tab")
    tabbed_to = page.evaluate("() => document.activeElement.dataset.go || null")
    assert tabbed_to is None, f"Tab reached a step control before the game: {tabbed_to}"
    follow.focus()

    for _ in range(50):  # the stream's request reaches the route as Playwright runs
        if held:
            break
        page.wait_for_timeout(100)
    assert held, "the page did not open its event stream"
    held[0].continue_()
    page.wait_for_function("() => window.escobaLiveGame.events >= 2", timeout=90_000)
    for name in ("first", "prev-round", "prev", "last", "play"):
        expect(page.locator(f"[data-go={name}]")).to_be_enabled()
    expect(page.locator("[data-part=slider]")).to_be_enabled()
    expect(page.locator("[data-go=next]")).to_be_disabled()  # following: at the last play
    assert page.evaluate("() => document.activeElement.dataset.part") == "follow"


def test_pausing_keeps_the_step_and_follow_live_catches_up(asgi_server, league_world, page):

    world = league_world(move_delay=THINK_S)
    game = _first_game(world.league)
    page.goto(f"{asgi_server.url}/games/{game.pk}/")
    page.wait_for_function("() => window.escobaLiveGame.events >= 4", timeout=90_000)
    page.locator("[data-go=first]").click()
    expect(page.get_by_role("button", name="Follow live")).to_have_attribute(
        "aria-pressed", "false"
    )
    label = page.locator("[data-part=step-label]").inner_text()
    plays = page.evaluate("window.escobaLiveGame.events")
    page.wait_for_function("(n) => window.escobaLiveGame.events > n + 3", arg=plays)
    assert page.locator("[data-part=step-label]").inner_text() == label  # paused: stays put
    assert page.locator("[data-part=event]").get_attribute("aria-live") == "polite"
    page.get_by_role("button", name="Follow live").click()
    expect(page.locator("[data-part=step-label]")).not_to_have_text(label)
    assert page.locator("[data-part=event]").get_attribute("aria-live") == "off"


def test_the_league_page_changes_without_polling(asgi_server, league_world, page):
    world = league_world(move_delay=0.005)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(f"{asgi_server.url}/leagues/{world.league.pk}/")
    start = int(page.locator("#league-live [role=progressbar]").get_attribute("data-done"))
    page.wait_for_function(
        "(start) => Number(document.querySelector('#league-live [role=progressbar]')"
        ".dataset.done) > start",
        arg=start,
        timeout=120_000,
    )
    fragment = f"/leagues/{world.league.pk}/live/"
    fetched = [url for url in requests if url.endswith(fragment)]
    assert any(url.endswith(f"/live/league/{world.league.pk}/") for url in requests)
    # Fetched only when the stream said the league changed: each fetch moved the page on.
    assert (
        1
        <= len(fetched)
        <= int(page.locator("#league-live [role=progressbar]").get_attribute("data-done"))
        - start
        + 1
    )
    assert axe_violations(page) == []
