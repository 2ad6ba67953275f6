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

from tests.browser.saved import (
    SavedDatabase,
    SavedDatabases,
    database_copy,
    database_is_empty,
)

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
    # A key's scroll lands at once, not over an animation a later key's scroll can race
    # (Home right after End's animation was sometimes dropped).
    "--disable-smooth-scrolling",
]
HERE = Path(__file__).parent
ARTIFACTS = HERE / "artifacts"
DOCS_SCREENSHOTS = HERE.parent.parent / "docs" / "screenshots"
OWNER_PASSWORD = "a-long-enough-pass-77"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
VIEWPORTS = {"desktop": DESKTOP, "phone": PHONE}


class _Chromium:
    """One Chromium for every browser test that runs in a row (one per run of consecutive
    tests under tests/browser), closed before any other test runs.

    Not simply session-scoped: while it is open, the sync API keeps an event loop running in
    the main thread, and tests of other directories that call ``asyncio.run`` would fail beside
    it. ``pytest_runtest_teardown`` below closes it when the next test is not one of ours (under
    pytest-xdist too: a worker always knows its next test)."""

    def __init__(self) -> None:
        self.playwright = None
        self.browser = None
        self.allow_async_before: str | None = None

    def get(self):
        if self.browser is not None and self.browser.is_connected():
            return self.browser
        self.close()  # one that crashed, if any: start another
        from playwright.sync_api import sync_playwright

        # Playwright's sync API keeps an event loop running in the test's thread, which Django
        # takes for async code; the ORM calls the tests make beside it are still plain
        # synchronous calls.
        self.allow_async_before = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
        self.playwright = sync_playwright().start()
        self.browser = self.playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        return self.browser

    def close(self) -> None:
        if self.playwright is None:
            return
        try:
            if self.browser is not None and self.browser.is_connected():
                self.browser.close()
            self.playwright.stop()
        finally:
            self.playwright = self.browser = None
            if self.allow_async_before is None:
                os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
            else:
                os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = self.allow_async_before


_CHROMIUM = _Chromium()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    """After a test here (its fixtures torn down), close Chromium unless the next test is here
    too (``nextitem`` is None after the last test)."""
    try:
        return (yield)
    finally:
        if nextitem is None or HERE.resolve() not in Path(nextitem.path).resolve().parents:
            _CHROMIUM.close()


def pytest_sessionfinish() -> None:
    _CHROMIUM.close()


@pytest.fixture
def browser():
    """Chromium under Playwright (shared by the browser tests run in a row: ``_Chromium``)."""
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing; .ci/run installs it (apt-get install chromium)")
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")
    return _CHROMIUM.get()


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
    """A league between example bots (finished, or running in a worker), and who owns what;
    ``prepared``: what ``prepare`` returned (see ``league_world``)."""

    owner: object
    password: str = OWNER_PASSWORD
    bots: list = field(default_factory=list)
    league: object = None
    servers: list = field(default_factory=list)
    prepared: object = None


@pytest.fixture(scope="session")
def _saved_databases(tmp_path_factory) -> Iterator[SavedDatabases]:
    # Under pytest-xdist, the parent of a worker's base temporary folder is the run's, shared.
    shared = None
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = tmp_path_factory.getbasetemp().parent / "browser-databases"
        shared.mkdir(exist_ok=True)
    saved = SavedDatabases(shared)
    yield saved
    saved.close()


@pytest.fixture
def saved_database(transactional_db, _saved_databases) -> Callable[..., object]:
    """``saved_database(key, setup)``: ``setup()``'s return value, with the rows it wrote.

    The first test of the run to ask for ``key`` runs ``setup`` (a league played, say) and the
    database it leaves is saved (tests/browser/saved.py); a later test asking for the same key
    gets a copy of that database and the value ``setup`` returned (keep it to primary keys and
    plain values: JSON), in a fraction of a second. Each test still starts from the same rows,
    and what it writes is gone after it (``transactional_db``), as when each played its own.

    Only into an empty database (nothing the test made before) on SQLite: otherwise ``setup``
    runs each time, as it would without this."""

    def use(key: object, setup: Callable[[], object]) -> object:
        if not database_is_empty():
            return setup()
        with _saved_databases.claim(key) as saved:
            if saved is not None:
                database_copy(to_image=saved.image)
                return saved.value
            value = setup()
            _saved_databases.keep(key, SavedDatabase(image=database_copy(), value=value))
            return value

    return use


