"""Run Escoba Arena on this machine: ``make run`` (or ``.venv/bin/python -m scripts.run``).

Runs the steps in ``STEPS`` in order, then watches the processes they started until Ctrl-C or
SIGTERM, and stops them all, newest first. Each step is a plain function taking the
``Supervisor``; to start something more, write one more such function and add it to ``STEPS``.

The order is what keeps the service's own restarts from being charged to bots: Redis and the
database first, then the example bots, registered at their new ports, and only then the worker
and beat, so a match left over from the last run is played against the bots' current addresses.
Stopping goes the other way: web, beat and the worker first (the worker's warm shutdown hands
back the matches in play, whose unfinished games are replayed later, never forfeited), the bots
and Redis last.

A child that dies is started again, with the same command (and port), after a pause that doubles
each time (``RESTART_BACKOFF_S``); one that dies more than ``RESTART_LIMIT`` times within
``RESTART_WINDOW_S`` stops the whole service. The private Redis keeps an append-only file under
``data/redis``, so neither its restart nor the next ``make run`` loses the queue of matches.

The web server is uvicorn serving the whole site (config/asgi.py), so a game can be watched live.

Environment: ``ESCOBA_HOST`` / ``ESCOBA_PORT`` for the web server (127.0.0.1:8000),
``REDIS_URL`` to use an existing Redis instead of a private one, and everything the settings read
(README.md). Process logs go to ``data/logs/``.
"""

import functools
import importlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import redis

from scripts import processes
from scripts.private_redis import PrivateRedis, free_port, free_ports
from scripts.processes import celery_beat_command, celery_worker_command, uvicorn_args

ROOT = Path(__file__).resolve().parents[1]
ADMIN_USERNAME = "admin"
STOP_TIMEOUT_SECONDS = 15.0
# A dead child starts again after 1, 2, 4... seconds (at most RESTART_BACKOFF_MAX_S); more than
# RESTART_LIMIT deaths of one child within RESTART_WINDOW_S seconds stop everything.
RESTART_BACKOFF_S = 1.0
RESTART_BACKOFF_MAX_S = 30.0
RESTART_LIMIT = 5
RESTART_WINDOW_S = 300.0
# The queues tasks are routed to: the match queues (games: the ladder, with the recovery and
# sweep; leagues; challenges: challenges and version tests; tournaments/queueing.py), polled in
# turn; maintenance (checks, ladder ticks, scheduling, rating fits, notifications, anything not
# routed); and baselines (the values of rated deals, docs/ratings.md: a few ms of CPU per rated
# game, which at make run's scale the one worker affords; compose gives them a worker of their own).
WORKER_QUEUES = ",".join(["games", "leagues", "challenges", "maintenance", "baselines"])


@dataclass
class Child:
    """A supervised process; ``start`` starts it (again), with the same command and port."""

    name: str
    start: Callable[[], subprocess.Popen]
    process: subprocess.Popen
    log_path: Path | None = None
    deaths: deque[float] = field(default_factory=deque)
    restart_at: float | None = None


