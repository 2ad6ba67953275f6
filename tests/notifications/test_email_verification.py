"""An owner's e-mail address gets nothing but its confirmation link until the owner follows it.

Through the API and the page the link opens, with Django's test mail outbox and the tasks run
in-process (the test settings' eager Celery).
"""

import re

import pytest
from django.core import mail
from django.utils.html import escape
from rest_framework.throttling import SimpleRateThrottle

from tournaments.models import Notification
from tournaments.services.email_verification import (
    ERROR_LINK_BAD,
    ERROR_LINK_EXPIRED,
    ERROR_LINK_STALE,
    SUBJECT,
)
from tournaments.services.notifications import EVENT_WEBHOOK_SUSPENDED, notification_send

pytestmark = pytest.mark.django_db

SETTINGS = "/api/notification-settings/"
LINK = re.compile(r"https?://\S+/accounts/verify-email/(\S+)/")


@pytest.fixture
def set_email(user_client, django_capture_on_commit_callbacks):
    def set_it(address: str):
        with django_capture_on_commit_callbacks(execute=True):
            response = user_client.patch(SETTINGS, {"email": address}, format="json")
        return response

    return set_it


def _link_path(message) -> str:
    token = LINK.search(message.body).group(1)
    return f"/accounts/verify-email/{token}/"


def _notify(user) -> Notification:
    user.refresh_from_db()
    return notification_send(
        user=user, event=EVENT_WEBHOOK_SUSPENDED, data={"failures": 5, "url": "https://x.example/"}
    )


def test_a_new_address_gets_its_link_and_nothing_else_until_confirmed(
    set_email, user, client, user_client, django_capture_on_commit_callbacks
):
    answer = set_email("ana@example.org").json()
    assert answer["email"] == "ana@example.org" and answer["email_verified"] is False
    assert [m.subject for m in mail.outbox] == [SUBJECT]
    assert mail.outbox[0].to == ["ana@example.org"]
    assert user.username in mail.outbox[0].body

    with django_capture_on_commit_callbacks(execute=True):
        unconfirmed = _notify(user)
    assert unconfirmed.email_status == Notification.Delivery.SKIPPED
    assert len(mail.outbox) == 1, "an unconfirmed address is mailed nothing else"

    path = _link_path(mail.outbox[0])
    page = client.get(path)
    assert page.status_code == 200 and "Confirm ana@example.org" in page.content.decode()
    assert user_client.get(SETTINGS).json()["email_verified"] is False, "GET confirms nothing"
    confirmed = client.post(path)
    assert confirmed.status_code == 200 and 'data-testid="confirmed"' in confirmed.content.decode()
    assert user_client.get(SETTINGS).json()["email_verified"] is True

    with django_capture_on_commit_callbacks(execute=True):
        _notify(user)
    assert len(mail.outbox) == 2 and mail.outbox[1].to == ["ana@example.org"]


def test_a_changed_address_is_unconfirmed_and_the_old_link_is_stale(set_email, client):
    set_email("ana@example.org")
    old_link = _link_path(mail.outbox[0])
    client.post(old_link)

    answer = set_email("other@example.org").json()

    assert answer["email_verified"] is False
    assert [m.to for m in mail.outbox] == [["ana@example.org"], ["other@example.org"]]
    stale = client.post(old_link)
    assert stale.status_code == 400
    assert escape(ERROR_LINK_STALE) in stale.content.decode()


def test_a_forged_or_expired_link_confirms_nothing(set_email, client, user_client, settings):
    set_email("ana@example.org")
    path = _link_path(mail.outbox[0])
    token = path.split("/")[-2]

    forged = client.post(path.replace(token, token[:-3] + "abc"))
    assert forged.status_code == 400 and escape(ERROR_LINK_BAD) in forged.content.decode()
    settings.ESCOBA_EMAIL_VERIFY_MAX_AGE_S = 0
    expired = client.post(path)
    assert expired.status_code == 400 and escape(ERROR_LINK_EXPIRED) in expired.content.decode()
    assert user_client.get(SETTINGS).json()["email_verified"] is False


def test_confirmation_mails_are_limited_per_user(set_email, user_client, monkeypatch):
    """Giving address after address would mail strangers on our behalf: 5 an hour."""
    monkeypatch.setitem(SimpleRateThrottle.THROTTLE_RATES, "verify_email", "5/hour")
    answers = [set_email(f"victim{n}@example.org").status_code for n in range(8)]

    assert answers == [200] * 5 + [429] * 3
    assert len(mail.outbox) == 5
    other_change = user_client.patch(SETTINGS, {"email_enabled": False}, format="json")
    assert other_change.status_code == 200
