"""The bot server over real loopback HTTP: routes, keep-alive, latency, signatures, errors."""

from __future__ import annotations

import json
import select
import socket
import statistics
import time
from datetime import timedelta

import pytest

from bots_sdk import Bot, Move, serve_in_thread
from bots_sdk.examples import greedy
from bots_sdk.server import ReplayGuard, make_server
from tests.sdk.signed import SECRET, signed_headers


def first_move(state):
    return state.legal_moves[0]


@pytest.fixture
def server():
    with serve_in_thread(Bot(first_move, name="first", author="tests", version="2")) as handle:
        yield handle


@pytest.fixture
def signed_server():
    with serve_in_thread(first_move, secret=SECRET) as handle:
        yield handle


def test_info_names_the_bot(server, connect):
    status, info = connect(server.url).call("GET", "/")
    assert status == 200
    assert info == {"protocol": "escoba/1", "name": "first", "author": "tests", "version": "2"}


def test_a_plain_function_is_named_after_its_module():
    with serve_in_thread(greedy.choose) as handle:
        assert handle.server.bot.info()["name"] == "greedy"


def test_move_answers_a_legal_move_on_a_kept_alive_connection(server, connect, sample_request):
    client = connect(server.url)
    replies = []
    for _ in range(20):
        status, reply = client.call("POST", "/move", sample_request)
        assert status == 200
        replies.append(reply)
        if len(replies) == 1:
            first_socket = client.connection.sock
    assert client.connection.sock is first_socket  # one TCP connection for all 20 calls
    assert replies[0] == {"card": "3c", "capture": ["3b", "4b", "5e"]}


def test_move_latency_is_far_below_the_nagle_delay(server, connect, sample_request):
    """Plain http.server costs ~44 ms a call on keep-alive; ours must stay well under 1 ms-ish."""
    client = connect(server.url)
    client.call("POST", "/move", sample_request)
    timings = []
    for _ in range(100):
        started = time.perf_counter()
        status, _ = client.call("POST", "/move", sample_request)
        timings.append((time.perf_counter() - started) * 1000)
        assert status == 200
    assert statistics.median(timings) < 5
    assert max(timings) < 40


def test_each_response_is_a_single_write_with_content_length(server, sample_request):
    """Headers and body must arrive together: one recv gets the whole response."""
    body = json.dumps(sample_request).encode()
    host, port = server.server.server_address[:2]
    with socket.create_connection((host, port), timeout=5) as sock:
        request = (
            f"POST /move HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body
        )
        sock.sendall(request)
        data = sock.recv(65536)  # whatever arrived in the first segment
    head, _, payload = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200")
    length = int(
        next(
            line.split(b":")[1]
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        )
    )
    assert len(payload) == length
    assert json.loads(payload)["card"] == "3c"


def test_a_string_answer_is_accepted(connect, sample_request):
    with serve_in_thread(lambda state: "10b:5e") as handle:
        status, reply = connect(handle.url).call("POST", "/move", sample_request)
    assert (status, reply) == (200, {"card": "10b", "capture": ["5e"]})


def test_base_url_with_a_path_and_trailing_slash(server, connect, sample_request):
    status, _ = connect(server.url).call("POST", "/move/", sample_request)
    assert status == 200


def test_bad_json_is_a_400(server, connect):
    status, reply = connect(server.url).call("POST", "/move", raw=b"{not json")
    assert status == 400
    assert "not valid JSON" in reply["error"]


def test_a_body_breaking_the_protocol_is_a_400_naming_the_field(server, connect, sample_request):
    client = connect(server.url)
    del sample_request["you"]["hand"]
    status, reply = client.call("POST", "/move", sample_request)
    assert status == 400
    assert "hand" in reply["error"]
    sample_request["you"]["hand"] = ["3c"]
    sample_request["protocol"] = "escoba/2"
    status, reply = client.call("POST", "/move", sample_request)
    assert status == 400
    assert "escoba/1" in reply["error"]


def test_unknown_routes_are_404(server, connect):
    assert connect(server.url).call("GET", "/nope")[0] == 404
    assert connect(server.url).call("POST", "/nope", {})[0] == 404


def test_a_bot_that_raises_gets_a_500_and_the_server_keeps_serving(connect, sample_request):
    calls = []

    def flaky(state):
        calls.append(1)
        if len(calls) == 1:
            raise ZeroDivisionError("oops")
        return state.legal_moves[-1]

    with serve_in_thread(flaky) as handle:
        client = connect(handle.url)
        status, reply = client.call("POST", "/move", sample_request)
        assert status == 500
        assert reply["error"] == "choose raised ZeroDivisionError: oops"
        status, reply = client.call("POST", "/move", sample_request)
        assert (status, reply) == (200, {"card": "10b", "capture": ["5e"]})


@pytest.mark.parametrize(
    "answer, message",
    [
        (Move.from_str("10b"), "not a legal move"),
        ("7o:1e", "not a legal move"),
        ("7x", "choose returned '7x'"),
        (None, "must return a Move"),
    ],
)
def test_an_unusable_answer_is_a_500_that_says_why(connect, sample_request, answer, message):
    with serve_in_thread(lambda state: answer) as handle:
        status, reply = connect(handle.url).call("POST", "/move", sample_request)
    assert status == 500
    assert message in reply["error"]


