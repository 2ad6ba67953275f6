"""The protocol check is written once (`games.protocol_check`): through the service's async caller
and through the SDK's standard-library client it sends the same requests and writes the same
report about the same bot."""

from __future__ import annotations

import asyncio

import pytest

from bots_sdk import Bot, run_check, serve_in_thread
from bots_sdk.examples import greedy
from games.protocol_check import FAIL, PASS, POSITIONS, CheckReport
from tests.fakebots.http_bots import fake_bot, trail_first_card
from tournaments.bot_calls.caller import run_protocol_check

SECRET = "whsec_" + "dHJhbnNwb3J0LXRlc3Qtc2VjcmV0"
TIMEOUT_MS = 1000


def server_check(url: str, secret: str | None = None, timeout_ms: int = TIMEOUT_MS) -> CheckReport:
    report = CheckReport(url=url, timeout_ms=timeout_ms)
    return asyncio.run(run_protocol_check(report, secret=secret, allow_private=True))


def lines(report: CheckReport) -> list[tuple[str, str, str]]:
    return [(r.name, r.status, r.detail) for r in report.results]


@pytest.mark.parametrize("secret", [None, SECRET])
def test_a_good_bot_gets_the_same_report_from_both_transports(secret):
    with serve_in_thread(greedy.choose, secret=secret) as handle:
        sdk, server = run_check(handle.url, secret=secret), server_check(handle.url, secret)
    assert sdk.ok and server.ok, server.to_text()
    assert lines(sdk) == lines(server)
    assert [name for name, _, _ in lines(server)][1 : 1 + len(POSITIONS)] == [
        f"move: {position.name}" for position in POSITIONS
    ]
    if secret is not None:
        assert lines(server)[-1][:2] == ("signature", PASS)


def test_an_unsigned_check_of_a_signing_bot_fails_the_same_way():
    with serve_in_thread(greedy.choose, secret=SECRET) as handle:
        sdk, server = run_check(handle.url), server_check(handle.url)
    assert lines(sdk) == lines(server)
    assert all(d.startswith("HTTP 401") for n, s, d in lines(server) if n.startswith("move:"))
    assert ("notice: /end", "warn", "HTTP 401 (ignored by the arena)") in lines(server)


def test_a_wrong_bot_is_judged_the_same_by_both_transports():
    with fake_bot(answer=staticmethod(trail_first_card)) as url:
        sdk, server = run_check(url), server_check(url)
    assert lines(sdk) == lines(server)
    by_name = {name: (status, detail) for name, status, detail in lines(server)}
    assert by_name["move: forced capture"][0] == FAIL
    assert "must_capture" in by_name["move: forced capture"][1]


def test_the_server_transport_refuses_a_private_address_without_calling_it():
    calls = []
    with serve_in_thread(Bot(lambda state: calls.append(state) or state.legal_moves[0])) as handle:
        report = CheckReport(url=handle.url, timeout_ms=TIMEOUT_MS)
        asyncio.run(run_protocol_check(report, secret=None, allow_private=False))
    assert lines(report) == [
        ("url", FAIL, "The bot's address is not allowed: 127.0.0.1 is a loopback address")
    ]
    assert calls == []
