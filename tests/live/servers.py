"""uvicorn serving config/asgi.py (as `make run` and compose run it) for the live tests."""

from __future__ import annotations

import http.client
import json
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


class Stream:
    """One Server-Sent Events connection to a local server's ``port``, read event by event."""

    def __init__(self, port: int, path: str, last_event_id: str | None = None) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        headers = {"Accept": "text/event-stream"}
        if last_event_id:
            headers["Last-Event-ID"] = last_event_id
        self.connection.request("GET", path, headers=headers)
        self.response = self.connection.getresponse()
        self.comments: list[str] = []

    def next(self) -> dict | None:
        """The next event (``event``, ``id``, ``data`` parsed), None at the end of the stream."""
        event: dict = {}
        while True:
            line = self.response.fp.readline()
            if not line:
                return None
            line = line.decode().rstrip("\n")
            if not line:
                if "event" in event:
                    return event
                continue
            field, _, value = line.partition(": ")
            if field == "":
                self.comments.append(value)
            elif field == "data":
                event["data"] = json.loads(value)
            elif field in ("event", "id"):
                event[field] = value

    def until_comment(self, text: str) -> None:
        """Read until a comment line says ``text``; AssertionError if the stream ends first."""
        while True:
            line = self.response.fp.readline()
            assert line, f"the stream ended before saying {text!r}"
            if line.decode().rstrip("\n") == f": {text}":
                return

    def close(self) -> None:
        self.connection.close()
