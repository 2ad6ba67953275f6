"""`/api/bots/` over Django's test client, with real bots on loopback.

Every refusal must be a 400 (or 403/404) with the API's error body and a message on the right
field, never a 500.
"""

import pytest
from rest_framework.test import APIClient

from tests.fakebots.http_bots import refused_url
from tournaments import messages
from tournaments.models import Bot, BotCheck
from tournaments.services.bots import ERROR_NAME_FORMAT, ERROR_NAME_TAKEN

pytestmark = pytest.mark.django_db

BOTS = "/api/bots/"
PUBLIC_FIELDS = {
    "id",
    "name",
    "owner",
    "description",
    "status",
    "health",
    "accepts_challenges",
    "ratings",
    "created_at",
    "version",
    "versions",
    "rated_play",
    "no_shows",
    "no_shows_in_row",
}
OWNER_FIELDS = PUBLIC_FIELDS | {
    "url",
    "check_failures",
    "last_checked_at",
    "last_latency_ms",
    "last_check_report",
    "protocol_name",
    "protocol_author",
    "protocol_version",
    "updated_at",
}


def register(client: APIClient, url: str, name: str = "greedy", **extra) -> dict:
    response = client.post(BOTS, {"name": name, "url": url, **extra}, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def url_error(response) -> str:
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["code"] == "invalid" and body["detail"] == messages.VALIDATION_FAILED
    assert list(body["errors"]) == ["url"]
    [message] = body["errors"]["url"]
    return message


def test_register_shows_the_secret_only_then(user_client, greedy_bot):
    created = register(user_client, greedy_bot, description="takes the most cards")
    assert set(created) == OWNER_FIELDS | {"secret"}
    assert created["secret"].startswith("whsec_")
    assert created["owner"] == "ana" and created["url"] == greedy_bot
    assert (created["status"], created["health"], created["protocol_name"]) == (
        "active",
        "unknown",
        "greedy",
    )
    assert Bot.objects.get().secret == created["secret"]

    again = user_client.get(f"{BOTS}{created['id']}/").json()
    assert set(again) == OWNER_FIELDS
    listed = user_client.get(BOTS).json()["results"]
    assert [set(item) for item in listed] == [OWNER_FIELDS]
    assert created["secret"] not in str(again) + str(listed)


def test_others_see_only_public_fields(user_client, other_client, greedy_bot):
    created = register(user_client, greedy_bot)
    for client in (other_client, APIClient()):
        one = client.get(f"{BOTS}{created['id']}/")
        assert one.status_code == 200
        assert set(one.json()) == PUBLIC_FIELDS
        assert one.json()["owner"] == "ana"
        [listed] = client.get(BOTS).json()["results"]
        assert set(listed) == PUBLIC_FIELDS
        assert greedy_bot not in str(one.json()) + str(listed)


def test_list_mine_and_ratings(user_client, other_client, greedy_bot):
    from tournaments.models import BotVersion, Rating

    mine = register(user_client, greedy_bot, name="mine")
    theirs = register(other_client, greedy_bot, name="theirs")
    version = BotVersion.objects.get(bot_id=theirs["id"])  # noted at registration
    Rating.objects.create(
        bot_id=theirs["id"], version=version, pool="classic/2p", rating="1512.50",
        rating_low="1400.00", rating_high="1625.00", games=4, sets=2,
    )  # fmt: skip

    assert [b["name"] for b in user_client.get(BOTS).json()["results"]] == ["mine", "theirs"]
    assert [b["id"] for b in user_client.get(BOTS, {"mine": "true"}).json()["results"]] == [
        mine["id"]
    ]
    assert APIClient().get(BOTS, {"mine": "1"}).json()["results"] == []
    public = APIClient().get(f"{BOTS}{theirs['id']}/").json()
    (rating,) = public["ratings"]
    assert {key: rating[key] for key in ("pool", "rating", "games")} == {
        "pool": "classic/2p",
        "rating": 1512.5,  # a JSON number
        "games": 4,
    }
    assert (rating["rating_low"], rating["rating_high"], rating["sets"]) == (1400.0, 1625.0, 2)


def test_anonymous_users_cannot_register(api_client, greedy_bot):
    response = api_client.post(BOTS, {"name": "anon", "url": greedy_bot}, format="json")
    assert response.status_code == 401
    assert not Bot.objects.exists()


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("wrong_protocol", "does not speak escoba/1"),
        ("slow", "did not answer in time"),
        ("error", "HTTP 500"),
        ("bad_json", "not JSON"),
        ("redirect", "redirect"),
        ("huge", "too large"),
        ("drip", "did not answer in time"),
    ],
)
def test_register_gives_the_exact_reason_a_bot_is_refused(user_client, misbehaving, mode, expected):
    response = user_client.post(BOTS, {"name": "bad", "url": misbehaving(mode)}, format="json")
    assert expected in url_error(response)
    assert not Bot.objects.exists()


