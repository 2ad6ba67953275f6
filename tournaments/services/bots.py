"""The bot registry: registering bots, changing them, and checking that they still play.

A bot is verified when it is registered and whenever its URL changes (`GET U` must answer
`escoba/1` in time, through the hardened caller of `tournaments.bot_calls`). The fuller protocol
check (`games.protocol_check`: scripted positions, legality, latency, through the same caller) runs
when the owner or an admin asks, and for every bot `bots_due_for_check` lists when a periodic
task calls `bot_check`. A bot that fails it `ESCOBA_BOT_UNHEALTHY_AFTER` times in a row is
unhealthy and is not scheduled (`selectors.bots_schedulable`) until a check passes again.

A bot's owner may bring its signing secret at registration (then even the first `GET U` is
signed, so a bot that refuses every unsigned call can register) or let us make one. The owner
is notified (`services.notifications`) when someone else pauses the bot, when it turns
unhealthy, and when it recovers.

No database transaction is held open while a bot is being called: bots may be slow.
"""

import asyncio
import base64
import binascii
import logging
import re
from datetime import timedelta
from typing import Any

from asgiref.sync import async_to_sync
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from games.faults import Fault, FaultKind
from games.protocol_check import FAIL, MAX_CALLS, WARN, CheckReport
from games.signing import SECRET_PREFIX, new_secret
from tournaments.bot_calls.caller import check_bot_info, run_protocol_check
from tournaments.bot_messages import info_fault_message, refused_signature, secret_hint
from tournaments.models import Bot, BotCheck
from tournaments.read_cache import reads_changed
from tournaments.services.bot_versions import bot_version_observe
from tournaments.services.no_shows import NO_SHOW_FIELDS, bot_no_shows_clear, bot_recheck_failed
from tournaments.services.notifications import (
    EVENT_BOT_HEALTHY,
    EVENT_BOT_PAUSED,
    EVENT_BOT_RATED_RESUMED,
    EVENT_BOT_UNHEALTHY,
    notification_send,
)

logger = logging.getLogger(__name__)

ERROR_NAME_FORMAT = (
    "Use 1 to 40 characters: letters, digits, '.', '_' or '-', starting with a letter or digit."
)
ERROR_NAME_TAKEN = "A bot with this name already exists."
ERROR_TOO_MANY_BOTS = "You already have {limit} bots; delete one before registering another."
ERROR_HAS_PLAYED = (
    "This bot has played league games, which stay in the records; pause it instead of deleting it."
)
ERROR_CHECK_TOO_LONG = "The check did not finish within {seconds:g} s."
ERROR_CHECK_CRASHED = "The check itself failed ({error}); please report it."
ERROR_SECRET_PREFIX = (
    "A secret is whsec_ followed by the base64 of 24 to 64 random bytes (Standard Webhooks), "
    "e.g. the output of: echo whsec_$(head -c 24 /dev/urandom | base64)"
)
ERROR_SECRET_BASE64 = (
    "The part after whsec_ must be standard base64 (letters, digits, + and /, = padding)."
)
ERROR_SECRET_LENGTH = "The secret's key is {size} bytes long; use 24 to 64 random bytes."

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,39}")
# Standard Webhooks: a key of 24 to 64 bytes.
SECRET_KEY_BYTES = (24, 64)
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")

# Check history kept per bot: enough to explain its health, bounded under scheduled checks.
KEEP_CHECKS = 50


def unhealthy_after() -> int:
    """Consecutive failed checks that make a bot unhealthy (`ESCOBA_BOT_UNHEALTHY_AFTER`)."""
    return max(1, settings.ESCOBA_BOT_UNHEALTHY_AFTER)


def secret_clean(secret: str) -> str:
    """An owner's own secret, checked: `whsec_` and the base64 of a 24 to 64 byte key.

    Raises a `secret` field error in our words; the owner then gives the bot the same text.
    """
    secret = secret.strip()
    if not secret.startswith(SECRET_PREFIX):
        raise ValidationError({"secret": [ERROR_SECRET_PREFIX]})
    encoded = secret.removeprefix(SECRET_PREFIX)
    if not _BASE64.fullmatch(encoded):
        raise ValidationError({"secret": [ERROR_SECRET_BASE64]})
    try:
        key = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True)
    except binascii.Error:
        raise ValidationError({"secret": [ERROR_SECRET_BASE64]}) from None
    low, high = SECRET_KEY_BYTES
    if not low <= len(key) <= high:
        raise ValidationError({"secret": [ERROR_SECRET_LENGTH.format(size=len(key))]})
    return secret


