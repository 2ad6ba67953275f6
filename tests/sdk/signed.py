"""Signed requests to a bot served by the SDK: its secret and Standard Webhooks headers, for the
SDK's server tests and the arena's signing tests."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from standardwebhooks.webhooks import Webhook

SECRET = "whsec_" + "c2RrLXRlc3Qtc2VjcmV0LWZvci1zaWduaW5n"


def signed_headers(body: bytes, *, secret: str = SECRET, age: timedelta = timedelta()) -> dict:
    when = datetime.now(tz=UTC) - age
    msg_id = f"msg_{time.perf_counter_ns()}"
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(when.timestamp())),
        "webhook-signature": Webhook(secret).sign(msg_id, when, body.decode()),
        "Content-Type": "application/json",
    }
