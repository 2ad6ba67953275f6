"""`/api/notifications/` and `/api/notification-settings/` over Django's test client."""

import pytest
from rest_framework.test import APIClient

from tournaments.api.notifications import ERROR_EMAIL_TYPE, ERROR_WEBHOOK_TYPE
from tournaments.models import Notification
from tournaments.services.notifications import ERROR_EMAIL, EVENT_BOT_PAUSED, notification_send

pytestmark = pytest.mark.django_db

SETTINGS = "/api/notification-settings/"
ROTATE = "/api/notification-settings/rotate-secret/"
LIST = "/api/notifications/"


def errors(response) -> dict[str, list[str]]:
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "invalid"
    return response.json()["errors"]


def test_defaults_then_email_and_a_webhook_whose_secret_is_shown_once(user_client, receiver):
    assert user_client.get(SETTINGS).json() == {
        "email": "",
        "email_verified": False,
        "email_enabled": True,
        "webhook_url": "",
        "webhook_active": False,
        "webhook_failures": 0,
        "webhook_suspended_at": None,
    }
    answer = user_client.patch(
        SETTINGS, {"email": "ana@example.org", "webhook_url": receiver.url}, format="json"
    ).json()
    assert answer["email"] == "ana@example.org" and answer["webhook_active"] is True
    secret = answer["webhook_secret"]
    assert secret.startswith("whsec_")

    later = user_client.get(SETTINGS).json()
    assert "webhook_secret" not in later and later["webhook_url"] == receiver.url
    moved = user_client.patch(SETTINGS, {"webhook_url": receiver.url + "/v2"}, format="json")
    assert "webhook_secret" not in moved.json()  # kept across URL changes, not shown again

    rotated = user_client.post(ROTATE).json()["webhook_secret"]
    assert rotated.startswith("whsec_") and rotated != secret
    removed = user_client.patch(SETTINGS, {"webhook_url": ""}, format="json").json()
    assert (removed["webhook_url"], removed["webhook_active"]) == ("", False)


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"email": "not an address"}, "email", ERROR_EMAIL),
        ({"email": 12}, "email", ERROR_EMAIL_TYPE),
        ({"webhook_url": 12}, "webhook_url", ERROR_WEBHOOK_TYPE),
        ({"webhook_url": "ftp://example.org/"}, "webhook_url", None),
        ({"webhook_url": "http://169.254.169.254/latest/"}, "webhook_url", None),
        ({"webhook_url": "http://metadata.google.internal/"}, "webhook_url", None),
        ({"email_enabled": "perhaps"}, "email_enabled", None),
    ],
)
def test_bad_settings_are_a_400_on_the_field(user_client, body, field, message):
    found = errors(user_client.patch(SETTINGS, body, format="json"))
    assert list(found) == [field]
    if message is not None:
        assert found[field] == [message]
    if field == "webhook_url" and message is None:
        assert found[field][0].startswith("This webhook URL is not allowed: ")


def test_loopback_webhooks_are_refused_when_private_urls_are(user_client, settings, receiver):
    settings.ESCOBA_ALLOW_PRIVATE_BOT_URLS = False
    [message] = errors(user_client.patch(SETTINGS, {"webhook_url": receiver.url}, format="json"))[
        "webhook_url"
    ]
    assert "loopback" in message


def test_each_owner_lists_only_their_notifications_newest_first(user, user_client, bot):
    from django.contrib.auth import get_user_model

    other = get_user_model().objects.create_user(username="bruno")
    for _ in range(3):
        notification_send(user=user, event=EVENT_BOT_PAUSED, bot=bot)
    notification_send(user=other, event=EVENT_BOT_PAUSED, bot=bot)

    page = user_client.get(LIST).json()
    assert page["count"] == 3 and {"next", "previous"} <= set(page)
    ids = [item["id"] for item in page["results"]]
    assert ids == sorted(ids, reverse=True)
    first = page["results"][0]
    assert first["event"] == EVENT_BOT_PAUSED and first["bot"] == {"id": bot.pk, "name": "broom"}
    assert set(first) == {
        "id", "event", "bot", "subject", "message", "data", "email_status", "webhook_status",
        "webhook_attempts", "webhook_error", "created_at",
    }  # fmt: skip
    assert Notification.objects.count() == 4


def test_anonymous_users_get_401(api_client):
    for method, path in (("get", LIST), ("get", SETTINGS), ("patch", SETTINGS), ("post", ROTATE)):
        assert getattr(APIClient(), method)(path).status_code == 401


def test_the_schema_documents_the_routes(api_client):
    paths = api_client.get("/api/schema/", {"format": "json"}).json()["paths"]
    assert {LIST, SETTINGS, ROTATE} <= set(paths)
