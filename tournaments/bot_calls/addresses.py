"""Which bot URLs we may call, and which addresses we may connect to.

A bot URL is hostile input: registered by anyone, it must not turn our workers into a way to reach
our own network, the loopback interface or a cloud metadata service. Two checks, used together:

- `parse_bot_url` checks the URL as text: http/https only, no userinfo, query or fragment, a sane
  port, a host that is either a canonical IP literal or a plain DNS name. Legacy numeric forms
  (`2130706433`, `0177.0.0.1`, `0x7f.1`, `127.1`) are refused rather than guessed at, because
  resolvers disagree about them. Unicode hosts go through IDNA (UTS 46), which also folds
  full-width and other compatibility digits to ASCII before the numeric check.
- `resolve_checked` resolves a name once and checks every answer; one non-public answer taints the
  whole name (an attacker controlling DNS could otherwise mix a public decoy with an internal
  target). The caller connects to exactly the addresses returned, so there is no second lookup to
  rebind.

`allow_private=True` (the `ESCOBA_ALLOW_PRIVATE_BOT_URLS` setting, for development and tests)
permits loopback, private and shared addresses and single-label names; link-local, multicast,
unspecified and cloud metadata addresses and names stay refused even then.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
import unicodedata
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

import idna

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# A resolver takes (host, port) and returns the IP address strings it found.
Resolve = Callable[[str, int], Awaitable[Sequence[str]]]

MAX_URL_LENGTH = 2000
DEFAULT_PORTS = {"http": 80, "https": 443}


class AddressError(ValueError):
    """A bot URL or address we refuse to call; `str(error)` is the reason, fit for users."""


@dataclass(frozen=True)
class BotURL:
    """A checked bot base URL. `host` is lower-case ASCII (IPv6 without brackets)."""

    scheme: str
    host: str
    port: int
    path: str
    ip: IPAddress | None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if self.ip is not None and self.ip.version == 6 else self.host
        port = "" if DEFAULT_PORTS[self.scheme] == self.port else f":{self.port}"
        return f"{self.scheme}://{host}{port}{self.path or '/'}"

    def endpoint(self, name: str) -> str:
        """`U/name`: the base URL with any trailing `/` removed, then `/name`."""
        return f"{self.url.rstrip('/')}/{name}"


Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _nets(*pairs: tuple[str, str]) -> list[tuple[Network, str]]:
    return [(ipaddress.ip_network(net), label) for net, label in pairs]


# Refused even with allow_private: nothing legitimate lives there, and metadata services do.
ALWAYS_REFUSED = _nets(
    ("0.0.0.0/8", "an unspecified address"),
    ("169.254.0.0/16", "a link-local address"),
    ("100.100.100.200/32", "a cloud metadata address"),
    ("224.0.0.0/4", "a multicast address"),
    ("240.0.0.0/4", "a reserved address"),
    ("::/128", "an unspecified address"),
    ("fe80::/10", "a link-local address"),
    ("fd00:ec2::254/128", "a cloud metadata address"),
    ("ff00::/8", "a multicast address"),
)

# Refused unless allow_private. Anything else that Python does not call global is refused too.
NOT_PUBLIC = _nets(
    ("10.0.0.0/8", "a private address"),
    ("100.64.0.0/10", "a shared (CGNAT) address"),
    ("127.0.0.0/8", "a loopback address"),
    ("172.16.0.0/12", "a private address"),
    ("192.0.0.0/24", "an IETF protocol address"),
    ("192.0.2.0/24", "a documentation address"),
    ("192.88.99.0/24", "a 6to4 relay address"),
    ("192.168.0.0/16", "a private address"),
    ("198.18.0.0/15", "a benchmarking address"),
    ("198.51.100.0/24", "a documentation address"),
    ("203.0.113.0/24", "a documentation address"),
    ("::1/128", "a loopback address"),
    ("::ffff:0:0:0/96", "an IPv4-translated address"),
    ("64:ff9b:1::/48", "a local NAT64 address"),
    ("100::/64", "a discard address"),
    ("2001:db8::/32", "a documentation address"),
    ("fc00::/7", "a unique local (private) address"),
    ("fec0::/10", "a site-local address"),
)

_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_SIXTOFOUR = ipaddress.ip_network("2002::/16")
_COMPATIBLE = ipaddress.ip_network("::/96")

# Names that point inside whatever network resolves them.
METADATA_NAMES = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.azure.internal",
        "metadata.tencentyun.com",
    }
)
PRIVATE_SUFFIXES = ("localhost", "local", "internal", "localdomain", "home.arpa", "lan", "arpa")

_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
_NUMERIC_LABEL = re.compile(r"^(?:0x[0-9a-f]*|[0-9]+)$")
_DECIMAL_OCTET = re.compile(r"^(?:0|[1-9][0-9]{0,2})$")
_PORT = re.compile(r"^[0-9]{1,5}$")
_FORBIDDEN_CHARS = re.compile(r"[\x00-\x20\x7f\\]")


def ip_problem(ip: IPAddress, *, allow_private: bool = False) -> str | None:
    """Why we may not connect to `ip` ("a loopback address"), or None when we may."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.scope_id:
            return "a scoped IPv6 address"
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            kind, ipv4, always_refused = embedded
            if always_refused and not allow_private:
                return f"{kind} address"
            problem = ip_problem(ipv4, allow_private=allow_private)
            return f"{kind} address embedding {problem}" if problem else None
    for network, label in ALWAYS_REFUSED:
        if ip in network:
            return label
    if allow_private:
        return None
    for network, label in NOT_PUBLIC:
        if ip in network:
            return label
    if not ip.is_global:
        return "not a public address"
    return None


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> tuple[str, ipaddress.IPv4Address, bool] | None:
    """The IPv4 address hidden in an IPv6 form that reaches IPv4 hosts, if any.

    The flag says whether the form is refused outright (unless allow_private): IPv4-mapped,
    IPv4-compatible and Teredo addresses have no business in a bot URL, while NAT64 and 6to4
    addresses are refused only when the IPv4 address inside is.
    """
    if ip.ipv4_mapped is not None:
        return "an IPv4-mapped", ip.ipv4_mapped, True
    if ip in _COMPATIBLE and int(ip) > 1:
        return "an IPv4-compatible", ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF), True
    if ip.teredo is not None:
        return "a Teredo", ip.teredo[1], True
    if ip in _NAT64:
        return "a NAT64", ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF), False
    if ip.sixtofour is not None:
        return "a 6to4", ip.sixtofour, False
    return None