@dataclass
class Supervisor:
    """What the steps share: the children started so far, their environment, what to print."""

    data_dir: Path
    host: str
    port: int
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    children: list[Child] = field(default_factory=list)
    urls: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        # Links handed to bots (a game's log, in the end notice) point at this server.
        self.env.setdefault("ESCOBA_PUBLIC_URL", self.base_url)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def spawn(self, name: str, command: list[str]) -> Child:
        """Start a child in its own session, so Ctrl-C reaches only us and we stop it in order."""
        log_dir = self.data_dir / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        log_path = log_dir / f"{name}.log"

        def start() -> subprocess.Popen:
            with open(log_path, "ab") as log:
                return subprocess.Popen(
                    command,
                    cwd=ROOT,
                    env=self.env,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )

        child = Child(name, start, start(), log_path)
        self.children.append(child)
        return child

    def adopt(self, name: str, start: Callable[[], subprocess.Popen]) -> None:
        """Supervise a process started by ``start`` (the private redis-server)."""
        self.children.append(Child(name, start, start()))

    def stop_all(self) -> None:
        for child in reversed(self.children):
            if child.process.poll() is None:
                say(f"stopping {child.name}")
                child.process.terminate()
                try:
                    child.process.wait(STOP_TIMEOUT_SECONDS)
                except subprocess.TimeoutExpired:
                    say(f"{child.name} did not stop in time; killing it")
                    child.process.kill()
                    child.process.wait()
            try:
                os.killpg(child.process.pid, signal.SIGKILL)  # leftovers of its process group
            except (ProcessLookupError, PermissionError):
                pass
        self.children.clear()

    def watch(self) -> int:
        """Restart children that die, until a stop signal (exit 0) or a child that keeps dying
        (exit 1)."""
        while not self.stopping.wait(0.5):
            for child in self.children:
                if not self._keep_alive(child):
                    return 1
        return 0

    def _keep_alive(self, child: Child) -> bool:
        """Notice a death, schedule the restart, start it when due; False: give up."""
        now = time.monotonic()
        if child.restart_at is None:
            if child.process.poll() is None:
                return True
            while child.deaths and now - child.deaths[0] > RESTART_WINDOW_S:
                child.deaths.popleft()
            child.deaths.append(now)
            where = f"; see {child.log_path}" if child.log_path else ""
            if len(child.deaths) > RESTART_LIMIT:
                say(
                    f"{child.name} exited with code {child.process.returncode}{where}; it died "
                    f"{len(child.deaths)} times in {RESTART_WINDOW_S:.0f} s, so everything stops"
                )
                return False
            delay = min(RESTART_BACKOFF_S * 2 ** (len(child.deaths) - 1), RESTART_BACKOFF_MAX_S)
            say(
                f"{child.name} exited with code {child.process.returncode}{where}; "
                f"restarting it in {delay:.0f} s"
            )
            child.restart_at = now + delay
            return True
        if now < child.restart_at:
            return True
        child.restart_at = None
        try:
            child.process = child.start()
        except (OSError, RuntimeError) as error:
            say(f"{child.name} could not start again: {error}")
            return False
        say(f"{child.name} restarted (pid {child.process.pid})")
        return True


def say(message: str) -> None:
    """Tell the terminal; a terminal that is gone must not stop a shutdown half way.

    Ctrl-C reaches every process of the foreground group, so with ``make run | tee log`` the
    reader may be dead before the children are stopped: the message is then dropped (and stdout
    pointed at /dev/null, so the interpreter's last flush does not fail either)."""
    try:
        print(f"[escoba] {message}", flush=True)
    except OSError:  # BrokenPipeError, or a closed terminal (EIO)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def python_command(*args: str) -> list[str]:
    return [sys.executable, *args]


def prepare_database(supervisor: Supervisor) -> None:
    """Apply migrations (creates the SQLite file under data/ on first run)."""
    say("migrating the database")
    subprocess.run(
        python_command("manage.py", "migrate", "--noinput"),
        cwd=ROOT,
        env=supervisor.env,
        check=True,
    )


def ensure_admin(supervisor: Supervisor) -> None:
    """Create the admin account once (``createsuperuser --noinput``), keeping its credentials in
    data/admin-credentials.json."""
    credentials_path = supervisor.data_dir / "admin-credentials.json"
    password = secrets.token_urlsafe(12)
    result = subprocess.run(
        python_command("manage.py", "createsuperuser", "--noinput"),
        cwd=ROOT,
        env=supervisor.env
        | {
            "DJANGO_SUPERUSER_USERNAME": ADMIN_USERNAME,
            "DJANGO_SUPERUSER_PASSWORD": password,
            "DJANGO_SUPERUSER_EMAIL": f"{ADMIN_USERNAME}@localhost",
        },
        capture_output=True,
        text=True,
    )
    if result.returncode == 0:
        credentials_path.write_text(json.dumps({"username": ADMIN_USERNAME, "password": password}))
        credentials_path.chmod(0o600)
    elif "already taken" not in result.stderr:
        raise RuntimeError(f"createsuperuser failed: {result.stderr.strip()}")
    if credentials_path.exists():
        saved = json.loads(credentials_path.read_text())
        supervisor.notes.append(f"admin login: {saved['username']} / {saved['password']}")
    else:
        supervisor.notes.append(
            f"admin account '{ADMIN_USERNAME}' already existed; "
            f"set its password with: .venv/bin/python manage.py changepassword {ADMIN_USERNAME}"
        )


def start_redis(supervisor: Supervisor) -> None:
    """Use REDIS_URL when it is set, else start a private redis-server under data/redis."""
    url = os.environ.get("REDIS_URL")
    if url:
        client = redis.Redis.from_url(url, socket_connect_timeout=2)
        try:
            client.ping()
        except redis.RedisError as error:
            raise SystemExit(f"REDIS_URL={url} is not reachable: {error}") from None
        finally:
            client.close()
        say(f"using Redis at {url}")
    else:
        port, directory = free_port(), supervisor.data_dir / "redis"
        url = f"redis://127.0.0.1:{port}/0"

        def start() -> subprocess.Popen:
            return PrivateRedis(port=port, directory=directory, persistent=True).start().process

        supervisor.adopt("redis", start)
        say(f"started a private redis-server at {url}")
    supervisor.env["REDIS_URL"] = url


