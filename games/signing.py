"""Standard Webhooks signatures: the arena signs every call to a bot, and a bot checks them.

The one signer of the project: the arena's caller signs moves and notices with it, the SDK's
`check` signs its requests with it, and the SDK's server verifies with it. A signature is
`v1,` and the base64 HMAC-SHA256 of `id.timestamp.body` under the secret's key, sent in the
headers `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature`, exactly as the
`standardwebhooks` package makes them (a test compares the two).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import itertools
import secrets
import time
from collections.abc import Mapping

SECRET_PREFIX = "whsec_"
# How far a timestamp may be from now, either way, before a verifier refuses it.
TOLERANCE_S = 5 * 60


class SignatureError(ValueError):
    """A request whose signature cannot be verified; `str(error)` says why, in a few words."""


def secret_key(secret: str) -> bytes:
    """The HMAC key of a `whsec_...` secret (the prefix and the base64 padding are optional).

    Raises `ValueError` for a secret with no key in it, as `standardwebhooks` refuses it too.
    """
    try:
        key = base64.b64decode(secret.removeprefix(SECRET_PREFIX) + "==")
    except (binascii.Error, ValueError):
        key = b""
    if not key:
        raise ValueError("the secret is not a Standard Webhooks secret (whsec_...)")
    return key


def new_secret() -> str:
    """A new secret: `whsec_` and the base64 of 24 random bytes (the size Standard Webhooks
    recommends at the least)."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(24)).decode("ascii")


class Signer:
    """Signs and verifies with one secret, cheaply enough to sign every move.

    The HMAC key schedule is computed once and copied per message; message ids are a random
    prefix per signer and a counter, unique without asking the operating system for randomness
    on every call.
    """

    def __init__(self, secret: str) -> None:
        self._hmac = hmac.new(secret_key(secret), digestmod=hashlib.sha256)
        self._id_prefix = "msg_" + secrets.token_urlsafe(12) + "_"
        self._counter = itertools.count(1)

    def signature(self, msg_id: str, timestamp: str, body: bytes) -> str:
        """The `webhook-signature` value of one message: `v1,` and the base64 HMAC."""
        mac = self._hmac.copy()
        mac.update(f"{msg_id}.{timestamp}.".encode())
        mac.update(body)
        return "v1," + base64.b64encode(mac.digest()).decode()

    def headers(
        self,
        body: bytes,
        timestamp: int | None = None,
        signature: str | None = None,
        msg_id: str | None = None,
    ) -> dict[str, str]:
        """The three signature headers for one request with this body, under a new id unless
        `msg_id` is given (every retry of one notification keeps its id, for receivers to drop
        duplicates).

        `signature` replaces the real one: the check sends a forged request this way, to see
        that the bot refuses it.
        """
        msg_id = msg_id or f"{self._id_prefix}{next(self._counter)}"
        stamp = str(int(time.time()) if timestamp is None else timestamp)
        return {
            "webhook-id": msg_id,
            "webhook-timestamp": stamp,
            "webhook-signature": signature or self.signature(msg_id, stamp, body),
        }

    def verify(self, body: bytes, headers: Mapping[str, str], now: float | None = None) -> str:
        """Check a request's signature headers (names in lower case); returns its `webhook-id`.

        Raises `SignatureError` when a header is missing, the timestamp is more than
        `TOLERANCE_S` away from now, or no `v1` signature in the header matches.
        """
        msg_id = headers.get("webhook-id")
        stamp = headers.get("webhook-timestamp")
        given = headers.get("webhook-signature")
        if not (msg_id and stamp and given):
            raise SignatureError("missing webhook-id, webhook-timestamp or webhook-signature")
        try:
            sent = int(stamp)
        except ValueError:
            raise SignatureError("webhook-timestamp is not a whole number of seconds") from None
        now = time.time() if now is None else now
        if sent < now - TOLERANCE_S:
            raise SignatureError("the timestamp is more than 5 minutes old")
        if sent > now + TOLERANCE_S:
            raise SignatureError("the timestamp is more than 5 minutes ahead")
        expected = self.signature(msg_id, stamp, body).encode()
        for candidate in given.split(" "):
            if hmac.compare_digest(candidate.encode(), expected):
                return msg_id
        raise SignatureError("no matching signature")
