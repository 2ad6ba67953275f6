"""The service's processes as `make run`, the tests and the benchmarks start them: each command line
written once, and one way to wait for a process to answer and to stop it.

Every command is a full argv starting with this interpreter (`sys.executable`), for
`subprocess.Popen(command, cwd=ROOT, env=...)`.
"""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

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
