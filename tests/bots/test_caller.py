"""The hardened caller against real misbehaving servers on loopback: every failure is a typed
fault, delivered within the deadline plus a small margin."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime

import orjson
import pytest
from standardwebhooks.webhooks import Webhook

from games.engine import Move
from games.faults import FaultKind
from games.signing import Signer
from tests.bots.calls import DEADLINE_MS, call, sample_request
from tests.fakebots.http_bots import closed_port
from tests.fakebots.simple import SimpleBot
from tournaments.bot_calls.caller import BotClient, Caller, call_move, check_bot_info

MARGIN_S = 0.4
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


@pytest.mark.parametrize(
    "behaviour, kind",
    [
        ("silent", FaultKind.TIMEOUT),
        ("drip-headers", FaultKind.TIMEOUT),
        ("drip-body", FaultKind.TIMEOUT),
        ("huge-declared", FaultKind.TOO_LARGE),
        ("huge-chunked", FaultKind.TOO_LARGE),
        ("bomb", FaultKind.TOO_LARGE),
        ("redirect", FaultKind.REDIRECT),
        ("bad-json", FaultKind.BAD_JSON),
        ("wrong-schema", FaultKind.BAD_SCHEMA),
        ("not-a-card", FaultKind.BAD_SCHEMA),
        ("server-error", FaultKind.HTTP_STATUS),
        ("hang-up", FaultKind.CONNECT),
    ],
)
def test_misbehaving_bot_gives_a_typed_fault_within_the_deadline(hostile, behaviour, kind):
    base, _ = hostile
    [reply], seconds = call(f"{base}/{behaviour}/")
    assert reply.move is None
    assert reply.fault is not None and reply.fault.kind == kind, reply.fault
    assert seconds < DEADLINE_MS / 1000 + MARGIN_S
    if kind == FaultKind.TIMEOUT:
        # Dripping bytes every 50 ms does not extend a 300 ms deadline.
        assert seconds >= DEADLINE_MS / 1000 - 0.02
        assert reply.latency_ms >= DEADLINE_MS - 20


def test_fault_details_say_what_happened(hostile):
    base, _ = hostile
    [reply], _ = call(f"{base}/redirect/")
    assert "169.254.169.254" in reply.fault.detail and "302" in reply.fault.detail
    [reply], _ = call(f"{base}/server-error/")
    assert reply.fault.detail == "HTTP 500"
    [reply], _ = call(f"{base}/wrong-schema/")
    assert reply.fault.detail == "body: missing 'card'"
    [reply], _ = call(f"{base}/bomb/")
    assert reply.fault.detail == "more than 65536 bytes"


def test_compressed_reply_is_decoded(hostile):
    base, _ = hostile
    [reply], _ = call(f"{base}/gzipped-good/")
    assert reply.fault is None and reply.move == Move.from_str("1o")


def test_connection_refused_is_a_connect_fault():
    [reply], seconds = call(f"http://127.0.0.1:{closed_port()}/")
    assert reply.fault.kind == FaultKind.CONNECT
    assert seconds < DEADLINE_MS / 1000 + MARGIN_S


def test_good_bot_reuses_one_keep_alive_connection(hostile):
    base, bots = hostile
    before = bots.connections
    replies, _ = call(f"{base}/good/", times=5)
    assert [reply.move for reply in replies] == [Move.from_str("1o")] * 5
    assert all(reply.fault is None and reply.latency_ms > 0 for reply in replies)
    assert bots.connections - before == 1


def test_a_fault_does_not_poison_the_next_call(hostile):
    base, _ = hostile

    async def main():
        async with Caller(allow_private=True) as caller:
            slow = caller.client(f"{base}/silent/", None)
            good = caller.client(f"{base}/good/", None)
            first = await slow.move(sample_request(), 100)
            second = await good.move(sample_request(), 1000)
            return first, second

    first, second = asyncio.run(main())
    assert first.fault.kind == FaultKind.TIMEOUT
    assert second.fault is None


def test_loopback_is_refused_without_allow_private(hostile):
    base, bots = hostile
    before = bots.connections
    [reply], _ = call(f"{base}/good/", allow_private=False)
    assert reply.fault.kind == FaultKind.ADDRESS
    assert "loopback" in reply.fault.detail
    assert bots.connections == before


def test_host_name_is_kept_while_connecting_to_the_pinned_address(servers):
    bot = SimpleBot()
    port = servers.start_app(bot.app())
    lookups: list = []

    async def dns(host: str, port: int) -> list[str]:
        lookups.append(host)
        return ["127.0.0.1"]

    replies, _ = call(f"http://bot.example.com:{port}/", resolve=dns, times=3)
    assert all(reply.fault is None for reply in replies)
    assert [seen.headers["Host"] for seen in bot.moves_seen()] == [f"bot.example.com:{port}"] * 3
    assert lookups == ["bot.example.com"]  # one lookup per new connection, none per call


def test_dns_answer_mixing_public_and_private_is_refused_before_connecting(servers):
    bot = SimpleBot()
    port = servers.start_app(bot.app())

    async def dns(host: str, port: int) -> list[str]:
        return ["8.8.8.8", "127.0.0.1"]

    [reply], _ = call(f"http://bot.example.com:{port}/", resolve=dns, allow_private=False)
    assert reply.fault.kind == FaultKind.ADDRESS
    assert "127.0.0.1" in reply.fault.detail
    assert bot.seen == []


def test_every_new_connection_is_checked_again(servers):
    """A name that rebinds to a forbidden address is caught at the next connection."""
    bot = SimpleBot()
    port = servers.start_app(bot.app())
    answers = iter([["127.0.0.1"], ["169.254.169.254"]])

    async def dns(host: str, port: int) -> list[str]:
        return next(answers)

    async def main():
        client = BotClient(f"http://bot.example.com:{port}/", None, allow_private=True, resolve=dns)
        first = await client.move(sample_request(), 1000)
        await client.aclose()  # drops the connection; the next call must connect again
        second = await client.move(sample_request(), 1000)
        await client.aclose()
        return first, second

    first, second = asyncio.run(main())
    assert first.fault is None
    assert second.fault.kind == FaultKind.ADDRESS and "link-local" in second.fault.detail
    assert len(bot.moves_seen()) == 1


def test_requests_are_signed_with_the_bots_secret(servers):
    bot = SimpleBot(secret=SECRET)
    url = f"http://127.0.0.1:{servers.start_app(bot.app())}/"
    [signed], _ = call(url, secret=SECRET)
    [unsigned], _ = call(url)
    [wrong], _ = call(url, secret="whsec_" + "QUJD" * 8)
    assert signed.fault is None
    assert unsigned.fault.kind == wrong.fault.kind == FaultKind.HTTP_STATUS
    headers = bot.moves_seen()[0].headers
    assert headers["webhook-id"].startswith("msg_")
    assert abs(int(headers["webhook-timestamp"]) - time.time()) < 5
    assert headers["webhook-signature"].startswith("v1,")


@pytest.mark.parametrize("secret", [SECRET, SECRET.removeprefix("whsec_"), "whsec_c2hvcnQ"])
def test_signatures_are_those_of_the_standard_webhooks_package(secret):
    signer, webhook = Signer(secret), Webhook(secret)
    body = b'{"protocol":"escoba/1","table":["7o"],"name":"\xc3\xb1"}'
    headers = signer.headers(body, timestamp=1_700_000_000)
    expected = webhook.sign(
        headers["webhook-id"], datetime.fromtimestamp(1_700_000_000, UTC), body.decode()
    )
    assert headers["webhook-timestamp"] == "1700000000"
    assert headers["webhook-signature"] == expected
    # And a bot checking with the package accepts a fresh one.
    fresh = signer.headers(body)
    assert webhook.verify(body, fresh) == orjson.loads(body)
    with pytest.raises(Exception, match="signature"):
        Webhook("whsec_" + "QUJD" * 8).verify(body, fresh)


def test_message_ids_are_unique_per_signer_and_between_signers():
    first, second = Signer(SECRET), Signer(SECRET)
    ids = [signer.headers(b"{}")["webhook-id"] for signer in (first, second) for _ in range(100)]
    assert len(set(ids)) == 200
    assert all(msg_id.startswith("msg_") for msg_id in ids)


def test_many_calls_in_flight_against_slow_bots(servers):
    bots = [SimpleBot(delay=0.05) for _ in range(4)]
    urls = [f"http://127.0.0.1:{servers.start_app(bot.app())}/" for bot in bots]
    request = sample_request()

    async def main():
        async with Caller(allow_private=True) as caller:
            calls = [caller.client(urls[i % 4], None).move(request, 2000) for i in range(200)]
            return await asyncio.gather(*calls)

    started = time.perf_counter()
    replies = asyncio.run(main())
    seconds = time.perf_counter() - started
    assert all(reply.fault is None for reply in replies)
    assert seconds < 2.0  # 200 calls of 50 ms each, all in flight at once


def test_sync_helpers_for_the_registry(servers, hostile):
    base, _ = hostile
    bot = SimpleBot()
    url = f"http://127.0.0.1:{servers.start_app(bot.app())}/"

    ok = check_bot_info(url, None, 1000, allow_private=True)
    assert ok.ok and ok.reason == "ok" and ok.info.name == "simple" and ok.latency_ms > 0

    old = check_bot_info(f"{base}/wrong-protocol/", None, 1000, allow_private=True)
    assert old.fault.kind == FaultKind.WRONG_PROTOCOL and "escoba/0" in old.reason

    refused = check_bot_info(url, None, 1000, allow_private=False)
    assert refused.fault.kind == FaultKind.ADDRESS
    assert refused.reason.startswith("The bot's address is not allowed: ")

    down = check_bot_info(f"http://127.0.0.1:{closed_port()}/", None, 1000, allow_private=True)
    assert down.fault.kind == FaultKind.CONNECT
    assert down.reason.startswith("The bot is unreachable: ")

    slow = check_bot_info(f"{base}/silent/", None, 200, allow_private=True)
    assert slow.fault.kind == FaultKind.TIMEOUT

    reply = call_move(url, None, sample_request(), 1000, allow_private=True)
    assert reply.move == Move.from_wire(sample_request()["legal_moves"][0])


def test_sync_helper_works_inside_a_running_loop(servers):
    bot = SimpleBot()
    url = f"http://127.0.0.1:{servers.start_app(bot.app())}/"

    async def from_async_code():
        return check_bot_info(url, None, 1000, allow_private=True)

    assert asyncio.run(from_async_code()).ok


def test_connections_are_kept_per_bot_and_never_shared(hostile):
    """Two bots behind one host and port still get a connection each; one bot reuses its own."""
    base, bots = hostile
    before = bots.connections

    async def main():
        async with Caller(allow_private=True) as caller:
            first = caller.client(f"{base}/good/", None)
            second = caller.client(f"{base}/good/b/", None)
            assert caller.client(f"{base}/good/", None) is first  # the same bot in another seat
            replies = []
            for _ in range(3):
                replies.append(await first.move(sample_request(), 1000))
                replies.append(await second.move(sample_request(), 1000))
            return replies

    replies = asyncio.run(main())
    assert all(reply.fault is None for reply in replies)
    assert bots.connections - before == 2


def test_proxy_settings_in_the_environment_are_ignored(servers, monkeypatch):
    bot, proxy = SimpleBot(), SimpleBot()
    url = f"http://127.0.0.1:{servers.start_app(bot.app())}/"
    proxy_url = f"http://127.0.0.1:{servers.start_app(proxy.app())}"
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(name, proxy_url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    [reply], _ = call(url)
    assert reply.fault is None
    assert len(bot.moves_seen()) == 1 and proxy.seen == []
