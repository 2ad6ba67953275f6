"""Telling owners what happens to their bots: by email, and by a signed webhook of their own.

`notification_send` is the one entry point. It stores the notification (the owner's list,
`GET /api/notifications/`) and, once the transaction commits, hands its delivery to Celery tasks
on the `maintenance` queue: one sends the email (Django's mail; the console backend locally),
one calls the owner's webhook. The webhook is hostile territory like a bot's URL, so it is
called through the bots' own client (`tournaments.bot_calls.caller.BotClient`): the same
address policy, resolved once and connected to the checked address, one total deadline, a
capped reply, no redirects. Each call is signed per Standard Webhooks with the owner's
`webhook_secret` (`games.signing.Signer`, through the client), and every retry of one
notification reuses its `webhook-id` so the receiver can drop duplicates. A webhook that fails
every retry of `ESCOBA_NOTIFY_WEBHOOK_SUSPEND_AFTER` notifications in a row is suspended (the
owner is emailed) instead of being called for ever.

Events and the `data` each needs (challenges and version tests send theirs):

| event | when | data |
|---|---|---|
| `bot.paused` | someone other than the owner paused the bot | |
| `bot.unhealthy` | checks failed `ESCOBA_BOT_UNHEALTHY_AFTER` times in a row | `check`, `reason` |
| `bot.healthy` | an unhealthy bot passed a check | `check` |
| `bot.rated_paused` | no-shows in a row took it out of rated play | `no_shows`, `recheck_in_s` |
| `bot.rated_resumed` | a check of a bot out of rated play passed: it is back | `check` |
| `challenge.received` | another owner challenged the bot | `challenger`, `challenge` |
| `version_test.finished` | a version test of the bot ended | `test`, `status`, `summary` |
| `webhook.suspended` | the owner's webhook kept failing (sent by email only) | `url` |
"""

from __future__ import annotations

import smtplib
from datetime import UTC
from string import Formatter
from typing import Any

import orjson
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.db import transaction
from django.utils import timezone

from games.faults import FaultKind
from games.signing import new_secret
from tournaments import queueing
from tournaments.bot_calls.addresses import AddressError, parse_bot_url, resolve_checked
from tournaments.bot_calls.caller import BotClient, run_sync
from tournaments.bot_messages import connect_message
from tournaments.models import Bot, Notification, NotificationSettings
from tournaments.services.email_verification import email_verification_request, email_verified

Event = Notification.Event
Delivery = Notification.Delivery

EVENT_BOT_PAUSED = Event.BOT_PAUSED.value
EVENT_BOT_UNHEALTHY = Event.BOT_UNHEALTHY.value
EVENT_BOT_HEALTHY = Event.BOT_HEALTHY.value
EVENT_BOT_RATED_PAUSED = Event.BOT_RATED_PAUSED.value
EVENT_BOT_RATED_RESUMED = Event.BOT_RATED_RESUMED.value
EVENT_CHALLENGE_RECEIVED = Event.CHALLENGE_RECEIVED.value
EVENT_VERSION_TEST_FINISHED = Event.VERSION_TEST_FINISHED.value
EVENT_WEBHOOK_SUSPENDED = Event.WEBHOOK_SUSPENDED.value

