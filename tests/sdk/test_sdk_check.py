"""`check` against live bots on loopback: a good bot passes, each kind of bad bot fails and the
report says why; the pinned positions still are what their names say."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bots_sdk import run_check, serve_in_thread
from bots_sdk.examples import expert, greedy
from games.protocol_check import FAIL, PASS, POSITIONS, WARN
from tests.fakebots.http_bots import FakeBot, fake_bot, trail_first_card

ROOT = Path(__file__).resolve().parents[2]
SECRET = "whsec_" + "Y2hlY2stdGVzdC1zZWNyZXQtdmFsdWU="


@pytest.mark.parametrize("position", POSITIONS, ids=lambda p: p.name)
def test_pinned_positions_are_what_they_say(position):
    game = position.game()
    assert not game.is_over
    assert position.holds(game)


def test_positions_cover_the_issue_list():
    names = {position.name for position in POSITIONS}
    assert names == {
        "forced capture",
        "several ways to make 15",
        "sweep",
        "empty table",
        "last play of the round",
    }


def test_a_good_bot_passes():
    with serve_in_thread(greedy.choose) as handle:
        report = run_check(handle.url)
    assert report.ok, report.to_text()
    by_name = {result.name: result for result in report.results}
    assert by_name["info"].status == PASS
    assert [r.name for r in report.results if r.name.startswith("move:")] == [
        f"move: {position.name}" for position in POSITIONS
    ]
    assert all(r.status == PASS for r in report.results)
    summary = report.to_dict()
    assert summary["ok"] is True
    assert 0 < summary["latency_ms"]["median"] < 50


def test_a_signed_bot_passes_with_its_secret_and_fails_without_it():
    with serve_in_thread(expert.choose, secret=SECRET) as handle:
        signed = run_check(handle.url, secret=SECRET)
        unsigned = run_check(handle.url)
    assert signed.ok, signed.to_text()
    assert {r.name: r.status for r in signed.results}["signature"] == PASS
    assert not unsigned.ok
    assert "give its secret with --secret" in unsigned.failures[0].detail


class RefusesUnsigned(FakeBot):
    """A strict bot (the Node.js starter's way): 401 to every call without a signature."""

    def do_GET(self) -> None:
        if "webhook-signature" in self.headers:
            return FakeBot.do_GET(self)
        self.send_response(401)
        self.send_header("Content-Length", "0")
        self.end_headers()


def test_the_hint_for_a_secret_is_on_the_first_line_when_get_is_refused():
    """Issue 39: a bot that refuses even the unsigned GET / says at once what to do."""
    with fake_bot(do_GET=RefusesUnsigned.do_GET) as url:
        report = run_check(url)
    first = report.results[0]
    assert (first.name, first.status) == ("info", FAIL)
    assert (
        first.detail
        == "GET answered HTTP 401 (the bot checks signatures: give its secret with --secret)"
    )
    assert "give its secret with --secret" in report.to_text().splitlines()[1]
    with fake_bot(do_GET=RefusesUnsigned.do_GET) as url:
        signed = run_check(url, secret=SECRET)
    assert signed.results[0].status == PASS  # with the secret, the same bot answers


def test_a_bot_that_ignores_signatures_gets_a_warning_only():
    with serve_in_thread(greedy.choose) as handle:
        report = run_check(handle.url, secret=SECRET)
    assert report.ok
    assert {r.name: r.status for r in report.results}["signature"] == WARN


def first_hand_card_of_next_seat(body: dict) -> bytes:
    unknown = {"1o", "2o", "3o", "4o", "5o", "6o", "7o"} - set(body["you"]["hand"])
    return json.dumps({"card": sorted(unknown)[0]}).encode()


@pytest.mark.parametrize(
    "behaviour, failing, reason",
    [
        ({"answer": staticmethod(trail_first_card)}, "move: forced capture", "must_capture"),
        (
            {"answer": staticmethod(first_hand_card_of_next_seat)},
            "move: forced capture",
            "card_not_in_hand",
        ),
        (
            {"answer": staticmethod(lambda body: b"seven of oros")},
            "move: forced capture",
            "not JSON",
        ),
        (
            {"answer": staticmethod(lambda body: b'{"move": "7o"}')},
            "move: forced capture",
            "missing 'card'",
        ),
        ({"info": {"protocol": "escoba/0", "name": "old"}}, "info", "escoba/1"),
        ({"info": ["escoba/1"]}, "info", "expected object"),
    ],
)
def test_a_bad_bot_fails_and_the_report_says_why(behaviour, failing, reason):
    with fake_bot(**behaviour) as url:
        report = run_check(url)
    assert not report.ok
    failure = next(r for r in report.results if r.name == failing)
    assert failure.status == FAIL
    assert reason in failure.detail, report.to_text()


def test_a_slow_bot_fails_on_latency():
    with fake_bot(answer=staticmethod(trail_first_card), delay_s=0.15) as url:
        report = run_check(url, timeout_ms=100)
    moves = [r for r in report.results if r.name.startswith("move:")]
    assert moves and all(r.status == FAIL for r in moves)
    assert all(r.detail == "no complete answer within 100 ms" for r in moves)


def test_an_unreachable_bot_fails_at_once():
    with fake_bot() as url:
        pass  # the port is closed again
    started = time.perf_counter()
    report = run_check(url)
    assert time.perf_counter() - started < 3
    assert [r.name for r in report.results] == ["info"]
    assert "unreachable" in report.results[0].detail


class DripBot(FakeBot):
    """Answers `GET /` properly, then drips every POST reply a byte at a time.

    `header` decides where the drip happens: in the header block, or in a body promised whole.
    """

    header = False

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        if self.header:
            self.wfile.write(b"HTTP/1.1 200 OK\r\n")
        else:
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
        try:
            for _ in range(500):  # 10 s at most, far beyond any deadline here
                self.wfile.write(b"X" if self.header else b" ")
                time.sleep(0.02)
        except OSError:
            pass


@pytest.mark.parametrize("header", [False, True], ids=["drip-body", "drip-headers"])
def test_a_dripping_bot_is_cut_off_at_one_total_deadline_per_request(header):
    with fake_bot(do_POST=DripBot.do_POST, header=header) as url:
        started = time.perf_counter()
        report = run_check(url, timeout_ms=200)
        seconds = time.perf_counter() - started
    moves = [r for r in report.results if r.name.startswith("move:")]
    assert len(moves) == len(POSITIONS)
    assert all(r.status == FAIL and r.detail == "no complete answer within 200 ms" for r in moves)
    assert not report.ok
    # Five moves and two notices, each cut off at 200 ms though bytes keep arriving every 20 ms.
    assert seconds < 7 * 0.2 + 0.8, report.to_text()


@pytest.mark.parametrize(
    "url, secret, message",
    [
        ("ftp://example.invalid/bot", None, "not an http(s) URL"),
        ("http://127.0.0.1:99999", None, "out of range"),
        ("http://127.0.0.1:9", "whsec_", "whsec_"),
    ],
)
def test_bad_input_is_reported_not_raised(url, secret, message):
    report = run_check(url, secret=secret)
    assert not report.ok
    assert message in report.results[0].detail


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bots_sdk", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_cli_check_exits_0_for_a_good_bot_and_1_for_a_bad_one():
    with serve_in_thread(greedy.choose) as handle:
        good = run_cli("check", handle.url)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "result: OK" in good.stdout
    with fake_bot(answer=staticmethod(trail_first_card)) as url:
        bad = run_cli("check", url, "--json")
    assert bad.returncode == 1
    report = json.loads(bad.stdout)
    assert report["ok"] is False
    assert any("must_capture" in r["detail"] for r in report["results"])
