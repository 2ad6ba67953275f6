"""uvicorn serving config/asgi.py (as `make run` and compose run it) for the live tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from scripts.private_redis import free_port
from scripts.processes import stop_processes, uvicorn_args, wait_for_http
from tests.conftest import test_database_url

ROOT = Path(__file__).resolve().parents[2]


class AsgiServer:
    """uvicorn serving config/asgi.py on the test database and Redis, in its own process."""

    def __init__(self, redis_url: str, log_path: Path, **settings: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        env = {
            **os.environ,
            "DATABASE_URL": test_database_url(),
            "REDIS_URL": redis_url,
            "PYTHONUNBUFFERED": "1",
            **settings,
        }
        with open(log_path, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, *uvicorn_args("127.0.0.1", self.port)],
                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip

        def alive() -> bool:
            return self.process.poll() is None

        if wait_for_http(f"{self.url}/api/health/", timeout=60, alive=alive):
            return
        self.stop()
        raise RuntimeError(f"uvicorn did not start:\n{log_path.read_text()[-3000:]}")

    def stop(self) -> None:
        stop_processes([self.process])
