"""The address policy: a table of hostile URLs, and DNS answers from an injected resolver."""

from __future__ import annotations

import asyncio

import pytest

from tests.bots.hostile_urls import HOSTILE_URLS
from tournaments.bot_calls.addresses import AddressError, check_ip, parse_bot_url, resolve_checked


@pytest.mark.parametrize("url", HOSTILE_URLS)
def test_hostile_url_is_refused(url):
    with pytest.raises(AddressError):
        parse_bot_url(url)


@pytest.mark.parametrize(
    "url, host, port, endpoint",
    [
        ("http://bot.example.com/", "bot.example.com", 80, "http://bot.example.com/move"),
        (
            "https://Bot.Example.com:8443/v1/",
            "bot.example.com",
            8443,
            "https://bot.example.com:8443/v1/move",
        ),
        ("http://bot.example.com./a", "bot.example.com", 80, "http://bot.example.com/a/move"),
        ("https://ｂｏｔ.example.com", "bot.example.com", 443, "https://bot.example.com/move"),
        (
            "https://bücher.example/",
            "xn--bcher-kva.example",
            443,
            "https://xn--bcher-kva.example/move",
        ),
        ("http://8.8.8.8:8001/", "8.8.8.8", 8001, "http://8.8.8.8:8001/move"),
        (
            "http://[2606:4700::1111]:8001",
            "2606:4700::1111",
            8001,
            "http://[2606:4700::1111]:8001/move",
        ),
        ("http://[2002:808:808::1]/", "2002:808:808::1", 80, "http://[2002:808:808::1]/move"),
    ],
)
def test_public_url_is_accepted_and_normalised(url, host, port, endpoint):
    target = parse_bot_url(url)
    assert (target.host, target.port) == (host, port)
    assert target.endpoint("move") == endpoint


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8001/",
        "http://localhost:8001/",
        "http://[::1]:8001/",
        "http://10.1.2.3/",
        "http://bot:8001/",
        "http://[::ffff:127.0.0.1]:8001/",
    ],
)
def test_allow_private_permits_development_urls(url):
    parse_bot_url(url, allow_private=True)


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/",
        "http://metadata.google.internal/",
        "http://[fd00:ec2::254]/",
        "http://0.0.0.0:8001/",
        "http://[::]:8001/",
        "http://224.0.0.1/",
        "http://[fe80::1]/",
        "http://100.100.100.200/",
        "http://[::ffff:169.254.169.254]/",
        "http://2130706433/",
    ],
)
def test_allow_private_still_refuses_metadata_and_nonsense(url):
    with pytest.raises(AddressError):
        parse_bot_url(url, allow_private=True)


def test_reason_names_the_problem():
    with pytest.raises(AddressError, match="loopback"):
        parse_bot_url("http://[::1]/")
    with pytest.raises(AddressError, match="NAT64 address embedding a private"):
        parse_bot_url("http://[64:ff9b::10.0.0.1]/")
    with pytest.raises(AddressError, match="metadata"):
        parse_bot_url("http://metadata.google.internal/")


def fake_dns(*answers: str, calls: list | None = None):
    async def resolve(host: str, port: int) -> list[str]:
        if calls is not None:
            calls.append((host, port))
        return list(answers)

    return resolve


def resolve(url: str, *answers: str, allow_private: bool = False, calls=None):
    target = parse_bot_url(url, allow_private=allow_private)
    return asyncio.run(
        resolve_checked(
            target, allow_private=allow_private, resolve=fake_dns(*answers, calls=calls)
        )
    )


@pytest.mark.parametrize(
    "answers",
    [
        ("127.0.0.1",),
        ("8.8.8.8", "127.0.0.1"),
        ("8.8.8.8", "10.0.0.7"),
        ("2606:4700::1111", "::1"),
        ("8.8.8.8", "::ffff:127.0.0.1"),
        ("8.8.8.8", "fe80::1%2"),
        ("169.254.169.254",),
        ("1.1.1.1", "100.64.1.1"),
    ],
)
def test_dns_answer_with_any_private_address_is_refused(answers):
    with pytest.raises(AddressError, match="resolves to"):
        resolve("http://bot.example.com/", *answers)


def test_dns_answers_all_public_are_returned_once_each():
    calls: list = []
    addresses = resolve(
        "https://bot.example.com:8443/", "8.8.8.8", "8.8.8.8", "2606:4700::1111", calls=calls
    )
    assert [str(ip) for ip in addresses] == ["8.8.8.8", "2606:4700::1111"]
    assert calls == [("bot.example.com", 8443)]


def test_empty_or_garbage_dns_answer_is_an_os_error():
    with pytest.raises(OSError):
        resolve("http://bot.example.com/")
    with pytest.raises(OSError):
        resolve("http://bot.example.com/", "not-an-address")


def test_ip_literal_is_not_resolved():
    calls: list = []
    assert [str(ip) for ip in resolve("http://8.8.8.8/", "127.0.0.1", calls=calls)] == ["8.8.8.8"]
    assert calls == []


def test_allow_private_resolves_to_loopback():
    assert [str(ip) for ip in resolve("http://bot:8001/", "127.0.0.1", allow_private=True)] == [
        "127.0.0.1"
    ]


def test_check_ip():
    assert str(check_ip("8.8.8.8")) == "8.8.8.8"
    with pytest.raises(AddressError):
        check_ip("192.168.0.1")
    with pytest.raises(AddressError):
        check_ip("nonsense")
