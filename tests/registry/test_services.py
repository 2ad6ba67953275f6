"""The registry's services against real bots on loopback: registration, updates, health."""

import base64
import threading
import time

import pytest
from django.core.exceptions import ValidationError

from tests.fakebots.http_bots import refused_url
from tests.registry.conftest import TIMEOUT_MS
from tournaments.models import Bot, BotCheck, Game, League, Match, Seat
from tournaments.selectors.leagues import bots_schedulable
from tournaments.services import bots as registry
from tournaments.services.bots import (
    ERROR_HAS_PLAYED,
    ERROR_NAME_FORMAT,
    ERROR_NAME_TAKEN,
    ERROR_TOO_MANY_BOTS,
    bot_check,
    bot_delete,
    bot_pause,
    bot_register,
    bot_resume,
    bot_rotate_secret,
    bot_update,
    new_secret,
)

pytestmark = pytest.mark.django_db


def errors_of(excinfo: pytest.ExceptionInfo[ValidationError]) -> dict[str, list[str]]:
    return excinfo.value.message_dict


def test_secret_is_standard_webhooks_with_24_random_bytes():
    secrets = {new_secret() for _ in range(50)}
    assert len(secrets) == 50
    for secret in secrets:
        assert secret.startswith("whsec_")
        assert len(base64.b64decode(secret.removeprefix("whsec_"), validate=True)) == 24


def test_register_verifies_and_keeps_the_protocol_info(user, greedy_bot):
    bot = bot_register(owner=user, name="greedy-1", url=greedy_bot, description=" mine ")

    bot.refresh_from_db()
    assert (bot.owner, bot.name, bot.url, bot.description) == (user, "greedy-1", greedy_bot, "mine")
    assert (bot.protocol_name, bot.protocol_version) == ("greedy", "1")
    assert (bot.status, bot.health, bot.check_failures) == ("active", "unknown", 0)
    assert bot.secret.startswith("whsec_")


@pytest.mark.parametrize(
    "name",
    [
        "",
        " ",
        "a" * 41,
        "-lead",
        "with space",
        "tab\tbed",
        "nul\x00",
        "ünïcode",
        "semi;colon",
        "slash/name",
    ],
)
def test_register_refuses_bad_names_before_calling_the_bot(user, name):
    with pytest.raises(ValidationError) as excinfo:
        bot_register(owner=user, name=name, url=refused_url())
    assert errors_of(excinfo) == {"name": [ERROR_NAME_FORMAT]}


def test_names_are_unique_ignoring_case(user, other_user, greedy_bot):
    bot_register(owner=user, name="Greedy", url=greedy_bot)
    with pytest.raises(ValidationError) as excinfo:
        bot_register(owner=other_user, name="greedy", url=greedy_bot)
    assert errors_of(excinfo) == {"name": [ERROR_NAME_TAKEN]}
    assert Bot.objects.count() == 1


def test_an_owner_has_a_limited_number_of_bots(user, greedy_bot, settings):
    settings.ESCOBA_MAX_BOTS_PER_OWNER = 2
    bot_register(owner=user, name="one", url=greedy_bot)
    bot_register(owner=user, name="two", url=greedy_bot)
    with pytest.raises(ValidationError) as excinfo:
        bot_register(owner=user, name="three", url=greedy_bot)
    assert excinfo.value.messages == [ERROR_TOO_MANY_BOTS.format(limit=2)]


def test_register_refuses_a_private_address_when_not_allowed(user, greedy_bot, settings):
    settings.ESCOBA_ALLOW_PRIVATE_BOT_URLS = False
    with pytest.raises(ValidationError) as excinfo:
        bot_register(owner=user, name="local", url=greedy_bot)
    [message] = errors_of(excinfo)["url"]
    assert message == "The bot's address is not allowed: 127.0.0.1 is a loopback address"
    assert not Bot.objects.exists()


def test_update_with_a_new_url_verifies_it_and_resets_health(user, greedy_bot, misbehaving):
    bot = bot_register(owner=user, name="mover", url=greedy_bot)
    Bot.objects.filter(pk=bot.pk).update(health="healthy", check_failures=2)
    bot.refresh_from_db()

    with pytest.raises(ValidationError) as excinfo:
        bot_update(bot=bot, url=misbehaving("wrong_protocol"))
    assert "escoba/1" in errors_of(excinfo)["url"][0]
    bot.refresh_from_db()
    assert (bot.url, bot.health, bot.check_failures) == (greedy_bot, "healthy", 2)

    new_url = greedy_bot + "/"
    bot_update(bot=bot, url=new_url, description="moved")
    bot.refresh_from_db()
    assert (bot.url, bot.description, bot.health, bot.check_failures) == (
        new_url,
        "moved",
        "unknown",
        0,
    )