def test_notifications_reach_their_hooks(connect):
    seen = []
    bot = Bot(
        first_move,
        on_start=lambda body: seen.append(("start", body["game"]["id"])),
        on_end=lambda body: seen.append(("end", body["result"]["winner"])),
    )
    with serve_in_thread(bot) as handle:
        client = connect(handle.url)
        assert client.call("POST", "/start", {"game": {"id": "9"}}) == (200, {"ok": True})
        assert client.call("POST", "/end", {"result": {"winner": 1}}) == (200, {"ok": True})
    assert seen == [("start", "9"), ("end", 1)]


def test_a_signed_request_is_accepted(signed_server, connect, sample_request):
    body = json.dumps(sample_request).encode()
    status, _ = connect(signed_server.url).call(
        "POST", "/move", raw=body, headers=signed_headers(body)
    )
    assert status == 200


def test_info_needs_no_signature(signed_server, connect):
    """The registry calls GET before the bot has its secret, so GET is never checked."""
    assert connect(signed_server.url).call("GET", "/")[0] == 200


@pytest.mark.parametrize(
    "tamper",
    [
        "missing",
        "wrong secret",
        "replayed 10 minutes later",
        "body changed",
        "garbage",
    ],
)
def test_a_bad_signature_is_a_401(signed_server, connect, sample_request, tamper):
    body = json.dumps(sample_request).encode()
    headers = signed_headers(body)
    if tamper == "missing":
        headers = {"Content-Type": "application/json"}
    elif tamper == "wrong secret":
        headers = signed_headers(body, secret="whsec_" + "b3RoZXItc2VjcmV0LXZhbHVl")
    elif tamper == "replayed 10 minutes later":
        headers = signed_headers(body, age=timedelta(minutes=10))
    elif tamper == "body changed":
        body = body.replace(b'"41"', b'"42"')
    else:
        headers["webhook-signature"] = "v1"
    client = connect(signed_server.url)
    status, reply = client.call("POST", "/move", raw=body, headers=headers)
    assert status == 401
    assert reply["error"].startswith("bad signature")
    # The connection survives a refused call.
    good = json.dumps(sample_request).encode()
    assert client.call("POST", "/move", raw=good, headers=signed_headers(good))[0] == 200


def test_a_replayed_request_is_a_401(signed_server, connect, sample_request):
    """A captured request sent again, signature and all, within the 5 minutes tolerance."""
    body = json.dumps(sample_request).encode()
    headers = signed_headers(body)
    client = connect(signed_server.url)
    assert client.call("POST", "/move", raw=body, headers=headers)[0] == 200
    status, reply = connect(signed_server.url).call("POST", "/move", raw=body, headers=headers)
    assert status == 401 and reply["error"].startswith("replayed")
    assert client.call("POST", "/move", raw=body, headers=signed_headers(body))[0] == 200


def test_the_replay_guard_forgets_ids_after_its_window():
    guard = ReplayGuard(window_s=0.05)
    assert guard.first_use("msg_1") and not guard.first_use("msg_1")
    time.sleep(0.06)
    assert guard.first_use("msg_2")
    assert guard.first_use("msg_1")  # forgotten: the signature's own timestamp check takes over
    assert len(guard._seen) == 2


def test_stop_closes_idle_kept_alive_connections(connect, sample_request):
    handle = serve_in_thread(first_move)
    client = connect(handle.url)
    assert client.call("POST", "/move", sample_request)[0] == 200
    started = time.perf_counter()
    handle.stop()
    assert time.perf_counter() - started < 2
    assert not handle.thread.is_alive()


def test_ipv6_loopback(connect, sample_request):
    if not socket.has_ipv6:
        pytest.skip("no IPv6")
    try:
        handle = serve_in_thread(first_move, host="::1")
    except OSError:
        pytest.skip("::1 not available")
    with handle:
        assert handle.url.startswith("http://[::1]:")
        assert connect(handle.url).call("POST", "/move", sample_request)[0] == 200


def test_a_burst_of_connections_is_queued_for_the_server_not_dropped():
    """An arena starting many games at once connects to a bot many times in the same instant.
    Before the server accepts any of them (it is not even serving here), the kernel must have
    taken the whole burst: a connection whose SYN is dropped is retried a second later, and its
    first move is a second late."""
    server = make_server(first_move, port=0)
    burst = [socket.socket() for _ in range(64)]
    try:
        for sock in burst:
            sock.setblocking(False)
            sock.connect_ex(server.server_address)
        _, connected, _ = select.select([], burst, [], 0.5)
        assert len(connected) == len(burst)
    finally:
        for sock in burst:
            sock.close()
        server.server_close()


def test_a_move_request_is_stamped_when_it_arrives_not_when_choose_runs(sample_request):
    """A bot that budgets its time must count what passed before `choose` ran: the state
    carries the moment the request line arrived. Here the rest of the request comes 300 ms
    after its first line; `choose` sees those 300 ms already gone."""
    waited: list[float] = []

    def timed(state):
        waited.append(time.perf_counter() - state.received_at)
        return state.legal_moves[0]

    body = json.dumps(sample_request).encode()
    with (
        serve_in_thread(timed) as handle,
        socket.create_connection(handle.server.server_address, timeout=5) as sock,
    ):
        sock.sendall(b"POST /move HTTP/1.1\r\n")
        time.sleep(0.3)
        sock.sendall(
            b"Host: bot\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        assert sock.recv(4096).startswith(b"HTTP/1.1 200 ")
    assert len(waited) == 1 and 0.25 <= waited[0] < 2
