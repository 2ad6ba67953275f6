"""The service's processes as `make run`, the tests and the benchmarks start them: each command line
written once, and one way to wait for a process to answer and to stop it.

Every command is a full argv starting with this interpreter (`sys.executable`), for
`subprocess.Popen(command, cwd=ROOT, env=...)`.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CELERY_APP = "config.celery_app"
ASGI_APP = "config.asgi:application"


def celery_worker_command(
    *,
    pool: str = "threads",
    concurrency: int = 32,
    queues: str | None = None,
    hostname: str | None = None,
    loglevel: str = "INFO",
    alone: bool = False,
) -> list[str]:
    """`celery worker` for the service's tasks. `alone` leaves out what only matters between
    workers of a cluster (gossip, mingle, heartbeats): a worker a test or a benchmark starts
    answers its first ping sooner without them."""
    command = [
        sys.executable, "-m", "celery", "-A", CELERY_APP, "worker", f"--loglevel={loglevel}",
        f"--pool={pool}", f"--concurrency={concurrency}",
    ]  # fmt: skip
    if queues is not None:
        command.append(f"--queues={queues}")
    if hostname is not None:
        command.append(f"--hostname={hostname}")
    if alone:
        command += ["--without-gossip", "--without-mingle", "--without-heartbeat"]
    return command


def celery_beat_command(*, loglevel: str = "INFO", schedule: Path | None = None) -> list[str]:
    """`celery beat`, the periodic tasks' clock; `schedule` is its state file."""
    command = [sys.executable, "-m", "celery", "-A", CELERY_APP, "beat", f"--loglevel={loglevel}"]
    if schedule is not None:
        command.append(f"--schedule={schedule}")
    return command


def uvicorn_args(host: str, port: int) -> list[str]:
    """The web server's command line after ``python``: uvicorn serving config/asgi.py, one
    process, without its reloader (so that whoever starts it owns its only process)."""
    return [
        "-m", "uvicorn", ASGI_APP, "--host", host, "--port", str(port),
        "--no-access-log", "--timeout-graceful-shutdown", "5",
        # The client address and scheme are Django's to judge (ESCOBA_TRUSTED_PROXIES): uvicorn
        # would otherwise take X-Forwarded-For from any loopback client as the real address.
        "--no-proxy-headers",
        # asyncio's loop, as measured for the live streams: uvloop (installed for the games
        # loop, tournaments/bot_calls/game_loop.py) would otherwise be uvicorn's choice too.
        "--loop", "asyncio",
    ]  # fmt: skip


def uvicorn_command(host: str, port: int) -> list[str]:
    return [sys.executable, *uvicorn_args(host, port)]


def wait_for_http(
    url: str,
    *,
    timeout: float = 60.0,
    alive: Callable[[], bool] = lambda: True,
    interval: float = 0.2,
) -> bool:
    """Poll `url` until it answers (any HTTP status counts: the server is up; its body says
    what is missing). False when `timeout` passes or `alive()` turns false first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and alive():
        try:
            with urllib.request.urlopen(url, timeout=5):
                return True
        except urllib.error.HTTPError:
            return True
        except OSError:
            time.sleep(interval)
    return False


def wait_for_workers(
    hostnames: Sequence[str],
    *,
    timeout: float = 60.0,
    alive: Callable[[], bool] = lambda: True,
) -> bool:
    """Ping Celery workers by hostname until every one answers; False when `timeout` passes or
    `alive()` turns false first. Uses the in-process Celery app's broker."""
    from config.celery_app import app

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and alive():
        if len(app.control.ping(destination=list(hostnames), timeout=0.5)) >= len(hostnames):
            return True
    return False


def stop_processes(processes: Iterable[subprocess.Popen], timeout: float = 15.0) -> None:
    """SIGTERM every process, then wait for each, SIGKILL for one that outlives `timeout`."""
    processes = list(processes)
    for process in processes:
        if process.poll() is None:
            process.terminate()
    for process in processes:
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def migrate_command() -> list[str]:
    """`manage.py migrate`, quietly and without the system checks (a fresh database)."""
    return [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0", "--skip-checks"]


@contextmanager
def private_service(
    *, prefix: str, keep_data: bool = False, **settings: str
) -> Iterator[tuple[dict[str, str], list[subprocess.Popen]]]:
    """What a benchmark runs the service on: a private Redis, a fresh data directory (its
    SQLite database, unless `DATABASE_URL` is among `settings`), migrated; yields the
    environment for the service's processes (also set in this process's, for Django) and a list
    to which the caller adds each process it starts. On exit, SIGTERM included, those processes
    are stopped, the Redis too, and the data directory removed unless `keep_data`.

    The environment: local settings without debug, private bot addresses allowed (the bots are
    on loopback), warnings only, plus `settings`.
    """
    from scripts.private_redis import PrivateRedis

    data_dir = Path(tempfile.mkdtemp(prefix=prefix))
    children: list[subprocess.Popen] = []
    previous = signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        with PrivateRedis() as redis_server:
            env = {
                **os.environ,
                "DJANGO_SETTINGS_MODULE": "config.settings.local",
                "DEBUG": "0",
                "ESCOBA_DATA_DIR": str(data_dir),
                "ESCOBA_ALLOW_PRIVATE_BOT_URLS": "1",
                "LOG_LEVEL": "WARNING",
                "PYTHONPATH": str(ROOT),
                "REDIS_URL": redis_server.url,
                **settings,
            }
            os.environ.update(env)
            try:
                subprocess.run(migrate_command(), cwd=ROOT, env=env, check=True)
                yield env, children
            finally:
                stop_processes(reversed(children), timeout=10)
    finally:
        signal.signal(signal.SIGTERM, previous)
        if not keep_data:
            shutil.rmtree(data_dir, ignore_errors=True)


def _exit_on_sigterm(signum: int, frame: object) -> None:
    """SIGTERM unwinds like Ctrl-C, so the `finally` blocks stop the children."""
    raise SystemExit(128 + signum)
