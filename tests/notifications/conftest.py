"""Fixtures for owners' notifications: a real webhook receiver on loopback, an owner, a bot."""

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


@dataclass
class Received:
    """One request the receiver got: its headers (lower-case names) and raw body."""

    headers: dict[str, str]
    body: bytes
    at: float = field(default_factory=time.monotonic)

    @property
    def json(self) -> dict:
        return json.loads(self.body)


@dataclass
class Receiver:
    """An owner's webhook endpoint. It answers each POST with the next of `statuses` (the last
    one repeats), and keeps every request in `received`."""

    url: str = ""
    statuses: list[int] = field(default_factory=lambda: [204])
    received: list[Received] = field(default_factory=list)

    def next_status(self) -> int:
        return self.statuses.pop(0) if len(self.statuses) > 1 else self.statuses[0]

    def verify(self, secret: str) -> list[dict]:
        """Every request's payload, each checked against the Standard Webhooks signature."""
        from standardwebhooks.webhooks import Webhook

        webhook = Webhook(secret)
        return [webhook.verify(request.body, request.headers) for request in self.received]


class _Handler(BaseHTTPRequestHandler):
    receiver: Receiver

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        receiver = self.server.receiver  # type: ignore[attr-defined]
        headers = {key.lower(): value for key, value in self.headers.items()}
        receiver.received.append(Received(headers, body))
        self.send_response(receiver.next_status())
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.receiver = Receiver(url=f"http://127.0.0.1:{server.server_address[1]}/hooks/escoba")
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    yield server.receiver
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.fixture(autouse=True)
def _private_urls(settings) -> None:
    settings.ESCOBA_ALLOW_PRIVATE_BOT_URLS = True


@pytest.fixture
def owner(user):
    """Ana, with an address she confirmed (nothing is mailed to an unconfirmed one)."""
    from tournaments.models import NotificationSettings

    user.email = "ana@example.org"
    user.save(update_fields=["email"])
    NotificationSettings.objects.create(user=user, verified_email=user.email)
    return user


@pytest.fixture
def bot(owner):
    from tournaments.models import Bot
    from tournaments.services.bots import new_secret

    return Bot.objects.create(
        owner=owner, name="broom", url="http://127.0.0.1:9/", secret=new_secret()
    )


@pytest.fixture(autouse=True)
def _eager_retries_run() -> Iterator[None]:
    """Eager tasks retry in place only when their errors do not propagate (as in a worker,
    where a retry is a message, not an exception)."""
    from config.celery_app import app

    saved = app.conf.task_eager_propagates
    app.conf.task_eager_propagates = False
    yield
    app.conf.task_eager_propagates = saved