# (subject, message) per event: `{bot}` is the bot's name, other fields come from `data`.
TEXTS: dict[str, tuple[str, str]] = {
    EVENT_BOT_PAUSED: (
        "Your bot {bot} was paused",
        "Your bot {bot} was paused by an administrator. It is not scheduled in new leagues "
        "until it is resumed (POST /api/bots/{bot_id}/resume/).",
    ),
    EVENT_BOT_UNHEALTHY: (
        "Your bot {bot} is unhealthy",
        "Your bot {bot} failed its protocol check several times in a row and is not scheduled "
        "until a check passes. The last check said: {reason} Run one yourself with "
        "POST /api/bots/{bot_id}/check/ once it is fixed.",
    ),
    EVENT_BOT_HEALTHY: (
        "Your bot {bot} is healthy again",
        "A protocol check of your bot {bot} passed: it is scheduled in leagues again.",
    ),
    EVENT_BOT_RATED_PAUSED: (
        "Your bot {bot} is out of rated play",
        "Your bot {bot} did not show up for {no_shows} rated games in a row, each after the "
        "ladder had waited for it, so it is out of rated play. We check it again by ourselves "
        "in {recheck_in_s} s, then twice as long after each failed check (up to an hour), and it "
        "is back as soon as a check passes; or run one yourself with "
        "POST /api/bots/{bot_id}/check/.",
    ),
    EVENT_BOT_RATED_RESUMED: (
        "Your bot {bot} is back in rated play",
        "A protocol check of your bot {bot} passed: the ladder pairs it again.",
    ),
    EVENT_CHALLENGE_RECEIVED: (
        "{challenger} challenged your bot {bot}",
        "{challenger} challenged your bot {bot} (challenge {challenge}).",
    ),
    EVENT_VERSION_TEST_FINISHED: (
        "The version test of {bot} ended",
        "The version test {test} of your bot {bot} ended: {summary}",
    ),
    EVENT_WEBHOOK_SUSPENDED: (
        "Your notification webhook was suspended",
        "We could not deliver {failures} notifications in a row to your webhook {url}, so we "
        "stopped calling it. Notifications are still listed at GET /api/notifications/. Set its "
        "URL again (PATCH /api/notification-settings/) once it answers 2xx to signed POSTs.",
    ),
}

ERROR_EMAIL = "Enter a valid email address."
ERROR_NO_EMAIL = "Give an email address first, or leave email notifications off."
ERROR_WEBHOOK_URL = "This webhook URL is not allowed: {reason}"
ERROR_WEBHOOK_UNRESOLVED = "This webhook URL's host does not resolve to an address: {reason}"
ERROR_MISSING_DATA = "Notification {event!r} needs data {missing}."

# Delivery attempts of one notification to one webhook: the first and this many retries.
WEBHOOK_RETRIES = 5
EMAIL_RETRIES = 5
MAX_RETRY_DELAY_S = 3600
USER_AGENT = "EscobaArena/1 (+notifications)"


class DeliveryError(Exception):
    """A delivery that may work later (the owner's endpoint or our mail server failed)."""


def retry_delay_s(retries: int) -> float:
    """Seconds before retry number `retries + 1`: doubling from `ESCOBA_NOTIFY_RETRY_BASE_MS`."""
    base_s = settings.ESCOBA_NOTIFY_RETRY_BASE_MS / 1000
    return min(base_s * 2**retries, MAX_RETRY_DELAY_S)


# --- settings ------------------------------------------------------------------------------


def notification_settings_get(*, user: Any) -> NotificationSettings:
    """The owner's settings; defaults (email on, no webhook) until they change something."""
    found = NotificationSettings.objects.filter(user=user).first()
    return found or NotificationSettings(user=user)


def _clean_webhook_url(url: str) -> str:
    """The URL, checked against the bot address policy, its name resolved once now.

    Checked again at every delivery: a name may resolve elsewhere later.
    """
    url = url.strip()
    allow_private = settings.ESCOBA_ALLOW_PRIVATE_BOT_URLS

    async def resolve() -> None:
        await resolve_checked(target, allow_private=allow_private)

    try:
        target = parse_bot_url(url, allow_private=allow_private)
        run_sync(resolve)
    except AddressError as error:
        raise ValidationError({"webhook_url": [ERROR_WEBHOOK_URL.format(reason=error)]}) from None
    except OSError as error:
        reason = error.strerror or type(error).__name__
        message = ERROR_WEBHOOK_UNRESOLVED.format(reason=reason)
        raise ValidationError({"webhook_url": [message]}) from None
    return url