def start_worker(supervisor: Supervisor) -> None:
    say("starting the Celery worker")
    # Matches wait on bots, not the CPU: threads keep many of them in flight.
    command = celery_worker_command(pool="threads", concurrency=32, queues=WORKER_QUEUES)
    supervisor.spawn("worker", command)


def start_beat(supervisor: Supervisor) -> None:
    say("starting Celery beat")
    supervisor.spawn("beat", celery_beat_command())


def start_web(supervisor: Supervisor) -> None:
    """The whole site under uvicorn (config/asgi.py), one process, without its reloader so that
    we own its only process: the live streams (web/live_urls.py) need an ASGI server."""
    with socket.socket() as probe:
        if probe.connect_ex((supervisor.host, supervisor.port)) == 0:
            raise SystemExit(f"Port {supervisor.port} is taken; set ESCOBA_PORT to another one.")
    say(f"starting the web server on {supervisor.base_url}")
    supervisor.spawn("web", python_command(*uvicorn_args(supervisor.host, supervisor.port)))
    wait_for_http(supervisor, f"{supervisor.base_url}/api/health/")
    supervisor.urls.update(
        {
            "site": f"{supervisor.base_url}/",
            "API docs": f"{supervisor.base_url}/api/docs/",
            "API schema": f"{supervisor.base_url}/api/schema/",
            "health": f"{supervisor.base_url}/api/health/",
            "admin": f"{supervisor.base_url}/admin/",
        }
    )


def wait_for_http(supervisor: Supervisor, url: str, timeout: float = 60.0) -> None:
    if not processes.wait_for_http(url, timeout=timeout, interval=0.3,
                                   alive=lambda: not supervisor.stopping.is_set()):  # fmt: skip
        raise SystemExit(f"{url} did not answer within {timeout:.0f}s; see data/logs/")


# -- the demo league (owned by the league engineer) ---------------------------------------------

DEMO_BOTS = {
    "greedy": "bots_sdk.examples.greedy:choose",
    "random": "bots_sdk.examples.random:choose",
    "expert": "bots_sdk.examples.expert:choose",
    "cautious": "bots_sdk.examples.variants:cautious",
    "sweeper": "bots_sdk.examples.variants:sweeper",
    "counter": "bots_sdk.examples.variants:counter",
    "random7": "bots_sdk.examples.variants:random_7",
    "random42": "bots_sdk.examples.variants:random_42",
    "search": "bots_sdk.examples.search:choose",
}
# The example bots answer in about a millisecond, which would play the whole demo league in ten
# seconds: a newcomer would only ever see it finished. Thinking this long per move (the
# environment variable of the same name; 0: full speed) keeps it in progress for about two
# minutes, its standings filling in as games finish, at little CPU.
ESCOBA_DEMO_THINK_MS = 200
# Games each pair of demo bots plays (the environment variable ESCOBA_DEMO_GAMES_PER_PAIRING): a
# smaller league when only its being played matters (the tests of make run).
DEMO_GAMES_PER_PAIRING = 4


def _demo_bot(target: str) -> Callable:
    """The example bot ``target``, thinking ``ESCOBA_DEMO_THINK_MS`` before every move.

    It wears the example's name and module, so its `GET /` gives the example's `__author__`.
    """
    module_name, _, attribute = target.partition(":")
    example = getattr(importlib.import_module(module_name), attribute)

    @functools.wraps(example)
    def choose(state):
        think_ms = int(os.environ.get("ESCOBA_DEMO_THINK_MS", ESCOBA_DEMO_THINK_MS))
        time.sleep(think_ms / 1000)
        # The thinking comes out of this call's time: the search example counts its budget from
        # the request's arrival (`state.received_at`), so it has already been charged for it.
        return example(state)

    return choose


# Targets for `python -m bots_sdk serve scripts.run:demo_<name>`.
for _name, _target in DEMO_BOTS.items():
    globals()[f"demo_{_name}"] = _demo_bot(_target)


def demo_enabled() -> bool:
    """ESCOBA_DEMO=0 starts neither the example bots nor the demo league."""
    return os.environ.get("ESCOBA_DEMO", "1") != "0"


