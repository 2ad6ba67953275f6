"""Security tests: two users with their own bots and leagues, and a guard that keeps every
connection on loopback whatever URL a fuzzer or a test registers."""

import ipaddress
import socket

import pytest
from rest_framework.throttling import SimpleRateThrottle

from tests.leagues.conftest import example_servers, make_bot
from tests.registry.conftest import other_client, other_user

__all__ = ["example_servers", "make_bot", "other_client", "other_user"]


@pytest.fixture
def rates(monkeypatch):
    """Set some throttle rates for one test (the others keep the settings' defaults)."""

    def set_rates(**scopes: str) -> None:
        for scope, rate in scopes.items():
            monkeypatch.setitem(SimpleRateThrottle.THROTTLE_RATES, scope, rate)

    return set_rates


def _is_loopback(host: object) -> bool:
    text = str(host).strip("[]")
    if text in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(text.split("%")[0]).is_loopback
    except ValueError:
        return False


@pytest.fixture
def loopback_only(monkeypatch):
    """No packet leaves the machine: names other than localhost do not resolve, and connecting
    to any address but loopback fails, as if the network were down."""
    real_getaddrinfo = socket.getaddrinfo
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def getaddrinfo(host, *args, **kwargs):
        if host is not None and not _is_loopback(host):
            raise socket.gaierror(socket.EAI_NONAME, f"{host}: not resolved in tests")
        return real_getaddrinfo(host, *args, **kwargs)

    def refuse(address) -> None:
        if isinstance(address, tuple) and not _is_loopback(address[0]):
            raise ConnectionRefusedError(f"{address[0]}: only loopback in tests")

    def connect(self, address):
        refuse(address)
        return real_connect(self, address)

    def connect_ex(self, address):
        refuse(address)
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