@pytest.fixture
def league_world(
    transactional_db, django_user_model, saved_database
) -> Iterator[Callable[..., LeagueWorld]]:
    """``league_world()`` serves random, greedy and expert, registers them, and plays a
    two-player league among them (3 pairings x 2 games, duplicate deals).

    ``move_delay`` slows every move down (seconds); ``flaky_every=n`` makes random crash on
    every n-th move; ``players`` 3 or 4 plays three-bot tables or partnerships instead.
    Celery runs eagerly in tests, so the league is played when this returns; with a real worker
    (``worker_beside_live_server``) it is only enqueued, and plays while the test watches.

    ``prepare(world)``, if given, adds to the played league what a test module needs (more
    rated sets, a fit); what it returns is ``world.prepared``.

    Played eagerly, a league is played once per session (``saved_database``, ``prepare``'s
    rows included): a later test asking for the same one gets a copy of its database, its bots
    served by the test's own servers (their addresses written over the saved ones).
    ``fresh=True`` plays it anyway, for a test that needs what playing leaves outside the
    database (counters in Redis).
    """

    from bots_sdk.examples.expert import make_expert
    from bots_sdk.examples.greedy import choose as greedy
    from bots_sdk.examples.random import make_random
    from bots_sdk.server import serve_in_thread
    from config.celery_app import app
    from tests.fakebots.players import Flaky, Slow
    from tournaments.models import Bot, League
    from tournaments.services.bots import bot_register
    from tournaments.services.league_creation import league_create
    from tournaments.services.league_schedules import league_start

    worlds: list[LeagueWorld] = []

    def serve(world: LeagueWorld, move_delay: float, flaky_every: int) -> list:
        chooses = {"random": make_random(7), "greedy": greedy, "expert": make_expert()}
        if flaky_every:
            chooses["random"] = Flaky(flaky_every, chooses["random"])
        for name, choose in chooses.items():
            target = Slow(move_delay, choose) if move_delay else choose
            world.servers.append(serve_in_thread(target, name=name))
        return world.servers

    def play(world: LeagueWorld, players: int) -> None:
        for server, name in zip(world.servers, ("random", "greedy", "expert"), strict=True):
            world.bots.append(bot_register(owner=world.owner, name=name, url=server.url))
        Bot.objects.filter(owner=world.owner).update(health=Bot.Health.HEALTHY)
        world.league = league_create(
            creator=world.owner,
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
        league_start(league_id=world.league.pk, user=world.owner)
        world.league.refresh_from_db()

    def build(
        move_delay: float = 0.0,
        flaky_every: int = 0,
        players: int = 2,
        prepare: Callable[[LeagueWorld], object] | None = None,
        fresh: bool = False,
    ) -> LeagueWorld:
        world = LeagueWorld(owner=None)
        worlds.append(world)
        serve(world, move_delay, flaky_every)

        def setup() -> dict:
            # staff, with checked bots: only such leagues are rated
            world.owner = django_user_model.objects.create_user(
                username="ana", password=OWNER_PASSWORD, is_staff=True
            )
            play(world, players)
            prepared = prepare(world) if prepare is not None else None
            return {
                "owner": world.owner.pk,
                "bots": [bot.pk for bot in world.bots],
                "league": world.league.pk,
                "prepared": prepared,
            }

        # A league a worker plays while the test watches is played afresh.
        if move_delay or fresh or not app.conf.task_always_eager:
            setup()
            return world
        prepared_by = prepare and f"{prepare.__module__}.{prepare.__qualname__}"
        key = ("league", flaky_every, players, prepared_by)
        rows = saved_database(key, setup)
        for pk, server in zip(rows["bots"], world.servers, strict=True):
            Bot.objects.filter(pk=pk).update(url=server.url)
        world.owner = django_user_model.objects.get(pk=rows["owner"])
        world.bots = [Bot.objects.get(pk=pk) for pk in rows["bots"]]
        world.league = League.objects.get(pk=rows["league"])
        world.prepared = rows["prepared"]
        return world

    yield build
    for world in worlds:
        for server in world.servers:
            server.stop()


@pytest.fixture
def worker_beside_live_server(live_server, celery_worker_factory):
    """A real Celery worker for a test that also uses the live server (started first).

    Killed after the test, not stopped warmly: the league it plays is of no more use, and a
    warm shutdown would wait out the match in play (15 s before it kills anyway)."""
    worker = celery_worker_factory()
    yield worker
    worker.kill()
