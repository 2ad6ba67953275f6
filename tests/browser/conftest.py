"""Browser tests: Playwright driving Debian's Chromium against pytest-django's live server.

Data is real: SDK example bots are served on loopback, registered through the registry service
and play a small league through the league services (Celery runs eagerly in tests, so starting a
league plays it in the calling thread).

Screenshots go to ``tests/browser/artifacts/`` (ignored by git) on every run; with
``ESCOBA_SCREENSHOTS=1`` they are also written to ``docs/screenshots/`` for the README.
"""

import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-quic",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
]
HERE = Path(__file__).parent
ARTIFACTS = HERE / "artifacts"
DOCS_SCREENSHOTS = HERE.parent.parent / "docs" / "screenshots"
OWNER_PASSWORD = "a-long-enough-pass-77"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
VIEWPORTS = {"desktop": DESKTOP, "phone": PHONE}


@pytest.fixture(scope="module")
def browser() -> Iterator:
    """Chromium under Playwright, for one test module at a time.

    Module scope, not session: while it is open, the sync API keeps an event loop running in the
    main thread, and tests of other modules that call ``asyncio.run`` would fail beside it.
    """
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing; .ci/run installs it (apt-get install chromium)")
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop running in the test's thread, which Django takes
    # for async code; the ORM calls the tests make beside it are still plain synchronous calls.
    before = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            yield browser
            browser.close()
    finally:
        if before is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = before


@pytest.fixture
def page(browser) -> Iterator:
    context = browser.new_context(viewport=DESKTOP)
    context.set_default_timeout(15_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


@pytest.fixture
def screenshot() -> Callable:
    """``screenshot(page, "rankings")`` saves the page as it is now, at desktop and phone width;
    ``full_page=False``: the window only, as the reader sees it (sticky parts where they stick)."""
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / ".gitignore").write_text("*\n")
    publish = os.environ.get("ESCOBA_SCREENSHOTS") == "1"

    def take(page, name: str, phone: bool = True, full_page: bool = True) -> Path:
        path = ARTIFACTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=full_page)
        shots = [path]
        if phone:
            page.set_viewport_size(PHONE)
            phone_path = ARTIFACTS / f"{name}-phone.png"
            page.screenshot(path=str(phone_path), full_page=full_page)
            page.set_viewport_size(DESKTOP)
            shots.append(phone_path)
        if publish:
            DOCS_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            for shot in shots:
                shutil.copy(shot, DOCS_SCREENSHOTS / shot.name)
        return path

    return take


@dataclass
class LeagueWorld:
    """A league between example bots (finished, or running in a worker), and who owns what."""

    owner: object
    password: str = OWNER_PASSWORD
    bots: list = field(default_factory=list)
    league: object = None
    servers: list = field(default_factory=list)


@pytest.fixture
def league_world(transactional_db, django_user_model) -> Iterator[Callable[..., LeagueWorld]]:
    """``league_world()`` serves random, greedy and expert, registers them, and plays a
    two-player league among them (3 pairings x 2 games, duplicate deals).

    ``move_delay`` slows every move down (seconds); ``flaky_every=n`` makes random crash on
    every n-th move; ``players`` 3 or 4 plays three-bot tables or partnerships instead.
    Celery runs eagerly in tests, so the league is played when this returns; with a real worker
    (``worker_beside_live_server``) it is only enqueued, and plays while the test watches.
    """

    from bots_sdk.examples.expert import make_expert
    from bots_sdk.examples.greedy import choose as greedy
    from bots_sdk.examples.random import make_random
    from bots_sdk.server import serve_in_thread
    from tests.fakebots.players import Flaky, Slow
    from tournaments.models import Bot, League
    from tournaments.services.bots import bot_register
    from tournaments.services.league_creation import league_create
    from tournaments.services.league_schedules import league_start

    worlds: list[LeagueWorld] = []

    def build(move_delay: float = 0.0, flaky_every: int = 0, players: int = 2) -> LeagueWorld:
        # staff, with checked bots: only such leagues are rated
        owner = django_user_model.objects.create_user(
            username="ana", password=OWNER_PASSWORD, is_staff=True
        )
        world = LeagueWorld(owner=owner)
        worlds.append(world)
        chooses = {"random": make_random(7), "greedy": greedy, "expert": make_expert()}
        if flaky_every:
            chooses["random"] = Flaky(flaky_every, chooses["random"])
        for name, choose in chooses.items():
            target = Slow(move_delay, choose) if move_delay else choose
            server = serve_in_thread(target, name=name)
            world.servers.append(server)
            world.bots.append(bot_register(owner=owner, name=name, url=server.url))
        Bot.objects.filter(owner=owner).update(health=Bot.Health.HEALTHY)
        world.league = league_create(
            creator=owner,
            name="Test league",
            players=players,
            move_timeout_ms=5000,
            bot_ids=[bot.pk for bot in world.bots],
        )
        # Rated by hand: the pages show an owner's views of all three bots, and a rated league
        # refuses two bots of one owner (docs/ratings.md); the pages do not depend on who owns
        # what of a rated league. Rated, its games are dealt afresh (so each can be watched
        # while played, seats anonymous: tournaments/observers.py).
        # A partnership league stays unrated: rated partnerships seat four bots of four owners,
        # this one fields its bots as shared-hand teams.
        if players != 4:
            League.objects.filter(pk=world.league.pk).update(rated=True)
        league_start(league_id=world.league.pk, user=owner)
        world.league.refresh_from_db()
        return world

    yield build
    for world in worlds:
        for server in world.servers:
            server.stop()


@pytest.fixture
def worker_beside_live_server(live_server, celery_worker_factory):
    """A real Celery worker for a test that also uses the live server (started first)."""
    return celery_worker_factory()
