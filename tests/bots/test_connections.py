"""The caller's keep-alive connections (tournaments/bot_calls/connections.py) against the
misbehaving server of tests/fakebots/hostile.py: header blocks out of bounds, replies that are
not HTTP, bodies ended by the connection or chunked, bytes no request asked for, idle
connections.
"""

from __future__ import annotations

import asyncio

import pytest

from games import protocol_check as check
from games.engine import Move
from games.faults import FaultKind
from tests.fakebots import hostile as hostile_bots
from tournaments.bot_calls import connections
from tournaments.bot_calls.caller import BotClient

# Both event loops the caller runs on: asyncio's and the games worker's uvloop.
pytestmark = pytest.mark.usefixtures("each_event_loop")

DEADLINE_MS = 2000
MOVE = Move.from_str("1o")
BODY = {"protocol": "escoba/1"}  # the server answers whatever was asked


def moves(url: str, times: int = 1, pause_s: float = 0.0) -> list:
    """`times` move calls on one client, `pause_s` apart."""

    async def main() -> list:
        client = BotClient(url, None, allow_private=True)
        try:
            replies = []
            for index in range(times):
                if index and pause_s:
                    await asyncio.sleep(pause_s)
                replies.append(await client.move(BODY, DEADLINE_MS))
            return replies
        finally:
            await client.aclose()

    return asyncio.run(main())


def test_the_servers_bounds_are_the_callers():
    assert hostile_bots.MAX_HEADERS == connections.MAX_HEADERS
    assert hostile_bots.MAX_HEAD_BYTES == connections.MAX_HEAD_BYTES


@pytest.mark.parametrize(
    "behaviour, kind, detail",
    [
        ("many-headers", FaultKind.TOO_LARGE, "more than 64 headers"),
        ("huge-head", FaultKind.TOO_LARGE, "a header block of more than 16384 bytes"),
        ("not-http", FaultKind.CONNECT, "not an HTTP/1.1 reply"),
        ("bad-gzip", FaultKind.BAD_JSON, "a compressed body that does not decode"),
    ],
)
def test_a_reply_outside_http_or_its_bounds_is_a_fault(hostile, behaviour, kind, detail):
    base, _ = hostile

    [answer] = moves(f"{base}/{behaviour}/")

    assert answer.move is None and answer.fault is not None
    assert answer.fault.kind == kind and answer.fault.detail.startswith(detail), answer.fault


@pytest.mark.parametrize(
    "behaviour, pause_s, connections_made",
    [
        # A body ended by the connection is taken; the next call connects again.
        ("until-close", 0.0, 2),
        # A chunked body is read whole, and its connection kept.
        ("chunked", 0.0, 1),
        # A reply no request asked for, later or in the same read, closes the connection: the
        # next call must not take it (7o) for its own answer.
        ("then-unasked", 0.2, 2),
        ("twice", 0.0, 2),
    ],
)
def test_how_a_reply_ends_decides_whether_its_connection_is_used_again(
    hostile, behaviour, pause_s, connections_made
):
    base, bots = hostile
    before = bots.connections

    replies = moves(f"{base}/{behaviour}/", times=2, pause_s=pause_s)

    assert [(r.move, r.fault) for r in replies] == [(MOVE, None)] * 2
    assert bots.connections - before == connections_made


def test_a_deflated_reply_is_decoded(hostile):
    base, _ = hostile

    [answer] = moves(f"{base}/deflated-good/")

    assert (answer.move, answer.fault) == (MOVE, None)


def test_a_connection_idle_too_long_is_not_used_again(hostile, monkeypatch):
    base, bots = hostile
    monkeypatch.setattr(connections, "KEEPALIVE_S", 0.05)
    before = bots.connections

    replies = moves(f"{base}/good/", times=2, pause_s=0.15)

    assert [(r.move, r.fault) for r in replies] == [(MOVE, None)] * 2
    assert bots.connections - before == 2


def test_the_check_reads_what_a_move_call_would_refuse(hostile):
    """The protocol check judges statuses itself: a 500 comes back as one, with its body."""
    base, _ = hostile

    async def main() -> check.Answer:
        client = BotClient(f"{base}/server-error/", None, allow_private=True)
        try:
            return await client.answer(check.Call("POST", "move", {}), DEADLINE_MS)
        finally:
            await client.aclose()

    answer = asyncio.run(main())

    assert answer.error is None and answer.status == 500
    assert answer.payload == b'{"error": "boom"}'


def test_a_request_is_one_piece_of_http_with_its_length():
    client = BotClient("http://bot.example.org:8001/v1/", None)

    get = client._request("GET", None, b"")
    post = client._request("POST", "move", b'{"a":1}')
    empty = client._request("POST", "end", b"")

    assert get.startswith(b"GET /v1/ HTTP/1.1\r\nHost: bot.example.org:8001\r\n")
    assert b"Content-Length" not in get and get.endswith(b"\r\n\r\n")
    assert post.startswith(b"POST /v1/move HTTP/1.1\r\n")
    assert post.endswith(b"Content-Length: 7\r\n\r\n" + b'{"a":1}')
    assert empty.endswith(b"Content-Length: 0\r\n\r\n")


def test_an_idle_connection_is_closed_even_if_its_bot_is_never_called_again(hostile, monkeypatch):
    base, _ = hostile
    monkeypatch.setattr(connections, "KEEPALIVE_S", 0.05)

    async def main() -> tuple[bool, bool, int]:
        client = BotClient(f"{base}/good/", None, allow_private=True)
        try:
            answer = await client.move(BODY, DEADLINE_MS)
            [connection] = client._connections()._idle
            await asyncio.sleep(0.2)
            return answer.fault is None, connection.open, len(client._connections()._idle)
        finally:
            await client.aclose()

    assert asyncio.run(main()) == (True, False, 0)