def bots_due_for_check(*, every_s: float) -> QuerySet[Bot]:
    """Active bots whose last check is older than `every_s` seconds, never-checked ones first.

    For a periodic task calling `bot_check(..., trigger=SCHEDULE)` on each: checks are what
    turn a broken bot unhealthy, and what bring an unhealthy one back.
    """
    cutoff = timezone.now() - timedelta(seconds=every_s)
    return (
        Bot.objects.filter(status=Bot.Status.ACTIVE)
        .filter(Q(last_checked_at__isnull=True) | Q(last_checked_at__lt=cutoff))
        .order_by(F("last_checked_at").asc(nulls_first=True), "id")
    )


def _clean_name(name: str, *, exclude_id: int | None = None) -> str:
    name = name.strip()
    if not NAME_PATTERN.fullmatch(name):
        raise ValidationError({"name": [ERROR_NAME_FORMAT]})
    taken = Bot.objects.filter(name__iexact=name)
    if exclude_id is not None:
        taken = taken.exclude(pk=exclude_id)
    if taken.exists():
        raise ValidationError({"name": [ERROR_NAME_TAKEN]})
    return name


def _verify_url(url: str, secret: str | None) -> dict[str, str]:
    """`GET U` through the hardened caller; the protocol info, or a `url` field error.

    `secret` None sends it unsigned: at registration the bot has no secret of ours yet, unless
    its owner brought one. The error says so when the bot answers 401.
    """
    result = check_bot_info(
        url,
        secret,
        timeout_ms=settings.ESCOBA_BOT_VERIFY_TIMEOUT_MS,
        allow_private=settings.ESCOBA_ALLOW_PRIVATE_BOT_URLS,
    )
    if result.fault is not None or result.info is None:
        fault = result.fault or Fault(FaultKind.BAD_SCHEMA, "no answer")
        message = info_fault_message(fault, url=url, secret_known_to_bot=secret is not None)
        raise ValidationError({"url": [message]})
    return _info_fields(result.info)


def _info_fields(info: Any) -> dict[str, str]:
    return {
        "protocol_name": info.name,
        "protocol_author": info.author,
        "protocol_version": info.version,
    }


def _announced_info(url: str, secret: str) -> dict[str, str] | None:
    """What the bot's `GET U` announces now (name, author, version), or None if it did not
    answer properly: a passing check notes the version its ratings belong to."""
    result = check_bot_info(
        url,
        secret,
        timeout_ms=settings.ESCOBA_BOT_VERIFY_TIMEOUT_MS,
        allow_private=settings.ESCOBA_ALLOW_PRIVATE_BOT_URLS,
    )
    if result.fault is not None or result.info is None:
        return None
    return _info_fields(result.info)


def _save(bot: Bot, update_fields: list[str] | None = None) -> None:
    """Save, turning a lost race for the bot's name into the same error as a name taken."""
    try:
        with transaction.atomic():
            bot.save(update_fields=update_fields)
            reads_changed("catalog")
    except IntegrityError as error:
        raise ValidationError({"name": [ERROR_NAME_TAKEN]}) from error


def bot_register(
    *, owner: Any, name: str, url: str, description: str = "", secret: str | None = None
) -> Bot:
    """Register a bot for `owner` once its `GET U` answers `escoba/1` within the timeout.

    Without `secret` that `GET U` is unsigned and a new secret is made, which the caller shows
    to the owner this once. With one (the owner's own, already given to the bot), that
    `GET U` and every later call are signed with it, so a bot refusing every unsigned call can
    register.
    """
    name = _clean_name(name)
    if secret is not None:
        secret = secret_clean(secret)
    limit = settings.ESCOBA_MAX_BOTS_PER_OWNER
    if Bot.objects.filter(owner=owner).count() >= limit:
        raise ValidationError(ERROR_TOO_MANY_BOTS.format(limit=limit))
    url = url.strip()
    info = _verify_url(url, secret)
    secret = secret or new_secret()
    bot = Bot(
        owner=owner, name=name, url=url, description=description.strip(), secret=secret, **info
    )
    _save(bot)
    bot_version_observe(bot=bot)  # its ratings belong to the version it announces
    return bot


