"""The owner's sentences for the faults the real caller reports (real sockets on loopback)."""

import socket
import threading
from collections.abc import Iterator

import pytest

from games.faults import Fault, FaultKind
from tournaments import bot_messages
from tournaments.bot_calls.caller import check_bot_info
from tournaments.bot_messages import info_fault_message


def fault_of(url: str) -> Fault:
    result = check_bot_info(url, None, timeout_ms=2000, allow_private=True)
    assert result.fault is not None
    return result.fault


@pytest.fixture
def hang_up() -> Iterator[int]:
    """A port whose server reads the request, then closes without a word."""
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except TimeoutError:
                continue
            with connection:
                connection.recv(1024)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()


def test_a_host_that_does_not_resolve():
    url = "http://no-such-bot.invalid:8080/"
    message = info_fault_message(fault_of(url), url=url, secret_known_to_bot=False)
    assert message == bot_messages.CONNECT_NO_NAME.format(host="no-such-bot.invalid")


def test_a_server_that_hangs_up(hang_up):
    url = f"http://127.0.0.1:{hang_up}/"
    message = info_fault_message(fault_of(url), url=url, secret_known_to_bot=False)
    assert message == bot_messages.CONNECT_CLOSED.format(where=f"127.0.0.1:{hang_up}")


def test_https_to_a_server_that_does_not_speak_tls(hang_up):
    url = f"https://127.0.0.1:{hang_up}/"
    fault = fault_of(url)
    message = info_fault_message(fault, url=url, secret_known_to_bot=False)
    # The handshake dies either way: refused as TLS, or cut off by the hang-up.
    assert message in (
        bot_messages.CONNECT_TLS.format(where=f"127.0.0.1:{hang_up}", host="127.0.0.1"),
        bot_messages.CONNECT_CLOSED.format(where=f"127.0.0.1:{hang_up}"),
    )


@pytest.mark.parametrize(
    ("url", "where"),
    [
        ("http://bot.example.org/", "bot.example.org:80"),
        ("https://bot.example.org/v1/", "bot.example.org:443"),
        ("http://[2001:db8::1]:8001/", "[2001:db8::1]:8001"),
    ],
)
def test_host_and_port_are_shown_with_the_scheme_default(url, where):
    fault = Fault(FaultKind.CONNECT, "Cannot connect to host x ssl:default [Connect call failed]")
    assert info_fault_message(fault, url=url, secret_known_to_bot=False) == (
        bot_messages.CONNECT_REFUSED.format(where=where)
    )


def test_faults_already_in_our_words_keep_them():
    fault = Fault(FaultKind.TIMEOUT, "no complete answer within 500 ms")
    assert info_fault_message(fault, url="http://a.example/", secret_known_to_bot=True) == (
        fault.message
    )