def test_register_refuses_an_unreachable_bot(user_client):
    response = user_client.post(BOTS, {"name": "gone", "url": refused_url()}, format="json")
    assert "unreachable" in url_error(response)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("ftp://example.com/bot", "only http and https"),
        ("http://user:pw@example.com/", "user name or password"),
        ("http://169.254.169.254/latest/", "link-local"),
        ("http://metadata.google.internal/", "metadata"),
        ("http://0x7f.1/", "four decimal numbers"),
        ("not a url", "spaces"),
        ("http://[::1", "IPv6"),
        ("http://example.com/?q=1", "no query"),
    ],
)
def test_register_refuses_urls_that_are_not_allowed(user_client, url, expected):
    response = user_client.post(BOTS, {"name": "sneaky", "url": url}, format="json")
    assert expected in url_error(response)


def test_private_addresses_are_refused_when_the_setting_is_off(user_client, greedy_bot, settings):
    settings.ESCOBA_ALLOW_PRIVATE_BOT_URLS = False
    for url in (
        greedy_bot,
        greedy_bot.replace("127.0.0.1", "localhost"),
        "http://10.1.2.3/",
        "http://[::1]:8001/",
        "http://[::ffff:127.0.0.1]/",
        "http://100.64.0.1/",
    ):
        response = user_client.post(BOTS, {"name": "local", "url": url}, format="json")
        assert "not allowed" in url_error(response), url
    assert not Bot.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"url": "http://x.example/"}, "name"),
        ({"name": "x"}, "url"),
        ({"name": None, "url": "http://x.example/"}, "name"),
        ({"name": ["a"], "url": "http://x.example/"}, "name"),
        ({"name": {"a": 1}, "url": "http://x.example/"}, "name"),
        ({"name": True, "url": "http://x.example/"}, "name"),
        ({"name": "x", "url": 12}, "url"),
        ({"name": "x", "url": ["http://x.example/"]}, "url"),
        ({"name": "nul\x00byte", "url": "http://x.example/"}, "name"),
        ({"name": "x", "url": "http://x.example/\x00"}, "url"),
        ({"name": "x", "url": "http://x.example/", "description": "\x00"}, "description"),
        ({"name": "x" * 100_000, "url": "http://x.example/"}, "name"),
        ({"name": "x", "url": "http://x.example/" + "a" * 100_000}, "url"),
        ({"name": "x", "url": "http://x.example/", "description": "d" * 100_000}, "description"),
        ({"name": "x", "url": "http://x.example/", "description": 7.5}, None),
    ],
)
def test_malformed_input_is_a_400_on_the_field(user_client, body, field):
    response = user_client.post(BOTS, body, format="json")
    assert response.status_code == 400
    errors = response.json()["errors"]
    if field is None:  # a number is a fine description, but the URL then fails verification
        assert list(errors) == ["url"]
    else:
        assert field in errors


def test_bad_names_and_taken_names(user_client, other_client, greedy_bot):
    response = user_client.post(BOTS, {"name": "two words", "url": greedy_bot}, format="json")
    assert response.json()["errors"] == {"name": [ERROR_NAME_FORMAT]}
    register(user_client, greedy_bot, name="Taken")
    response = other_client.post(BOTS, {"name": "taken", "url": greedy_bot}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == {"name": [ERROR_NAME_TAKEN]}


@pytest.mark.parametrize("raw", [b"{not json", b"[1, 2]", b'"text"', b"null", b"\xff\xfe"])
def test_bodies_that_are_not_an_object_are_400(user_client, raw):
    response = user_client.post(BOTS, raw, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["code"] in ("invalid", "parse_error")


@pytest.mark.parametrize(
    "bot_id", ["abc", "0", "-1", "1.5", "99999999999999999999999", "%C2%B9", "1e3", "999"]
)
@pytest.mark.parametrize(
    ("method", "suffix"),
    [
        ("get", ""),
        ("patch", ""),
        ("delete", ""),
        ("post", "pause/"),
        ("post", "resume/"),
        ("post", "rotate-secret/"),
        ("post", "check/"),
        ("get", "checks/"),
    ],
)
def test_bad_ids_are_404(user_client, bot_id, method, suffix):
    response = getattr(user_client, method)(f"{BOTS}{bot_id}/{suffix}", format="json")
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


@pytest.mark.parametrize(
    ("method", "suffix"),
    [
        ("patch", ""),
        ("delete", ""),
        ("post", "pause/"),
        ("post", "resume/"),
        ("post", "rotate-secret/"),
        ("post", "check/"),
        ("get", "checks/"),
    ],
)
def test_only_the_owner_manages_a_bot(user_client, other_client, greedy_bot, method, suffix):
    created = register(user_client, greedy_bot)
    before = Bot.objects.values().get()
    response = getattr(other_client, method)(
        f"{BOTS}{created['id']}/{suffix}", {"description": "hijacked"}, format="json"
    )
    assert response.status_code == 403
    assert response.json()["code"] == "permission_denied"
    assert "secret" not in response.json()
    anonymous = getattr(APIClient(), method)(f"{BOTS}{created['id']}/{suffix}", format="json")
    assert anonymous.status_code == 401
    assert Bot.objects.values().get() == before
    assert not BotCheck.objects.exists()


def test_update_is_verified_again(user_client, greedy_bot, misbehaving):
    created = register(user_client, greedy_bot)
    detail = f"{BOTS}{created['id']}/"

    response = user_client.patch(detail, {"url": misbehaving("error")}, format="json")
    assert "HTTP 500" in url_error(response)
    assert Bot.objects.get().url == greedy_bot

    response = user_client.patch(
        detail, {"description": "new words", "name": "greedier"}, format="json"
    )
    assert response.status_code == 200
    assert (response.json()["name"], response.json()["description"]) == ("greedier", "new words")
    assert "secret" not in response.json()
    assert user_client.put(detail, {"name": "x"}, format="json").status_code == 405


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "bad name"}, "name"),
        ({"name": "other"}, "name"),
        ({"name": "nul\x00"}, "name"),
        ({"name": None}, "name"),
        ({"url": "http://x.example/\x00"}, "url"),
        ({"url": ["x"]}, "url"),
        ({"url": "http://x.example/" + "a" * 100_000}, "url"),
        ({"description": "d" * 100_000}, "description"),
        ({"description": {"text": "x"}}, "description"),
    ],
)
def test_malformed_updates_are_a_400_on_the_field(user_client, greedy_bot, body, field):
    created = register(user_client, greedy_bot)
    register(user_client, greedy_bot, name="other")
    before = Bot.objects.values().get(pk=created["id"])
    response = user_client.patch(f"{BOTS}{created['id']}/", body, format="json")
    assert response.status_code == 400
    assert list(response.json()["errors"]) == [field]
    assert Bot.objects.values().get(pk=created["id"]) == before


