"""The one Standard Webhooks signer: what it signs, the `standardwebhooks` package accepts, and
what the package signs, it accepts; anything else is refused with a short reason."""

from __future__ import annotations

from datetime import timedelta

import pytest
from standardwebhooks.webhooks import Webhook

from games.signing import SignatureError, Signer
from tests.sdk.signed import signed_headers

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
BODY = b'{"protocol":"escoba/1","name":"\xc3\xb1"}'


def package_headers(body: bytes, secret: str = SECRET, age: timedelta = timedelta()) -> dict:
    """Headers signed by the `standardwebhooks` package, as a bot's tests make them."""
    return signed_headers(body, secret=secret, age=age)


def test_it_verifies_what_the_package_signs_and_returns_the_id():
    headers = package_headers(BODY)
    assert Signer(SECRET).verify(BODY, headers) == headers["webhook-id"]


def test_the_package_verifies_what_it_signs():
    assert Webhook(SECRET).verify(BODY, Signer(SECRET).headers(BODY)) is not None


def test_one_of_several_signatures_may_match():
    headers = package_headers(BODY)
    headers["webhook-signature"] = "v1,bm9wZQ== " + headers["webhook-signature"]
    assert Signer(SECRET).verify(BODY, headers)


@pytest.mark.parametrize(
    "change, reason",
    [
        (lambda h: h.pop("webhook-signature"), "missing"),
        (lambda h: h.update({"webhook-timestamp": "soon"}), "whole number"),
        (lambda h: h.update({"webhook-signature": "v1"}), "no matching signature"),
        (lambda h: h.update({"webhook-id": "msg_other"}), "no matching signature"),
    ],
)
def test_broken_headers_are_refused(change, reason):
    headers = package_headers(BODY)
    change(headers)
    with pytest.raises(SignatureError, match=reason):
        Signer(SECRET).verify(BODY, headers)


def test_another_secret_a_changed_body_and_old_or_future_timestamps_are_refused():
    signer = Signer(SECRET)
    with pytest.raises(SignatureError, match="no matching"):
        signer.verify(BODY, package_headers(BODY, secret="whsec_" + "QUJD" * 8))
    with pytest.raises(SignatureError, match="no matching"):
        signer.verify(BODY + b" ", package_headers(BODY))
    with pytest.raises(SignatureError, match="old"):
        signer.verify(BODY, package_headers(BODY, age=timedelta(minutes=6)))
    with pytest.raises(SignatureError, match="ahead"):
        signer.verify(BODY, package_headers(BODY, age=-timedelta(minutes=6)))
    assert signer.verify(BODY, package_headers(BODY, age=timedelta(minutes=4)))


def test_a_forged_signature_replaces_the_real_one():
    headers = Signer(SECRET).headers(BODY, signature="v1,AAAA")
    assert headers["webhook-signature"] == "v1,AAAA"
    with pytest.raises(SignatureError):
        Signer(SECRET).verify(BODY, headers)


@pytest.mark.parametrize("secret", ["whsec_", "", "whsec_=="])
def test_a_secret_without_a_key_is_refused_in_our_words(secret):
    with pytest.raises(ValueError, match="not a Standard Webhooks secret"):
        Signer(secret)
