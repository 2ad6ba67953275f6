"""The address policy: a table of hostile URLs, and DNS answers from an injected resolver."""

from __future__ import annotations

import asyncio

import pytest

from tournaments.bot_calls.addresses import AddressError, check_ip, parse_bot_url, resolve_checked

HOSTILE_URLS = [
    # 127.0.0.1 in every spelling resolvers have accepted
    "http://127.0.0.1/",
    "http://127.0.0.1./",
    "http://127.1/",
    "http://127.0.1/",
    "http://2130706433/",
    "http://0x7f000001/",
    "http://0x7f.0.0.1/",
    "http://0177.0.0.1/",
    "http://0177.0000.0000.0001/",
    "http://017700000001/",
    "http://127.000.000.001/",
    "http://１２７.０.０.１/",
    "http://127。0。0。1/",
    "http://①②⑦.⓪.⓪.①/",
    "http://١٢٧.٠.٠.١/",
    "http://0/",
    "http://0.0.0.0/",
    "http://0x7f.0x00.0x00.0x01/",
    "http://127.0.0.0x1/",
    "http://127.0.0.1.nip.io.127.0.0.1/",
    # IPv6 forms of loopback and of IPv4 inside IPv6
    "http://[::1]/",
    "http://[0:0:0:0:0:0:0:1]/",
    "http://[::]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://[::ffff:8.8.8.8]/",
    "http://[0:0:0:0:0:ffff:127.0.0.1]/",
    "http://[::ffff:0:127.0.0.1]/",
    "http://[::ffff:169.254.169.254]/",
    "http://[::127.0.0.1]/",
    "http://[64:ff9b::127.0.0.1]/",
    "http://[64:ff9b::a00:1]/",
    "http://[64:ff9b:1::1]/",
    "http://[2002:7f00:1::]/",
    "http://[2002:a9fe:a9fe::]/",
    "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
    "http://[fe80::1]/",
    "http://[fe80::1%25eth0]/",
    "http://[fc00::1]/",
    "http://[fd00:ec2::254]/",
    "http://[ff02::1]/",
    # private, shared, link-local, multicast, reserved, broadcast
    "http://10.0.0.1/",
    "http://172.16.5.4/",
    "http://192.168.1.1/",
    "http://100.64.0.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://224.0.0.1/",
    "http://240.0.0.1/",
    "http://255.255.255.255/",
    "http://198.18.0.1/",
    "http://192.0.2.1/",
    # names that point inside
    "http://localhost/",
    "http://LOCALHOST:8000/",
    "http://bot.localhost/",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://metadata/",
    "http://metadata.google.internal./",
    "http://instance-data/",
    "http://metadata.azure.internal/",
    "http://169.254.170.2/v2/credentials",
    "http://100.100.100.200/latest/meta-data/",
    "http://printer.local/",
    "http://intranet/",
    "http://router.home.arpa/",
    "http://1.0.0.127.in-addr.arpa/",
    # scheme, userinfo, ports, shape
    "ftp://bot.example.com/",
    "file:///etc/passwd",
    "gopher://bot.example.com/",
    "javascript:alert(1)",
    "//bot.example.com/",
    "bot.example.com",
    "http://user:pass@bot.example.com/",
    "http://bot.example.com@127.0.0.1/",
    "http://@bot.example.com/",
    "http://bot.example.com:0/",
    "http://bot.example.com:22/",
    "http://bot.example.com:65536/",
    "http://bot.example.com:８０８０/",
    "http://bot.example.com:-1/",
    "http://bot.example.com/?next=http://127.0.0.1/",
    "http://bot.example.com/#frag",
    "http://bot example.com/",
    "http://bot.example.com\\@127.0.0.1/",
    "http://bot.example.com/\r\nHost: evil",
    "http://bot_1.example.com/",
    "http://-bot.example.com/",
    "http://" + "a" * 64 + ".example.com/",
    "http://[::1/",
    "http://::1/",
    "",
]


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