def test_pause_and_resume(user_client, greedy_bot):
    created = register(user_client, greedy_bot)
    paused = user_client.post(f"{BOTS}{created['id']}/pause/")
    assert paused.status_code == 200 and paused.json()["status"] == "paused"
    assert Bot.objects.get().status == "paused"
    resumed = user_client.post(f"{BOTS}{created['id']}/resume/")
    assert resumed.status_code == 200 and resumed.json()["status"] == "active"


def test_rotate_secret_shows_a_new_secret_once(user_client, greedy_bot):
    created = register(user_client, greedy_bot)
    response = user_client.post(f"{BOTS}{created['id']}/rotate-secret/")
    assert response.status_code == 200
    secret = response.json()["secret"]
    assert secret.startswith("whsec_") and secret != created["secret"]
    assert Bot.objects.get().secret == secret
    assert "secret" not in user_client.get(f"{BOTS}{created['id']}/").json()


def test_check_returns_the_report_and_updates_health(user_client, switchable_bot, settings):
    settings.ESCOBA_BOT_UNHEALTHY_AFTER = 2
    created = register(user_client, switchable_bot.url)
    check_url = f"{BOTS}{created['id']}/check/"

    passed = user_client.post(check_url)
    assert passed.status_code == 200
    body = passed.json()
    assert (body["passed"], body["health"], body["check_failures"], body["trigger"]) == (
        True,
        "healthy",
        0,
        "owner",
    )
    assert body["report"]["ok"] and body["report"]["url"] == switchable_bot.url
    assert {r["name"] for r in body["report"]["results"]} >= {"info", "move: sweep"}

    switchable_bot.broken = True
    assert user_client.post(check_url).json()["health"] == "healthy"
    failed = user_client.post(check_url).json()
    assert (failed["passed"], failed["health"], failed["check_failures"]) == (False, "unhealthy", 2)
    bot = user_client.get(f"{BOTS}{created['id']}/").json()
    assert bot["health"] == "unhealthy" and bot["last_check_report"] == failed["report"]

    history = user_client.get(f"{BOTS}{created['id']}/checks/").json()
    assert history["count"] == 3
    assert [c["passed"] for c in history["results"]] == [False, False, True]


def test_delete(user_client, greedy_bot):
    created = register(user_client, greedy_bot)
    assert user_client.delete(f"{BOTS}{created['id']}/").status_code == 204
    assert user_client.get(f"{BOTS}{created['id']}/").status_code == 404
    assert not Bot.objects.exists()


def test_calls_to_bots_are_throttled(user_client, greedy_bot, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "bot_calls": "3/minute",
        },
    }
    created = register(user_client, greedy_bot)
    check_url = f"{BOTS}{created['id']}/check/"
    assert [user_client.post(check_url).status_code for _ in range(3)] == [200, 200, 429]
    assert user_client.get(f"{BOTS}{created['id']}/").status_code == 200


def test_the_schema_documents_the_bot_routes(api_client):
    schema = api_client.get("/api/schema/", {"format": "json"}).json()
    paths = schema["paths"]
    assert {
        "/api/bots/",
        "/api/bots/{id}/",
        "/api/bots/{id}/check/",
        "/api/bots/{id}/rotate-secret/",
    } <= set(paths)
    assert "201" in paths["/api/bots/"]["post"]["responses"]
