"""An owner's e-mail address is confirmed before any notification is mailed to it.

Anyone can type any address into their settings; mailing it unconfirmed would make the arena a
way to send mail to strangers. So setting an address mails it one message, a link signed with
``SECRET_KEY`` (Django's signing, salted for this use) naming the account and the address, valid
``ESCOBA_EMAIL_VERIFY_MAX_AGE_S`` seconds; the page it opens asks to confirm (a POST: mail
scanners that follow links confirm nothing). Until then, and again after the address changes,
notifications are stored and shown but not mailed. Verification mails are limited per user
(``ESCOBA_THROTTLE_VERIFY_EMAIL``, on the settings endpoint).
"""

from __future__ import annotations

import smtplib
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import signing
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.db import transaction
from django.urls import reverse

from tournaments import queueing
from tournaments.models import NotificationSettings

SALT = "escoba.email-verification"
ERROR_LINK_BAD = "This confirmation link is not one of ours, or it was cut short."
ERROR_LINK_EXPIRED = "This confirmation link has expired; set your address again for a new one."
ERROR_LINK_STALE = (
    "This link confirms an address the account no longer has; use the newest link we sent."
)
SUBJECT = "[Escoba Arena] Confirm your e-mail address"
MESSAGE = (
    "Someone (we hope you) asked Escoba Arena to send notifications about the bots of account "
    "{username} to this address.\n\nConfirm it here (the link works for {hours} hours):\n"
    "{link}\n\nIf it was not you, ignore this message: nothing will be sent to you."
)


class VerificationMailFailed(Exception):
    """The mail server did not take the message (the task retries)."""


def email_verified(*, user: Any, preferences: NotificationSettings) -> bool:
    """Whether the account's address is the one its owner confirmed."""
    return bool(user.email) and preferences.verified_email == user.email


def email_verification_token(*, user_id: int, email: str) -> str:
    return signing.dumps({"user": user_id, "email": email}, salt=SALT, compress=True)


def email_verification_link(*, user_id: int, email: str) -> str:
    token = email_verification_token(user_id=user_id, email=email)
    path = reverse("verify_email", kwargs={"token": token})
    return f"{settings.ESCOBA_PUBLIC_URL.rstrip('/')}{path}"


def email_verification_request(*, user: Any) -> None:
    """Mail the account's address a confirmation link once this transaction commits."""
    if not user.email:
        return
    user_id, email = user.pk, user.email
    transaction.on_commit(
        lambda: queueing.email_verification_enqueue(user_id=user_id, email=email), robust=True
    )


def email_verification_send(*, user_id: int, email: str) -> bool:
    """Send the confirmation mail; False when there is nothing to confirm any more (the address
    changed since, or is confirmed already). ``VerificationMailFailed`` to retry."""
    user = get_user_model().objects.filter(pk=user_id).first()
    if user is None or user.email != email:
        return False
    preferences = NotificationSettings.objects.filter(user=user).first()
    if preferences is not None and email_verified(user=user, preferences=preferences):
        return False
    message = MESSAGE.format(
        username=user.get_username(),
        hours=settings.ESCOBA_EMAIL_VERIFY_MAX_AGE_S // 3600,
        link=email_verification_link(user_id=user_id, email=email),
    )
    try:
        send_mail(subject=SUBJECT, message=message, from_email=None, recipient_list=[email])
    except (smtplib.SMTPException, OSError) as error:
        raise VerificationMailFailed(type(error).__name__) from error
    return True


def email_verification_read(*, token: str) -> tuple[Any, str]:
    """The account and address a link confirms; ``ValidationError`` in our words if it is not
    ours, expired, or for an address the account no longer has."""
    try:
        data = signing.loads(token, salt=SALT, max_age=settings.ESCOBA_EMAIL_VERIFY_MAX_AGE_S)
    except signing.SignatureExpired:
        raise ValidationError(ERROR_LINK_EXPIRED) from None
    except signing.BadSignature:
        raise ValidationError(ERROR_LINK_BAD) from None
    if not isinstance(data, dict) or not {"user", "email"} <= set(data):
        raise ValidationError(ERROR_LINK_BAD)
    user = get_user_model().objects.filter(pk=data["user"]).first()
    if user is None or user.email != data["email"]:
        raise ValidationError(ERROR_LINK_STALE)
    return user, data["email"]


@transaction.atomic
def email_verification_confirm(*, token: str) -> Any:
    """Confirm the address the link names; the account it belongs to."""
    user, email = email_verification_read(token=token)
    preferences, _ = NotificationSettings.objects.select_for_update().get_or_create(user=user)
    preferences.verified_email = email
    preferences.save(update_fields=["verified_email", "updated_at"])
    return user