@transaction.atomic
def notification_settings_update(
    *,
    user: Any,
    email: str | None = None,
    email_enabled: bool | None = None,
    webhook_url: str | None = None,
) -> tuple[NotificationSettings, str | None]:
    """Change how the owner is told; returns the settings and a new webhook secret, if made.

    The secret is made with the first webhook URL and kept when the URL changes (like a bot's);
    `notification_settings_rotate_secret` replaces it. Setting the URL (again) ends a
    suspension. An empty URL removes the webhook. A new address (or an unconfirmed one given
    again) is mailed a confirmation link; nothing else is mailed to it until it is confirmed.
    """
    current = NotificationSettings.objects.select_for_update().filter(user=user).first()
    current = current or NotificationSettings(user=user)
    made_secret = None
    if email is not None:
        email = email.strip()
        if email:
            try:
                validate_email(email)
            except ValidationError:
                raise ValidationError({"email": [ERROR_EMAIL]}) from None
        changed = email != user.email
        user.email = email
        user.save(update_fields=["email"])
        if email and (changed or current.verified_email != email):
            email_verification_request(user=user)
    if email_enabled is not None:
        current.email_enabled = email_enabled
    if webhook_url is not None:
        current.webhook_url = _clean_webhook_url(webhook_url) if webhook_url.strip() else ""
        current.webhook_failures = 0
        current.webhook_suspended_at = None
        if current.webhook_url and not current.webhook_secret:
            current.webhook_secret = made_secret = new_secret()
    current.save()
    return current, made_secret


@transaction.atomic
def notification_settings_rotate_secret(*, user: Any) -> NotificationSettings:
    """A new webhook signing secret; the old one stops being used at once."""
    current, _ = NotificationSettings.objects.select_for_update().get_or_create(user=user)
    current.webhook_secret = new_secret()
    current.save(update_fields=["webhook_secret", "updated_at"])
    return current


# --- sending ---------------------------------------------------------------------------------


def _texts(event: str, bot: Bot | None, data: dict[str, Any]) -> tuple[str, str]:
    subject, message = TEXTS[event]
    fields = {**data}
    if bot is not None:
        fields.update(bot=bot.name, bot_id=bot.pk)
    wanted = {name for text in (subject, message) for _, name, _, _ in Formatter().parse(text)}
    missing = sorted(name for name in wanted - {None} if name not in fields)
    if missing:
        raise ValueError(ERROR_MISSING_DATA.format(event=event, missing=", ".join(missing)))
    return subject.format(**fields), message.format(**fields)


def notification_send(
    *, user: Any, event: str, bot: Bot | None = None, data: dict[str, Any] | None = None
) -> Notification:
    """Store a notification for `user` and deliver it once the current transaction commits.

    `event` is one of the `EVENT_*` names; `data` (JSON values) fills in its text and goes to
    the webhook. Safe to call inside a transaction: nothing is sent if it rolls back.
    """
    data = dict(data or {})
    subject, message = _texts(event, bot, data)
    preferences = notification_settings_get(user=user)
    wants_email = preferences.email_enabled and email_verified(user=user, preferences=preferences)
    wants_webhook = (
        event != EVENT_WEBHOOK_SUSPENDED
        and bool(preferences.webhook_url)
        and preferences.webhook_suspended_at is None
    )
    notification = Notification.objects.create(
        user=user,
        event=event,
        bot=bot,
        subject=subject,
        message=message,
        data=data,
        email_status=Delivery.PENDING if wants_email else Delivery.SKIPPED,
        webhook_status=Delivery.PENDING if wants_webhook else Delivery.SKIPPED,
    )
    if wants_email or wants_webhook:
        # `robust`: a broker that cannot be reached is logged, and must not turn the action
        # that caused the notification (already committed) into an error.
        transaction.on_commit(
            lambda: queueing.notification_enqueue(
                notification.pk, email=wants_email, webhook=wants_webhook
            ),
            robust=True,
        )
    return notification


def notification_email_deliver(*, notification_id: int) -> None:
    """Send the notification's email; `DeliveryError` when the mail server failed (retry)."""
    notification = Notification.objects.select_related("user").get(pk=notification_id)
    if notification.email_status != Delivery.PENDING:
        return
    address = notification.user.email
    preferences = notification_settings_get(user=notification.user)
    if not email_verified(user=notification.user, preferences=preferences):
        _set_status(notification, email_status=Delivery.SKIPPED)
        return
    try:
        send_mail(
            subject=f"[Escoba Arena] {notification.subject}",
            message=notification.message,
            from_email=None,
            recipient_list=[address],
        )
    except (smtplib.SMTPException, OSError) as error:
        raise DeliveryError(f"mail server: {type(error).__name__}") from error
    _set_status(notification, email_status=Delivery.SENT)


def notification_email_failed(*, notification_id: int) -> None:
    _set_status(Notification.objects.get(pk=notification_id), email_status=Delivery.FAILED)


def _set_status(notification: Notification, **fields: Any) -> None:
    Notification.objects.filter(pk=notification.pk).update(**fields)


