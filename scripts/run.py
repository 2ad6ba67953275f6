"""Run Escoba Arena on this machine: ``make run`` (or ``.venv/bin/python -m scripts.run``).

Runs the steps in ``STEPS`` in order, then watches the processes they started until Ctrl-C or
SIGTERM (or until one of them dies), and stops them all, newest first. Each step is a plain
function taking the ``Supervisor``; to start something more (example bots, a demo league), write
one more such function and add it to ``STEPS``.

Environment: ``ESCOBA_HOST`` / ``ESCOBA_PORT`` for the web server (127.0.0.1:8000),
``REDIS_URL`` to use an existing Redis instead of a private one, and everything the settings read
(README.md). Process logs go to ``data/logs/``.
"""

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
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import redis

from scripts.private_redis import PrivateRedis, free_port

ROOT = Path(__file__).resolve().parents[1]
ADMIN_USERNAME = "admin"
STOP_TIMEOUT_SECONDS = 15.0


@dataclass
class Child:
    name: str
    process: subprocess.Popen
    log_path: Path | None = None


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
        with open(log_path, "ab") as log:
            process = subprocess.Popen(
                command,
                cwd=ROOT,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        child = Child(name, process, log_path)
        self.children.append(child)
        return child

    def adopt(self, name: str, process: subprocess.Popen) -> None:
        """Supervise a process started elsewhere (the private redis-server)."""
        self.children.append(Child(name, process))

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
        """Wait for a stop signal (exit 0) or for a child to die (exit 1)."""
        while not self.stopping.wait(0.5):
            for child in self.children:
                if child.process.poll() is not None:
                    where = f"; see {child.log_path}" if child.log_path else ""
                    say(f"{child.name} exited with code {child.process.returncode}{where}")
                    return 1
        return 0


def say(message: str) -> None:
    print(f"[escoba] {message}", flush=True)


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
    """Create the admin account once, keeping its credentials in data/admin-credentials.json."""
    credentials_path = supervisor.data_dir / "admin-credentials.json"
    password = secrets.token_urlsafe(12)
    script = (
        "from django.contrib.auth import get_user_model\n"
        "User = get_user_model()\n"
        f"if not User.objects.filter(username={ADMIN_USERNAME!r}).exists():\n"
        f"    User.objects.create_superuser({ADMIN_USERNAME!r}, '', {password!r})\n"
        "    print('created')\n"
    )
    result = subprocess.run(
        python_command("manage.py", "shell", "-c", script),
        cwd=ROOT,
        env=supervisor.env,
        check=True,
        capture_output=True,
        text=True,
    )
    if "created" in result.stdout:
        credentials_path.write_text(json.dumps({"username": ADMIN_USERNAME, "password": password}))
        credentials_path.chmod(0o600)
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
        server = PrivateRedis(port=free_port(), directory=supervisor.data_dir / "redis").start()
        supervisor.adopt("redis", server.process)
        url = server.url
        say(f"started a private redis-server at {url}")
    supervisor.env["REDIS_URL"] = url


def start_worker(supervisor: Supervisor) -> None:
    say("starting the Celery worker")
    supervisor.spawn(
        "worker",
        python_command(
            "-m", "celery", "-A", "config.celery_app", "worker", "--loglevel=INFO",
            # Matches wait on bots, not the CPU: threads keep many of them in flight.
            "--pool=threads", "--concurrency=32",
        ),
    )


def start_beat(supervisor: Supervisor) -> None:
    say("starting Celery beat")
    supervisor.spawn(
        "beat", python_command("-m", "celery", "-A", "config.celery_app", "beat", "--loglevel=INFO")
    )


def start_web(supervisor: Supervisor) -> None:
    """Django's server, without its autoreloader so that we own its only process."""
    with socket.socket() as probe:
        if probe.connect_ex((supervisor.host, supervisor.port)) == 0:
            raise SystemExit(f"Port {supervisor.port} is taken; set ESCOBA_PORT to another one.")
    say(f"starting the web server on {supervisor.base_url}")
    address = f"{supervisor.host}:{supervisor.port}"
    supervisor.spawn("web", python_command("manage.py", "runserver", address, "--noreload"))
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
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not supervisor.stopping.is_set():
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except urllib.error.HTTPError:
            return  # it answered; the health body says what is missing
        except OSError:
            time.sleep(0.3)
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
}
# The example bots answer in about a millisecond, which would play the whole demo league in ten
# seconds: a newcomer would only ever see it finished. Thinking this long per move (the
# environment variable of the same name; 0: full speed) keeps it in progress for about two
# minutes, its standings filling in as games finish, at little CPU.
ESCOBA_DEMO_THINK_MS = 200
DEMO_GAMES_PER_PAIRING = 4


def _demo_bot(target: str) -> Callable:
    """The example bot ``target``, thinking ``ESCOBA_DEMO_THINK_MS`` before every move."""

    def choose(state):
        module_name, _, attribute = target.partition(":")
        think_ms = int(os.environ.get("ESCOBA_DEMO_THINK_MS", ESCOBA_DEMO_THINK_MS))
        time.sleep(think_ms / 1000)
        return getattr(importlib.import_module(module_name), attribute)(state)

    return choose


# Targets for `python -m bots_sdk serve scripts.run:demo_<name>`.
for _name, _target in DEMO_BOTS.items():
    globals()[f"demo_{_name}"] = _demo_bot(_target)


def start_demo_league(supervisor: Supervisor) -> None:
    """Serve the SDK's example bots on loopback, register them and start a demo league.

    Set ESCOBA_DEMO=0 to skip. The bots belong to the account "examples"; they move to the new
    ports on every run, so the same bots (and their ratings) come back each time.
    """
    if os.environ.get("ESCOBA_DEMO", "1") == "0":
        return
    say(f"starting {len(DEMO_BOTS)} example bots")
    urls = []
    for name in DEMO_BOTS:
        port = free_port()
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
    manage = ["manage.py"]
    subprocess.run(
        python_command(*manage, "bots_register_examples", "--owner", "examples", *urls),
        cwd=ROOT,
        env=supervisor.env,
        check=True,
    )
    league = [
        "league_run", "--detach", "--name", "Demo league", "--bots", ",".join(DEMO_BOTS),
        "--games-per-pairing", str(DEMO_GAMES_PER_PAIRING), "--unrated",
    ]  # fmt: skip
    subprocess.run(python_command(*manage, *league), cwd=ROOT, env=supervisor.env, check=True)
    supervisor.urls["leagues"] = f"{supervisor.base_url}/leagues/"
    supervisor.urls["leagues API"] = f"{supervisor.base_url}/api/leagues/"


STEPS: list[Callable[[Supervisor], None]] = [
    prepare_database,
    ensure_admin,
    start_redis,
    start_worker,
    start_beat,
    start_web,
    start_demo_league,
]


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    data_dir = Path(os.environ.get("ESCOBA_DATA_DIR", ROOT / "data"))
    data_dir.mkdir(parents=True, exist_ok=True)
    supervisor = Supervisor(
        data_dir=data_dir,
        host=os.environ.get("ESCOBA_HOST", "127.0.0.1"),
        port=int(os.environ.get("ESCOBA_PORT", "8000")),
    )
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