def test_update_without_a_url_change_does_not_call_the_bot(user, greedy_bot, misbehaving):
    url = misbehaving("error")
    bot = Bot.objects.create(owner=user, name="quiet", url=url, secret=new_secret())
    bot_update(bot=bot, url=url, name="Quiet", description="renamed only")
    bot.refresh_from_db()
    assert (bot.name, bot.description) == ("Quiet", "renamed only")


def test_pause_resume_and_scheduling(user, greedy_bot):
    bot = bot_register(owner=user, name="sched", url=greedy_bot)
    assert list(bots_schedulable()) == [bot]
    bot_pause(bot=bot)
    assert Bot.objects.get(pk=bot.pk).status == "paused"
    assert not bots_schedulable().exists()
    bot_resume(bot=bot)
    assert list(bots_schedulable()) == [bot]


def test_rotate_secret_replaces_it(user, greedy_bot):
    bot = bot_register(owner=user, name="rotor", url=greedy_bot)
    old = bot.secret
    bot_rotate_secret(bot=bot)
    bot.refresh_from_db()
    assert bot.secret != old and bot.secret.startswith("whsec_")


def test_health_goes_unhealthy_after_repeated_failures_and_back(user, switchable_bot, settings):
    settings.ESCOBA_BOT_UNHEALTHY_AFTER = 3
    bot = bot_register(owner=user, name="flaky", url=switchable_bot.url)

    check = bot_check(bot=bot)
    bot.refresh_from_db()
    assert check.passed and check.report["ok"]
    assert (bot.health, bot.check_failures) == ("healthy", 0)
    assert bot.last_check_report == check.report and bot.last_checked_at is not None
    assert bot.last_latency_ms == check.latency_ms and check.latency_ms > 0

    switchable_bot.broken = True
    for failures in (1, 2):
        check = bot_check(bot=bot)
        bot.refresh_from_db()
        assert not check.passed
        assert (bot.health, bot.check_failures) == ("healthy", failures)
        assert list(bots_schedulable()) == [bot]

    bot_check(bot=bot)
    bot.refresh_from_db()
    assert (bot.health, bot.check_failures) == ("unhealthy", 3)
    assert not bots_schedulable().exists()
    bot_check(bot=bot)
    assert Bot.objects.get(pk=bot.pk).check_failures == 4

    switchable_bot.broken = False
    bot_check(bot=bot, trigger=BotCheck.Trigger.SCHEDULE)
    bot.refresh_from_db()
    assert (bot.health, bot.check_failures) == ("healthy", 0)
    assert list(bots_schedulable()) == [bot]
    assert list(bot.checks.values_list("passed", flat=True)) == [
        True,
        False,
        False,
        False,
        False,
        True,
    ]
    assert bot.checks.first().trigger == "schedule"


def test_a_failing_report_says_why(user, switchable_bot):
    bot = bot_register(owner=user, name="explains", url=switchable_bot.url)
    switchable_bot.broken = True
    check = bot_check(bot=bot)
    failed = [r for r in check.report["results"] if r["status"] == "fail"]
    assert failed and all("500" in r["detail"] for r in failed)
    assert all(r["name"].startswith("move:") for r in failed)


def test_check_refuses_an_address_no_longer_allowed_without_calling_it(user, misbehaving, settings):
    url = misbehaving("error")
    bot = Bot.objects.create(owner=user, name="was-ok", url=url, secret=new_secret())
    settings.ESCOBA_ALLOW_PRIVATE_BOT_URLS = False
    check = bot_check(bot=bot)
    [result] = check.report["results"]
    assert not check.passed
    assert result["name"] == "url"
    assert result["detail"] == "The bot's address is not allowed: 127.0.0.1 is a loopback address"
    assert Bot.objects.get(pk=bot.pk).check_failures == 1


def test_check_of_an_unreachable_bot_fails_quickly(user):
    bot = Bot.objects.create(owner=user, name="gone", url=refused_url(), secret=new_secret())
    check = bot_check(bot=bot)
    assert not check.passed
    assert check.report["results"][0]["name"] == "info"
    assert "unreachable" in check.report["results"][0]["detail"]