def webhook_body(notification: Notification) -> bytes:
    """The JSON posted to the owner's webhook: Standard Webhooks' `type`, `timestamp`, `data`."""
    bot = notification.bot
    return orjson.dumps(
        {
            "type": notification.event,
            "timestamp": notification.created_at.astimezone(UTC).isoformat().replace("+00:00", "Z"),
            "data": {
                "notification": notification.pk,
                "bot": None if bot is None else {"id": bot.pk, "name": bot.name},
                "subject": notification.subject,
                "message": notification.message,
                **notification.data,
            },
        }
    )


def webhook_id(notification: Notification) -> str:
    """The same `webhook-id` for every attempt at one notification (receivers deduplicate)."""
    return f"msg_notification_{notification.pk}"


def notification_webhook_deliver(*, notification_id: int) -> None:
    """POST the notification to the owner's webhook; `DeliveryError` when it failed (retry).

    Any 2xx answer is a delivery; its body is not read.
    """
    notification = Notification.objects.select_related("user", "bot").get(pk=notification_id)
    if notification.webhook_status != Delivery.PENDING:
        return
    preferences = notification_settings_get(user=notification.user)
    if not preferences.webhook_url or preferences.webhook_suspended_at is not None:
        _set_status(notification, webhook_status=Delivery.SKIPPED)
        return
    Notification.objects.filter(pk=notification.pk).update(
        webhook_attempts=notification.webhook_attempts + 1
    )
    error = run_sync(
        _post,
        preferences.webhook_url,
        preferences.webhook_secret,
        webhook_id(notification),
        webhook_body(notification),
    )
    if error is not None:
        _set_status(notification, webhook_error=error[:300])
        raise DeliveryError(error)
    _set_status(notification, webhook_status=Delivery.SENT, webhook_error="")
    NotificationSettings.objects.filter(user=notification.user).update(webhook_failures=0)


async def _post(url: str, secret: str, msg_id: str, body: bytes) -> str | None:
    """One signed POST through the bots' client, under one total deadline, to an address the
    policy allows (checked again now: a name may resolve elsewhere than when it was set); the
    error in the owner's words, or None for a 2xx."""
    timeout_ms = settings.ESCOBA_NOTIFY_WEBHOOK_TIMEOUT_MS
    client = BotClient(
        url, secret, allow_private=settings.ESCOBA_ALLOW_PRIVATE_BOT_URLS, user_agent=USER_AGENT
    )
    try:
        reply = await client.fetch("POST", None, body, timeout_ms, strict=False, msg_id=msg_id)
    finally:
        await client.aclose()
    fault = reply.fault
    if fault is None:
        return None if 200 <= reply.status < 300 else f"the webhook answered HTTP {reply.status}"
    if fault.kind == FaultKind.TIMEOUT:
        return f"the webhook did not answer within {timeout_ms} ms"
    if fault.kind == FaultKind.ADDRESS:
        return ERROR_WEBHOOK_URL.format(reason=fault.detail)
    if fault.kind == FaultKind.CONNECT:
        return connect_message(fault.detail, url)
    return f"the webhook's reply was refused: {fault.detail}"


@transaction.atomic
def notification_webhook_failed(*, notification_id: int) -> None:
    """Every attempt at this notification failed: count it, and suspend a webhook that keeps
    failing (the owner is told by email) so that a dead endpoint is not called for ever."""
    notification = Notification.objects.select_related("user").get(pk=notification_id)
    _set_status(notification, webhook_status=Delivery.FAILED)
    preferences = NotificationSettings.objects.select_for_update().get(user=notification.user)
    preferences.webhook_failures += 1
    limit = max(1, settings.ESCOBA_NOTIFY_WEBHOOK_SUSPEND_AFTER)
    suspend = preferences.webhook_suspended_at is None and preferences.webhook_failures >= limit
    if suspend:
        preferences.webhook_suspended_at = timezone.now()
    preferences.save(update_fields=["webhook_failures", "webhook_suspended_at", "updated_at"])
    if suspend:
        notification_send(
            user=notification.user,
            event=EVENT_WEBHOOK_SUSPENDED,
            data={"url": preferences.webhook_url, "failures": preferences.webhook_failures},
        )
