"""A bot that refuses every unsigned call can register, and refusals are in our words.

The bots here are real HTTP servers on loopback: a strict one that checks the Standard Webhooks
signature of every request (`GET /` included), and misbehaving ones (tests/fakebots/http_bots.py).
"""

import base64
import secrets

import pytest

from tests.fakebots.http_bots import StrictBot, refused_url
from tournaments import bot_messages
from tournaments.api.bot_serializers import ERROR_NAME_TYPE, ERROR_SECRET_TYPE, ERROR_URL_TYPE
from tournaments.models import Bot
from tournaments.services.bots import (
    ERROR_SECRET_BASE64,
    ERROR_SECRET_LENGTH,
    ERROR_SECRET_PREFIX,
    bot_check,
    bot_rotate_secret,
)

pytestmark = pytest.mark.django_db

BOTS = "/api/bots/"


def own_secret(size: int = 24) -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(size)).decode()


def field_errors(response) -> dict[str, list[str]]:
    assert response.status_code == 400, response.content
    body = response.json()
    assert set(body) == {"detail", "code", "errors"} and body["code"] == "invalid"
    return body["errors"]


def test_a_strict_bot_registers_with_its_own_secret_and_every_call_is_signed(user_client):
    secret = own_secret()
    with StrictBot(secret) as strict:
        response = user_client.post(
            BOTS, {"name": "strict", "url": strict.url, "secret": secret}, format="json"
        )
        assert response.status_code == 201, response.json()
        assert response.json()["secret"] == secret
        assert strict.calls == [("GET", "/", True)]
        bot = Bot.objects.get()
        assert bot.secret == secret and bot.protocol_name == "strict"

        check = bot_check(bot=bot)
        assert check.passed, check.report
        # Every call was signed and accepted but the check's forged one, which was refused.
        refused = [call for call in strict.calls if not call[2]]
        assert refused == [("POST", "/move", False)]
        assert {path for _, path, _ in strict.calls} >= {"/", "/move", "/start", "/end"}
        assert check.report["results"][-1]["name"] == "signature"


def test_without_a_secret_the_first_get_is_unsigned_and_the_401_says_so(user_client):
    with StrictBot(own_secret()) as strict:
        response = user_client.post(BOTS, {"name": "strict", "url": strict.url}, format="json")
        [message] = field_errors(response)["url"]
        assert strict.calls == [("GET", "/", False)]
    assert message == bot_messages.UNSIGNED_401.format(url=strict.url)
    assert "unsigned" in message and '"secret"' in message
    assert not Bot.objects.exists()


def test_a_secret_the_bot_does_not_have_is_named_in_the_401(user_client):
    with StrictBot(own_secret()) as strict:
        response = user_client.post(
            BOTS, {"name": "strict", "url": strict.url, "secret": own_secret()}, format="json"
        )
        [message] = field_errors(response)["url"]
    assert message == bot_messages.SIGNED_401.format(url=strict.url)


def test_a_bot_that_does_not_check_signatures_gets_the_secret_it_was_given(user_client, greedy_bot):
    secret = own_secret(64)
    response = user_client.post(
        BOTS, {"name": "lenient", "url": greedy_bot, "secret": f"  {secret} "}, format="json"
    )
    assert response.status_code == 201
    assert Bot.objects.get().secret == secret


@pytest.mark.parametrize(
    ("secret", "message"),
    [
        ("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", ERROR_SECRET_PREFIX),
        ("whsec_", ERROR_SECRET_BASE64),
        ("whsec_not base64!", ERROR_SECRET_BASE64),
        ("whsec_a-b_" + "A" * 30, ERROR_SECRET_BASE64),
        ("whsec_A", ERROR_SECRET_BASE64),
        ("whsec_" + base64.b64encode(b"x" * 16).decode(), ERROR_SECRET_LENGTH.format(size=16)),
        ("whsec_" + base64.b64encode(b"x" * 65).decode(), None),
        (12, ERROR_SECRET_TYPE),
        (["whsec_x"], ERROR_SECRET_TYPE),
    ],
)
def test_a_bad_secret_is_refused_before_the_bot_is_called(user_client, secret, message):
    with StrictBot(own_secret()) as strict:
        response = user_client.post(
            BOTS, {"name": "strict", "url": strict.url, "secret": secret}, format="json"
        )
        errors = field_errors(response)
        assert strict.calls == []
    assert list(errors) == ["secret"]
    if message is not None:
        assert errors["secret"] == [message]


def test_numbers_for_strings_are_refused_in_our_words(user_client):
    errors = field_errors(user_client.post(BOTS, {"name": 7, "url": 12}, format="json"))
    assert errors == {"name": [ERROR_NAME_TYPE], "url": [ERROR_URL_TYPE]}


def test_an_unreachable_bot_is_named_by_host_and_port(user_client):
    url = refused_url()
    port = url.rsplit(":", 1)[1]
    [message] = field_errors(user_client.post(BOTS, {"name": "gone", "url": url}, format="json"))[
        "url"
    ]
    assert message == bot_messages.CONNECT_REFUSED.format(where=f"127.0.0.1:{port}")
    assert "Cannot connect" not in message and "ssl:default" not in message


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("wrong_protocol", 'its GET answer must have "protocol": "escoba/1"; it had "chess/1".'),
        ("no_protocol", 'its GET answer must have "protocol": "escoba/1"; it had none.'),
        ("bad_json", "The bot's GET answer is not JSON; it must be {"),
        ("not_found", "with HTTP 404; it must answer 200 with {"),
    ],
)
def test_replies_that_are_not_escoba_say_what_was_expected(
    user_client, misbehaving, mode, expected
):
    response = user_client.post(BOTS, {"name": "odd", "url": misbehaving(mode)}, format="json")
    [message] = field_errors(response)["url"]
    assert expected in message
    assert "expected 'escoba/1'" not in message and "char 0" not in message


def test_after_a_rotation_the_check_says_the_bot_probably_has_the_old_secret(user):
    from tournaments.services.bots import bot_register

    secret = own_secret()
    with StrictBot(secret) as strict:
        bot = bot_register(owner=user, name="strict", url=strict.url, secret=secret)
        assert bot_check(bot=bot).passed

        bot_rotate_secret(bot=bot)
        bot.refresh_from_db()
        assert bot.secret_rotated_at is not None
        report = bot_check(bot=bot).report
    hint = report["results"][-1]
    assert (hint["name"], hint["status"]) == ("secret", "warn")
    assert "probably still has the old secret" in hint["detail"]
    assert not report["ok"]


def test_a_401_without_a_rotation_hints_at_the_current_secret(user, greedy_bot):
    secret = own_secret()
    with StrictBot(own_secret()) as strict:  # never had our secret
        bot = Bot.objects.create(owner=user, name="strict", url=strict.url, secret=secret)
        report = bot_check(bot=bot).report
    assert report["results"][-1]["detail"] == bot_messages.HINT_WRONG_SECRET


def test_a_passing_check_has_no_secret_hint(user, greedy_bot):
    bot = Bot.objects.create(owner=user, name="plain", url=greedy_bot, secret=own_secret())
    bot_rotate_secret(bot=bot)
    report = bot_check(bot=bot).report
    assert report["ok"] and "secret" not in {r["name"] for r in report["results"]}