def test_check_has_one_overall_deadline_even_for_a_dripping_bot(
    user, misbehaving, monkeypatch, settings
):
    # Each request may take 5 s, but the check as a whole is given up on after 0.6 s.
    settings.ESCOBA_BOT_CHECK_TIMEOUT_MS = 5000
    monkeypatch.setattr(registry, "_check_deadline_s", lambda timeout_ms: 0.6)
    bot = Bot.objects.create(owner=user, name="drip", url=misbehaving("drip"), secret=new_secret())
    started = time.monotonic()
    check = bot_check(bot=bot)
    assert time.monotonic() - started < 1.5
    assert not check.passed
    assert check.report["results"][-1]["detail"] == registry.ERROR_CHECK_TOO_LONG.format(
        seconds=0.6
    )


def test_a_dripping_bot_cannot_keep_a_check_thread_alive(user, misbehaving):
    bot = Bot.objects.create(owner=user, name="drip2", url=misbehaving("drip"), secret=new_secret())
    started = time.monotonic()
    check = bot_check(bot=bot)
    assert time.monotonic() - started < TIMEOUT_MS / 1000 + 0.5
    [result] = check.report["results"]
    assert result["detail"] == f"no complete answer within {TIMEOUT_MS} ms"
    # The check gave up on its own at its deadline: no thread is left reading the drip.
    time.sleep(0.1)
    assert not [t for t in threading.enumerate() if t.name.startswith("bot-check")]


def test_a_signed_check_passes_the_bots_own_signature_check(user, greedy_bot):
    from bots_sdk import serve_in_thread
    from bots_sdk.examples import greedy

    bot = bot_register(owner=user, name="signed", url=greedy_bot)
    with serve_in_thread(greedy.choose, secret=bot.secret) as verifying:
        bot_update(bot=bot, url=verifying.url)
        check = bot_check(bot=bot)
        assert check.passed
        signature = check.report["results"][-1]
        assert (signature["name"], signature["status"]) == ("signature", "pass")

        bot_rotate_secret(bot=bot)
        check = bot_check(bot=bot)  # the bot still trusts only the old secret
        assert not check.passed
        moves = [r for r in check.report["results"] if r["name"].startswith("move:")]
        assert moves and all(r["detail"].startswith("HTTP 401") for r in moves)


def _seat(bot: Bot) -> Seat:
    league = League.objects.create(
        name="l", creator=bot.owner, ruleset={}, pool="classic/2p", players=2, seed=1
    )
    match = Match.objects.create(league=league, number=1, round=1, seed=1)
    game = Game.objects.create(league=league, match=match, number=1, seed=1, seating=[bot.pk])
    return Seat.objects.create(game=game, seat=0, team=0, bot=bot)


def test_delete_only_a_bot_that_never_played(user):
    idle = Bot.objects.create(owner=user, name="idle", url="http://127.0.0.1:9", secret="s")
    bot_delete(bot=idle)
    assert not Bot.objects.filter(name="idle").exists()

    played = Bot.objects.create(owner=user, name="played", url="http://127.0.0.1:9", secret="s")
    _seat(played)
    with pytest.raises(ValidationError) as excinfo:
        bot_delete(bot=played)
    assert excinfo.value.messages == [ERROR_HAS_PLAYED]
    assert Bot.objects.filter(name="played").exists()


def test_bots_due_for_check(user):
    from datetime import timedelta

    from django.utils import timezone

    now = timezone.now()

    def make(name: str, **fields) -> Bot:
        return Bot.objects.create(
            owner=user, name=name, url="http://127.0.0.1:9", secret="s", **fields
        )

    stale = make("stale", last_checked_at=now - timedelta(hours=2))
    never = make("never")
    make("fresh", last_checked_at=now - timedelta(minutes=5))
    make("paused", status="paused")
    sick = make("sick", health="unhealthy", last_checked_at=now - timedelta(hours=1))

    assert list(registry.bots_due_for_check(every_s=1800)) == [never, stale, sick]


def test_check_history_is_bounded(user, greedy_bot, monkeypatch):
    monkeypatch.setattr(registry, "KEEP_CHECKS", 2)
    bot = bot_register(owner=user, name="busy", url=greedy_bot)
    checks = [bot_check(bot=bot) for _ in range(4)]
    assert list(bot.checks.values_list("id", flat=True)) == [checks[3].pk, checks[2].pk]