def bot_update(
    *,
    bot: Bot,
    name: str | None = None,
    url: str | None = None,
    description: str | None = None,
    accepts_challenges: bool | None = None,
) -> Bot:
    """Change what the owner may change; a new URL is verified like at registration.

    A bot at a new URL is a new endpoint: its health goes back to unknown and its failure
    count to zero, since the old checks say nothing about it.
    """
    updates: dict[str, Any] = {}
    if name is not None and name.strip() != bot.name:
        updates["name"] = _clean_name(name, exclude_id=bot.pk)
    if description is not None and description.strip() != bot.description:
        updates["description"] = description.strip()
    if accepts_challenges is not None and accepts_challenges != bot.accepts_challenges:
        updates["accepts_challenges"] = accepts_challenges
    if url is not None and url.strip() != bot.url:
        updates["url"] = url.strip()
        updates.update(_verify_url(updates["url"], bot.secret))
        updates.update(health=Bot.Health.UNKNOWN, check_failures=0)
    if updates:
        for field, value in updates.items():
            setattr(bot, field, value)
        # Only what changed: a check may have updated the bot's health while we verified.
        _save(bot, update_fields=[*updates, "updated_at"])
        if "protocol_version" in updates:
            bot_version_observe(bot=bot)
    return bot


def bot_pause(*, bot: Bot, by: Any | None = None) -> Bot:
    """Take the bot out of scheduling; leagues already running are not changed.

    `by` is who asked: the owner is not told of their own pause; anyone else's (an admin's,
    `by` None) sends the owner a notification.
    """
    paused_now = Bot.objects.filter(pk=bot.pk, status=Bot.Status.ACTIVE).update(
        status=Bot.Status.PAUSED, updated_at=timezone.now()
    )
    reads_changed("catalog")
    bot.refresh_from_db(fields=["status", "updated_at"])
    if paused_now and (by is None or by.pk != bot.owner_id):
        notification_send(user=bot.owner, event=EVENT_BOT_PAUSED, bot=bot)
    return bot


def bot_resume(*, bot: Bot) -> Bot:
    bot.status = Bot.Status.ACTIVE
    bot.save(update_fields=["status", "updated_at"])
    reads_changed("catalog")
    return bot


def bot_delete(*, bot: Bot) -> None:
    """Delete a bot that never played; one that did is part of other bots' records."""
    if bot.seats.exists():
        raise ValidationError(ERROR_HAS_PLAYED)
    bot.delete()
    reads_changed("catalog")


def bot_rotate_secret(*, bot: Bot) -> Bot:
    """Issue a new signing secret; the old one stops working at once."""
    bot.secret = new_secret()
    bot.secret_rotated_at = timezone.now()
    bot.save(update_fields=["secret", "secret_rotated_at", "updated_at"])
    return bot


def bot_check(*, bot: Bot, trigger: str = BotCheck.Trigger.OWNER) -> BotCheck:
    """Run the protocol check against the live bot, keep the report and update its health.

    A pass makes the bot healthy and clears its failure count; a failure adds one, and the
    `unhealthy_after()`-th in a row makes it unhealthy. A pass also brings a bot paused for
    no-shows back into rated play (its owner is told), and notes the version its `GET U`
    announces now; a failure puts a paused bot's next check twice as far off. Health changes
    only here: games never change it.
    """
    url, secret = bot.url, bot.secret
    report = _run_check(url, secret)
    _add_secret_hint(bot, report)
    info = _announced_info(url, secret) if report.ok else None
    data = report.to_dict()
    latency = data["latency_ms"]["median"]
    with transaction.atomic():
        bot = Bot.objects.select_for_update().get(pk=bot.pk)
        passed = report.ok
        if bot.url != url:
            # The owner moved the bot while it was being checked: this report is about the
            # old endpoint and says nothing of the new one's health.
            return BotCheck.objects.create(
                bot=bot, trigger=trigger, passed=passed, latency_ms=latency, report=data
            )
        health_before = bot.health
        was_paused = bot.rated_paused_at is not None
        fields: list[str] = [*NO_SHOW_FIELDS]
        if passed:
            bot.check_failures = 0
            bot.health = Bot.Health.HEALTHY
            bot_no_shows_clear(bot=bot)
            fields += [*(info or {})]
            for name, value in (info or {}).items():
                setattr(bot, name, value)
        else:
            bot.check_failures += 1
            if bot.check_failures >= unhealthy_after():
                bot.health = Bot.Health.UNHEALTHY
            bot_recheck_failed(bot=bot)
        bot.last_checked_at = timezone.now()
        bot.last_check_report = data
        bot.last_latency_ms = latency
        bot.save(
            update_fields=[
                "check_failures",
                "health",
                "last_checked_at",
                "last_check_report",
                "last_latency_ms",
                "updated_at",
                *fields,
            ]
        )
        if passed:
            bot_version_observe(bot=bot)
        # Health and version show in rankings and on pages; the check's time alone does not.
        shown = bot.health != health_before or (was_paused and passed)
        reads_changed(f"bot:{bot.pk}", *(["catalog"] if shown else []))
        check = BotCheck.objects.create(
            bot=bot, trigger=trigger, passed=passed, latency_ms=latency, report=data
        )
        old = bot.checks.order_by("-created_at", "-id").values_list("id", flat=True)[KEEP_CHECKS:]
        BotCheck.objects.filter(id__in=list(old)).delete()
        _notify_health_change(bot, before=health_before, check=check)
        if was_paused and passed:
            notification_send(
                user=bot.owner, event=EVENT_BOT_RATED_RESUMED, bot=bot, data={"check": check.pk}
            )
        return check


