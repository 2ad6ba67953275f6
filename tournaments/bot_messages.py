"""What we tell a bot's owner when calling their bot went wrong, in our own words.

The caller reports a `Fault`: a kind and a technical detail, often a library's own text
("Cannot connect to host 127.0.0.1:8199 ssl:default [Connect call failed ...]"). An owner
registering a bot needs a sentence that says what happened and what to do next, so this module
turns a fault of `GET U` into one, and adds the hints a protocol check report needs (a bot that
answers HTTP 401 most often still has an old secret).

It only reads faults and reports; it calls nothing, so the bot caller can move without it.
"""

from __future__ import annotations

import ast
import json
import re
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from games.faults import Fault, FaultKind

INFO_SHAPE = '{"protocol": "escoba/1", "name": ..., "author": ..., "version": ...}'

CONNECT_REFUSED = (
    "The bot is unreachable: could not connect to {where}: connection refused. Is it running, "
    "and listening on that port?"
)
CONNECT_NO_NAME = (
    "The bot is unreachable: the host name {host} does not resolve. Check the URL's spelling."
)
CONNECT_TLS = (
    "The bot is unreachable: could not connect to {where} over HTTPS: the TLS handshake failed. "
    "Does it serve HTTPS there, with a certificate valid for {host}?"
)
CONNECT_CLOSED = (
    "The bot is unreachable: {where} accepted the connection, then closed it without answering."
)
CONNECT_NO_ROUTE = "The bot is unreachable: there is no network route to {where}."
CONNECT_OTHER = "The bot is unreachable: could not connect to {where}. Is it running?"

UNSIGNED_401 = (
    "The bot answered HTTP 401 (unauthorized) to GET {url}. That first call of registration is "
    "unsigned, because the bot has no secret from us yet. Either let an unsigned GET U through "
    '(it only asks for the bot\'s name), or bring your own secret: register with "secret": '
    '"whsec_..." (whsec_ and the base64 of 24 random bytes), give the bot the same secret, and '
    "every call, this one included, is signed with it."
)
SIGNED_401 = (
    "The bot answered HTTP 401 (unauthorized) to GET {url}, which we signed with the bot's "
    "secret. The bot does not accept that secret: give it exactly the same whsec_ secret."
)
OTHER_STATUS = "The bot answered GET {url} with {detail}; it must answer 200 with {shape}."
WRONG_PROTOCOL = (
    'The bot does not speak escoba/1: its GET answer must have "protocol": "escoba/1"; '
    "it had {found}."
)
NOT_JSON = "The bot's GET answer is not JSON; it must be {shape}."
BAD_INFO = (
    "The bot's GET answer does not follow escoba/1 ({detail}); it must be {shape}, each a "
    "string of at most 200 characters."
)

HINT_OLD_SECRET = (
    "The bot refused our signature (HTTP 401). Its secret was rotated at {when} and no check has "
    "passed since: the bot probably still has the old secret. Give it the new one (shown once, "
    "when you rotated it) and restart it."
)
HINT_WRONG_SECRET = (
    "The bot refused our signature (HTTP 401): it must verify calls with this bot's current "
    "secret, the one shown at registration or at the last rotation."
)

_REFUSED = ("connect call failed", "connection refused")
_NO_NAME = (
    "name or service not known", "nodename nor servname", "no address associated",
    "temporary failure in name resolution", "getaddrinfo", "does not resolve",
)  # fmt: skip
_TLS = ("ssl", "tls", "certificate")
_CLOSED = ("reset by peer", "server disconnected", "connection closed", "broken pipe")
_NO_ROUTE = ("network is unreachable", "no route to host")
_STATUS = re.compile(r"HTTP (\d{3})")
_FOUND = re.compile(r"got (.*)$")


def _where(url: str) -> tuple[str, str]:
    """`(host, "host:port")` of a URL, with the scheme's port when none is written."""
    parts = urlsplit(url)
    host = parts.hostname or url
    try:
        port = parts.port
    except ValueError:
        port = None
    port = port or (443 if parts.scheme == "https" else 80)
    shown = f"[{host}]" if ":" in host else host
    return host, f"{shown}:{port}"


def connect_message(detail: str, url: str) -> str:
    """A failed connection to `url`, said plainly, from the client library's error text."""
    host, where = _where(url)
    text = detail.lower()
    for needles, template in (
        (_REFUSED, CONNECT_REFUSED),
        (_NO_NAME, CONNECT_NO_NAME),
        (_TLS, CONNECT_TLS),
        (_CLOSED, CONNECT_CLOSED),
        (_NO_ROUTE, CONNECT_NO_ROUTE),
    ):
        if any(needle in text for needle in needles):
            return template.format(where=where, host=host)
    return CONNECT_OTHER.format(where=where)


def _found(detail: str) -> str:
    """What a wrong `protocol` field held, from the parser's "expected ..., got X" detail."""
    match = _FOUND.search(detail)
    if match is None:
        return "something else"
    try:
        value = ast.literal_eval(match.group(1))
    except (ValueError, SyntaxError):
        return match.group(1)
    return "none" if value is None else json.dumps(value)


def info_fault_message(fault: Fault, *, url: str, secret_known_to_bot: bool) -> str:
    """The sentence for a `GET U` that failed at registration or at a change of URL.

    `secret_known_to_bot`: the call was signed with a secret the bot should have (one the owner
    brought, or the bot's current one); otherwise it was unsigned.
    """
    if fault.kind is FaultKind.CONNECT:
        return connect_message(fault.detail, url)
    if fault.kind is FaultKind.HTTP_STATUS:
        status = _STATUS.search(fault.detail)
        if status and status.group(1) == "401":
            if secret_known_to_bot:
                return SIGNED_401.format(url=url)
            return UNSIGNED_401.format(url=url)
        return OTHER_STATUS.format(url=url, detail=fault.detail, shape=INFO_SHAPE)
    if fault.kind is FaultKind.WRONG_PROTOCOL:
        return WRONG_PROTOCOL.format(found=_found(fault.detail))
    if fault.kind is FaultKind.BAD_JSON:
        return NOT_JSON.format(shape=INFO_SHAPE)
    if fault.kind is FaultKind.BAD_SCHEMA:
        return BAD_INFO.format(detail=fault.detail, shape=INFO_SHAPE)
    return fault.message


def refused_signature(report: dict[str, Any]) -> bool:
    """Whether any call of a check report was answered HTTP 401."""
    return any(
        result["status"] == "fail" and "HTTP 401" in result["detail"]
        for result in report.get("results", [])
    )


def secret_hint(*, rotated_at: datetime | None, passed_since_rotation: bool) -> str:
    """The hint for a check whose calls got HTTP 401: most often the bot's secret is stale."""
    if rotated_at is not None and not passed_since_rotation:
        return HINT_OLD_SECRET.format(when=f"{rotated_at:%Y-%m-%d %H:%M} UTC")
    return HINT_WRONG_SECRET