def check_ip(address: str | IPAddress, *, allow_private: bool = False) -> IPAddress:
    """Parse and check one address; `AddressError` when we may not connect to it."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError as error:
        raise AddressError(f"{address!r} is not an IP address") from error
    problem = ip_problem(ip, allow_private=allow_private)
    if problem:
        raise AddressError(f"{ip} is {problem}")
    return ip


def parse_bot_url(url: str, *, allow_private: bool = False) -> BotURL:
    """Check a bot base URL as text (no DNS); `AddressError` says what is wrong with it."""
    if not isinstance(url, str) or not url:
        raise AddressError("the URL is empty")
    if len(url) > MAX_URL_LENGTH:
        raise AddressError(f"the URL is longer than {MAX_URL_LENGTH} characters")
    if _FORBIDDEN_CHARS.search(url):
        raise AddressError("the URL contains spaces, control characters or backslashes")
    try:
        parts = urlsplit(url)
    except ValueError as error:
        raise AddressError(f"the URL cannot be parsed: {error}") from error
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise AddressError("only http and https URLs are allowed")
    if parts.query or parts.fragment or url.endswith(("?", "#")):
        raise AddressError("a bot URL has no query or fragment")
    netloc = parts.netloc
    if "@" in netloc:
        raise AddressError("a bot URL has no user name or password")
    raw_host, port = _split_host_port(netloc, DEFAULT_PORTS[scheme])
    host, ip = _normalise_host(raw_host)
    if ip is not None:
        check_ip(ip, allow_private=allow_private)
    else:
        _check_name(host, allow_private=allow_private)
    return BotURL(scheme=scheme, host=host, port=port, path=parts.path, ip=ip)


def _split_host_port(netloc: str, default_port: int) -> tuple[str, int]:
    if netloc.startswith("["):
        end = netloc.find("]")
        if end < 0:
            raise AddressError("unclosed [ in the host")
        host, rest = netloc[: end + 1], netloc[end + 1 :]
        if rest and not rest.startswith(":"):
            raise AddressError("unexpected text after the IPv6 address")
        port_text = rest[1:] if rest else None
    elif netloc.count(":") > 1:
        raise AddressError("IPv6 addresses must be written in brackets")
    else:
        host, _, port_text = netloc.partition(":")
        port_text = port_text if ":" in netloc else None
    if not host:
        raise AddressError("the URL has no host")
    if port_text is None:
        return host, default_port
    if not _PORT.match(port_text):
        raise AddressError("the port is not a number")
    port = int(port_text)
    if not 1 <= port <= 65535:
        raise AddressError("the port is out of range")
    if port < 1024 and port not in (80, 443):
        raise AddressError("ports below 1024 other than 80 and 443 are not allowed")
    return host, port


def _normalise_host(raw: str) -> tuple[str, IPAddress | None]:
    """Lower-case ASCII host and its IP address if it is a literal; refuse anything ambiguous."""
    if raw.startswith("["):
        inner = raw[1:-1]
        if "%" in inner:
            raise AddressError("scoped IPv6 addresses are not allowed")
        try:
            ip = ipaddress.IPv6Address(inner)
        except ValueError as error:
            raise AddressError("the host is not a valid IPv6 address") from error
        return str(ip), ip
    host = raw
    if not host.isascii():
        try:
            host = idna.encode(unicodedata.normalize("NFKC", host), uts46=True).decode("ascii")
        except idna.IDNAError as error:
            raise AddressError("the host name is not a valid international name") from error
    host = host.lower()
    if host.endswith("."):
        host = host[:-1]
    labels = host.split(".")
    if _NUMERIC_LABEL.match(labels[-1]):
        if len(labels) == 4 and all(_DECIMAL_OCTET.match(label) for label in labels):
            try:
                ip = ipaddress.IPv4Address(host)
            except ValueError:
                pass
            else:
                return str(ip), ip
        raise AddressError(
            "numeric hosts must be written as four decimal numbers (like 203.0.113.7)"
        )
    if len(host) > 253 or not all(_LABEL.match(label) for label in labels):
        raise AddressError("the host is not a valid DNS name")
    return host, None


def _check_name(host: str, *, allow_private: bool) -> None:
    if host in METADATA_NAMES:
        raise AddressError(f"{host} is a cloud metadata name")
    if allow_private:
        return
    if "." not in host:
        raise AddressError(f"{host} is not a public DNS name")
    if any(host == suffix or host.endswith("." + suffix) for suffix in PRIVATE_SUFFIXES):
        raise AddressError(f"{host} is a local or internal name")


async def system_resolve(host: str, port: int) -> list[str]:
    """Resolve with the operating system (off the event loop); `OSError` when it cannot."""
    infos = await asyncio.get_running_loop().getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
    )
    return [info[4][0] for info in infos]


async def resolve_checked(
    target: BotURL, *, allow_private: bool = False, resolve: Resolve | None = None
) -> list[IPAddress]:
    """The addresses to connect to for `target`, every one of them checked.

    `AddressError` when any answer is not allowed; `OSError` when the name does not resolve.
    """
    if target.ip is not None:
        check_ip(target.ip, allow_private=allow_private)
        return [target.ip]
    answers = await (resolve or system_resolve)(target.host, target.port)
    if not answers:
        raise OSError(f"{target.host} has no addresses")
    checked: list[IPAddress] = []
    for answer in answers:
        try:
            ip = ipaddress.ip_address(answer)
        except ValueError as error:
            raise OSError(f"{target.host} resolves to {answer!r}, not an address") from error
        problem = ip_problem(ip, allow_private=allow_private)
        if problem:
            raise AddressError(f"{target.host} resolves to {ip}, which is {problem}")
        if ip not in checked:
            checked.append(ip)
    return checked
