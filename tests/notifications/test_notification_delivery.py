"""Owners are told by email and by a signed webhook; failing webhooks are retried, then dropped.

Celery runs the delivery tasks eagerly here (retries run at once, without their delay); the
webhook receiver is a real HTTP server on loopback that checks every signature.
`tests/notifications/test_notification_worker.py` runs the same tasks in a real worker.
"""

import socket
from collections.abc import Iterator

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from bots_sdk import serve_in_thread
from tests.fakebots.players import Switchable
from tournaments.models import Notification, NotificationSettings
from tournaments.services import notifications
from tournaments.services.bots import bot_check, bot_pause
from tournaments.services.notifications import (
    EVENT_BOT_HEALTHY,
    EVENT_BOT_PAUSED,
    EVENT_BOT_UNHEALTHY,
    EVENT_CHALLENGE_RECEIVED,
    EVENT_WEBHOOK_SUSPENDED,
    WEBHOOK_RETRIES,
    notification_send,
    notification_settings_update,
)

pytestmark = pytest.mark.django_db

Delivery = Notification.Delivery


@pytest.fixture
def deliver(django_capture_on_commit_callbacks):
    """Run what the code under test sends on commit (the eager delivery tasks), at once."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


def hook(owner, receiver) -> str:
    _, secret = notification_settings_update(user=owner, webhook_url=receiver.url)
    assert secret is not None and secret.startswith("whsec_")
    return secret


def test_an_admin_pausing_a_bot_emails_and_posts_a_signed_notification(
    owner, bot, receiver, mailoutbox, deliver
):
    secret = hook(owner, receiver)
    with deliver():
        bot_pause(bot=bot)  # no `by`: an administrator or the system

    [mail] = mailoutbox
    assert mail.to == ["ana@example.org"]
    assert mail.subject == "[Escoba Arena] Your bot broom was paused"
    assert f"/api/bots/{bot.pk}/resume/" in mail.body

    [payload] = receiver.verify(secret)
    assert payload["type"] == EVENT_BOT_PAUSED
    assert payload["data"]["bot"] == {"id": bot.pk, "name": "broom"}
    assert payload["data"]["subject"] == "Your bot broom was paused"
    assert payload["timestamp"].endswith("Z")
    [request] = receiver.received
    assert request.headers["content-type"] == "application/json"
    with pytest.raises(WebhookVerificationError):  # the signature really is the secret's
        Webhook(notifications.new_secret()).verify(request.body, request.headers)

    notification = Notification.objects.get()
    assert (notification.email_status, notification.webhook_status) == (Delivery.SENT,) * 2
    assert notification.webhook_attempts == 1


def test_the_owner_is_not_told_of_their_own_pause(owner, bot, user_client, mailoutbox, deliver):
    with deliver():
        assert user_client.post(f"/api/bots/{bot.pk}/pause/").status_code == 200
        bot_pause(bot=bot)  # already paused: nothing changes, nothing is said
    assert not Notification.objects.exists() and not mailoutbox


@pytest.fixture
def breakable() -> Iterator[Switchable]:
    bot = Switchable()
    with serve_in_thread(bot.choose, name="breakable") as handle:
        bot.url = handle.url
        yield bot


def test_a_bot_turning_unhealthy_and_back_is_told_once_each_way(
    owner, bot, breakable, mailoutbox, deliver, settings
):
    settings.ESCOBA_BOT_UNHEALTHY_AFTER = 2
    settings.ESCOBA_BOT_CHECK_TIMEOUT_MS = 1000
    bot.url = breakable.url
    bot.save()
    with deliver():
        assert bot_check(bot=bot).passed  # unknown -> healthy: nothing to tell
        breakable.broken = True
        for _ in range(3):  # healthy, unhealthy, still unhealthy
            bot_check(bot=bot)
        breakable.broken = False
        assert bot_check(bot=bot).passed

    events = list(Notification.objects.order_by("id").values_list("event", flat=True))
    assert events == [EVENT_BOT_UNHEALTHY, EVENT_BOT_HEALTHY]
    unhealthy = Notification.objects.get(event=EVENT_BOT_UNHEALTHY)
    assert "HTTP 500" in unhealthy.data["reason"] and unhealthy.data["reason"] in unhealthy.message
    assert [mail.subject for mail in mailoutbox] == [
        "[Escoba Arena] Your bot broom is unhealthy",
        "[Escoba Arena] Your bot broom is healthy again",
    ]


def test_a_failed_delivery_is_retried_with_the_same_webhook_id(owner, bot, receiver, deliver):
    secret = hook(owner, receiver)
    receiver.statuses = [500, 503, 204]
    with deliver():
        notification_send(user=owner, event=EVENT_BOT_PAUSED, bot=bot)

    assert len(receiver.received) == 3
    assert len({request.headers["webhook-id"] for request in receiver.received}) == 1
    assert len(receiver.verify(secret)) == 3
    notification = Notification.objects.get()
    assert (notification.webhook_status, notification.webhook_attempts) == (Delivery.SENT, 3)
    assert notification.webhook_error == ""


def test_a_webhook_that_keeps_failing_is_suspended_and_the_owner_emailed(
    owner, bot, receiver, mailoutbox, deliver, settings
):
    settings.ESCOBA_NOTIFY_WEBHOOK_SUSPEND_AFTER = 2
    hook(owner, receiver)
    receiver.statuses = [500]
    attempts = 1 + WEBHOOK_RETRIES

    with deliver():
        notification_send(user=owner, event=EVENT_BOT_PAUSED, bot=bot)
    first = Notification.objects.get()
    assert (first.webhook_status, first.webhook_attempts) == (Delivery.FAILED, attempts)
    assert first.webhook_error == "the webhook answered HTTP 500"
    assert NotificationSettings.objects.get(user=owner).webhook_suspended_at is None

    with deliver():
        notification_send(user=owner, event=EVENT_BOT_PAUSED, bot=bot)
    preferences = NotificationSettings.objects.get(user=owner)
    assert preferences.webhook_failures == 2 and preferences.webhook_suspended_at is not None
    suspended = Notification.objects.get(event=EVENT_WEBHOOK_SUSPENDED)
    assert suspended.webhook_status == Delivery.SKIPPED
    assert mailoutbox[-1].subject == "[Escoba Arena] Your notification webhook was suspended"
    assert receiver.url in mailoutbox[-1].body
    assert len(receiver.received) == 2 * attempts

    with deliver():  # no longer called, still listed and emailed
        later = notification_send(user=owner, event=EVENT_BOT_PAUSED, bot=bot)
    later.refresh_from_db()
    assert (later.webhook_status, later.email_status) == (Delivery.SKIPPED, Delivery.SENT)
    assert len(receiver.received) == 2 * attempts

    receiver.statuses = [204]
    notification_settings_update(user=owner, webhook_url=receiver.url)  # the owner fixed it
    with deliver():
        notification_send(user=owner, event=EVENT_BOT_PAUSED, bot=bot)
    assert Notification.objects.first().webhook_status == Delivery.SENT
    assert NotificationSettings.objects.get(user=owner).webhook_failures == 0


def test_one_success_resets_the_count_of_failures(owner, bot, receiver, deliver, settings):
    settings.ESCOBA_NOTIFY_WEBHOOK_SUSPEND_AFTER = 2
    hook(owner, receiver)
    receiver.statuses = [500] * (1 + WEBHOOK_RETRIES) + [204]
    with deliver():
        notification_send(user=owner, event=EVENT_BOT_PAUSED, bot=bot)
        notification_send(user=owner, event=EVENT_BOT_PAUSED, bot=bot)
    preferences = NotificationSettings.objects.get(user=owner)
    assert (preferences.webhook_failures, preferences.webhook_suspended_at) == (0, None)


def test_redirects_are_failures_and_not_followed(owner, bot, receiver, deliver):
    hook(owner, receiver)
    receiver.statuses = [302]
    with deliver():
        notification_send(user=owner, event=EVENT_BOT_PAUSED, bot=bot)
    assert Notification.objects.get().webhook_error == "the webhook answered HTTP 302"
    assert len(receiver.received) == 1 + WEBHOOK_RETRIES


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections and never answers."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield server.getsockname()[1]


def test_a_webhook_that_never_answers_is_cut_off(owner, bot, deliver, settings, silent_port):
    settings.ESCOBA_NOTIFY_WEBHOOK_TIMEOUT_MS = 200
    notification_settings_update(user=owner, webhook_url=f"http://127.0.0.1:{silent_port}/")
    with deliver():
        notification_send(user=owner, event=EVENT_BOT_PAUSED, bot=bot)
    notification = Notification.objects.get()
    assert notification.webhook_status == Delivery.FAILED
    assert notification.webhook_error == "the webhook did not answer within 200 ms"


def test_the_address_policy_is_checked_again_at_delivery(owner, bot, receiver, deliver, settings):
    hook(owner, receiver)
    settings.ESCOBA_ALLOW_PRIVATE_BOT_URLS = False
    with deliver():
        notification_send(user=owner, event=EVENT_BOT_PAUSED, bot=bot)
    assert receiver.received == []
    assert "loopback" in Notification.objects.get().webhook_error


def test_email_off_or_no_address_skips_email(owner, bot, mailoutbox, deliver):
    notification_settings_update(user=owner, email_enabled=False)
    with deliver():
        first = notification_send(user=owner, event=EVENT_BOT_PAUSED, bot=bot)
    notification_settings_update(user=owner, email_enabled=True, email="")
    with deliver():
        second = notification_send(user=owner, event=EVENT_BOT_PAUSED, bot=bot)
    assert first.email_status == second.email_status == Delivery.SKIPPED
    assert not mailoutbox


def test_events_sent_by_other_features_need_their_data(owner, bot, mailoutbox, deliver):
    with pytest.raises(ValueError, match="challenge, challenger"):
        notification_send(user=owner, event=EVENT_CHALLENGE_RECEIVED, bot=bot)
    with deliver():
        notification_send(
            user=owner,
            event=EVENT_CHALLENGE_RECEIVED,
            bot=bot,
            data={"challenger": "bruno", "challenge": 7},
        )
    assert mailoutbox[0].subject == "[Escoba Arena] bruno challenged your bot broom"
    assert Notification.objects.get().data == {"challenger": "bruno", "challenge": 7}


def test_nothing_is_sent_when_the_transaction_rolls_back(owner, bot, receiver, mailoutbox):
    from django.db import transaction

    hook(owner, receiver)
    with pytest.raises(RuntimeError), transaction.atomic():
        notification_send(user=owner, event=EVENT_BOT_PAUSED, bot=bot)
        raise RuntimeError("rolled back")
    assert not Notification.objects.exists()
    assert not mailoutbox and not receiver.received
