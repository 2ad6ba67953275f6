"""Notifications delivered by a real Celery worker that consumes only the `maintenance` queue,
over a real Redis, to a real webhook receiver: routing, retry delay and signature end to end."""

import time

import pytest
from django.db import transaction

from tournaments.models import Notification
from tournaments.services.notifications import (
    EVENT_BOT_UNHEALTHY,
    notification_send,
    notification_settings_update,
)

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

RETRY_BASE_MS = 400


def wait_for(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def test_a_worker_on_the_maintenance_queue_delivers_retries_and_signs(
    owner, bot, receiver, celery_worker_factory, monkeypatch
):
    monkeypatch.setenv("ESCOBA_NOTIFY_RETRY_BASE_MS", str(RETRY_BASE_MS))
    worker = celery_worker_factory(queues="maintenance")
    _, secret = notification_settings_update(user=owner, webhook_url=receiver.url)
    receiver.statuses = [503, 204]

    with transaction.atomic():
        notification = notification_send(
            user=owner, event=EVENT_BOT_UNHEALTHY, bot=bot, data={"check": 1, "reason": "x."}
        )

    def delivered() -> bool:
        row = Notification.objects.get(pk=notification.pk)
        return row.webhook_status == "sent" and row.email_status == "sent"

    wait_for(delivered)
    first, second = receiver.received
    assert second.at - first.at >= RETRY_BASE_MS / 1000
    assert first.headers["webhook-id"] == second.headers["webhook-id"]
    payloads = receiver.verify(secret)
    assert [p["type"] for p in payloads] == [EVENT_BOT_UNHEALTHY] * 2
    assert Notification.objects.get(pk=notification.pk).webhook_attempts == 2
    assert "notifications.call_webhook" in worker.log_text()
