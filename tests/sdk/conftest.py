"""Shared pieces of the SDK tests: a hand-written move request and a keep-alive HTTP client."""

from __future__ import annotations

import copy
import http.client
import json
from typing import Any
from urllib.parse import urlsplit

import pytest

# Hand 7o 3c 10b on a table of 1e 3b 4b 5e: every card captures (no trail is legal), the 7o and
# the 10b can each make 15 two ways. Legal moves in the engine's order (by card, then capture).
SAMPLE_REQUEST: dict[str, Any] = {
    "protocol": "escoba/1",
    "game": {
        "id": "41",
        "match_id": "12",
        "ruleset": {"name": "classic", "version": 1, "options": {"target": 21}},
        "timeout_ms": 1000,
    },
    "round": 2,
    "you": {"seat": 0, "team": 0, "hand": ["3c", "7o", "10b"]},
    "table": ["1e", "3b", "4b", "5e"],
    "dealer": 1,
    "deck_remaining": 24,
    "seats": [
        {"seat": 0, "team": 0, "name": "me", "hand_size": 3, "captured": 2, "escobas": 0},
        {"seat": 1, "team": 1, "name": "them", "hand_size": 2, "captured": 4, "escobas": 1},
    ],
    "scores": [3, 5],
    "history": [
        {"seat": 1, "card": "6c", "capture": ["2b", "7e"], "escoba": True},
        {"seat": 0, "card": "1o", "capture": [], "escoba": False},
        {"seat": 1, "card": "2o", "capture": ["6o", "7b"], "escoba": False},
    ],
    "legal_moves": [
        {"card": "3c", "capture": ["3b", "4b", "5e"]},
        {"card": "7o", "capture": ["1e", "3b", "4b"]},
        {"card": "7o", "capture": ["3b", "5e"]},
        {"card": "10b", "capture": ["1e", "4b"]},
        {"card": "10b", "capture": ["5e"]},
    ],
    "latency_ms": 1.25,
    "time_bank_ms": 1000,
}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: takes more than 20 s; still runs by default")


@pytest.fixture
def sample_request() -> dict[str, Any]:
    return copy.deepcopy(SAMPLE_REQUEST)


class Client:
    """A keep-alive JSON client on one `http.client` connection."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=5)

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        raw: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        self.connection.request(method, path, body=data, headers=headers or {})
        response = self.connection.getresponse()
        payload = response.read()
        return response.status, json.loads(payload) if payload else None

    def close(self) -> None:
        self.connection.close()


@pytest.fixture
def connect():
    """`connect(url)` opens a keep-alive `Client`; every client is closed after the test."""
    clients: list[Client] = []

    def make(url: str) -> Client:
        clients.append(Client(url))
        return clients[-1]

    yield make
    for client in clients:
        client.close()