def _notify_health_change(bot: Bot, *, before: str, check: BotCheck) -> None:
    """Tell the owner when their bot turns unhealthy, and when an unhealthy one recovers."""
    if bot.health == before:
        return
    if bot.health == Bot.Health.UNHEALTHY:
        event = EVENT_BOT_UNHEALTHY
    elif before == Bot.Health.UNHEALTHY:
        event = EVENT_BOT_HEALTHY
    else:
        return
    data: dict[str, Any] = {"check": check.pk}
    if event == EVENT_BOT_UNHEALTHY:
        failed = [r for r in check.report.get("results", []) if r["status"] == FAIL]
        detail = f"{failed[0]['name']}: {failed[0]['detail']}" if failed else "no details"
        data["reason"] = detail.rstrip(".") + "."
    notification_send(user=bot.owner, event=event, bot=bot, data=data)


def _add_secret_hint(bot: Bot, report: CheckReport) -> None:
    """A check whose calls got HTTP 401 says why that most often happens: a stale secret."""
    data = report.to_dict()
    if not refused_signature(data):
        return
    rotated_at = bot.secret_rotated_at
    passed_since = (
        rotated_at is not None
        and bot.checks.filter(passed=True, created_at__gt=rotated_at).exists()
    )
    hint = secret_hint(rotated_at=rotated_at, passed_since_rotation=passed_since)
    report.add("secret", WARN, hint)


def _run_check(url: str, secret: str) -> CheckReport:
    """The protocol check through the service's caller, under one overall deadline.

    The caller applies the address policy (a refused URL is one failed `url` line and no request)
    and gives each request its own total deadline, so a check ends by itself; the overall
    deadline is one more bound, so that nothing a bot does can hold a worker longer. The check
    is async and runs to its end or its deadline before this returns: no thread is left behind.
    """
    timeout_ms = settings.ESCOBA_BOT_CHECK_TIMEOUT_MS
    report = CheckReport(url=url, timeout_ms=timeout_ms)
    deadline_s = _check_deadline_s(timeout_ms)

    async def check() -> None:
        try:
            async with asyncio.timeout(deadline_s):
                await run_protocol_check(
                    report, secret=secret, allow_private=settings.ESCOBA_ALLOW_PRIVATE_BOT_URLS
                )
        except TimeoutError:
            report.add("deadline", FAIL, ERROR_CHECK_TOO_LONG.format(seconds=deadline_s))

    try:
        async_to_sync(check)()
    except Exception as error:  # the check promises not to raise; a bug must not hide a bot
        logger.exception("bot check of %s crashed", url)
        report.add("check", FAIL, ERROR_CHECK_CRASHED.format(error=type(error).__name__))
    return report


def _check_deadline_s(timeout_ms: int) -> float:
    """Every request of a check at its full timeout, plus a margin for the rest."""
    return MAX_CALLS * timeout_ms / 1000 + 2.0