def start_example_bots(supervisor: Supervisor) -> None:
    """Serve the SDK's example bots on loopback and register them at their new ports.

    This comes before the worker: a match left over from the last run (its Redis keeps the queue)
    must find the bots where they are now. The bots belong to the account "examples"; they move
    to new ports on every run, so the same bots (and their ratings) come back each time. A bot
    restarted by the supervisor keeps its port.
    """
    if not demo_enabled():
        return
    say(f"starting {len(DEMO_BOTS)} example bots")
    urls = []
    for name, port in zip(DEMO_BOTS, free_ports(len(DEMO_BOTS)), strict=True):
        supervisor.spawn(
            f"bot-{name}",
            python_command(
                "-m", "bots_sdk", "serve", f"scripts.run:demo_{name}",
                "--port", str(port), "--name", name,
            ),
        )  # fmt: skip
        urls.append(f"http://127.0.0.1:{port}")
    for url in urls:
        wait_for_http(supervisor, url, timeout=30)
    subprocess.run(
        python_command("manage.py", "bots_register_examples", "--owner", "examples", *urls),
        cwd=ROOT,
        env=supervisor.env,
        check=True,
    )


DEMO_LEAGUE_NAME = "Demo league"
# League names are unique: later runs' demo leagues are "Demo league (2)", "(3)"... (league_run).
DEMO_LEAGUE_PATTERN = "^" + DEMO_LEAGUE_NAME + r"( \(\d+\))?$"
DEMO_LEAGUE_UNFINISHED = (
    "from tournaments.models import League\n"
    f"print(League.objects.filter(name__iregex={DEMO_LEAGUE_PATTERN!r}, "
    "status__in=['open', 'running', 'paused']).exists())"
)


def start_demo_league(supervisor: Supervisor) -> None:
    """Start an unrated demo league of the example bots: something to watch, not to rank.

    Not when the last run's demo league is still being played: its games stopped by that run's
    Ctrl-C are played now, and a second league would only slow the same bots down.
    """
    if not demo_enabled():
        return
    unfinished = subprocess.run(
        python_command("manage.py", "shell", "-c", DEMO_LEAGUE_UNFINISHED),
        cwd=ROOT,
        env=supervisor.env,
        check=True,
        capture_output=True,
        text=True,
    )
    if unfinished.stdout.strip().endswith("True"):
        say("the demo league of the last run goes on")
    else:
        games = os.environ.get("ESCOBA_DEMO_GAMES_PER_PAIRING", str(DEMO_GAMES_PER_PAIRING))
        league = [
            "league_run", "--detach", "--unrated", "--name", DEMO_LEAGUE_NAME,
            "--bots", ",".join(DEMO_BOTS), "--games-per-pairing", games,
        ]  # fmt: skip
        command = python_command("manage.py", *league)
        subprocess.run(command, cwd=ROOT, env=supervisor.env, check=True)
    supervisor.urls["leagues"] = f"{supervisor.base_url}/leagues/"
    supervisor.urls["leagues API"] = f"{supervisor.base_url}/api/leagues/"


# The order matters (see the module docstring); stop_all goes through it backwards.
STEPS: list[Callable[[Supervisor], None]] = [
    start_redis,
    prepare_database,
    ensure_admin,
    start_example_bots,
    start_worker,
    start_beat,
    start_web,
    start_demo_league,
]


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    data_dir = Path(os.environ.get("ESCOBA_DATA_DIR", ROOT / "data"))
    data_dir.mkdir(parents=True, exist_ok=True)
    # The database, admin credentials and logs: the owner's alone (docs/security.md).
    data_dir.chmod(0o700)
    supervisor = Supervisor(
        data_dir=data_dir,
        host=os.environ.get("ESCOBA_HOST", "127.0.0.1"),
        port=int(os.environ.get("ESCOBA_PORT", "8000")),
    )
    # Our own handlers for both, whatever we inherited: a run started in the background begins
    # with SIGINT ignored (tests/foundation/test_run_signals.py).
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: supervisor.stopping.set())
    code = 1
    try:
        for step in STEPS:
            if supervisor.stopping.is_set():
                break
            step(supervisor)
        else:
            say("Escoba Arena is running:")
            for name, url in supervisor.urls.items():
                say(f"  {name:<11} {url}")
            for note in supervisor.notes:
                say(note)
            say(f"logs in {data_dir / 'logs'}; press Ctrl-C to stop")
        code = supervisor.watch() if not supervisor.stopping.is_set() else 0
    except (subprocess.CalledProcessError, RuntimeError, SystemExit) as error:
        say(f"start-up failed: {error}")
    finally:
        supervisor.stop_all()
        say("stopped")
    return code


if __name__ == "__main__":
    sys.exit(main())
