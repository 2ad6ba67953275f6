"""The bot registry: registering bots, changing them, and checking that they still play.

A bot is verified when it is registered and whenever its URL changes (`GET U` must answer
`escoba/1` in time, through the hardened caller of `games.caller`). The fuller protocol check
(`bots_sdk.check`: scripted positions, legality, latency) runs when the owner or an admin asks,
and for every bot `bots_due_for_check` lists when a periodic task calls `bot_check`. A bot that
fails it `ESCOBA_BOT_UNHEALTHY_AFTER` times in a row is unhealthy and is not scheduled
(`bots_schedulable`) until a check passes again.

No database transaction is held open while a bot is being called: bots may be slow.
"""

import base64
import logging
import re
import secrets
import threading
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from bots_sdk.check import FAIL, POSITIONS, CheckReport, run_check
from games.addresses import AddressError, parse_bot_url, resolve_checked
from games.caller import check_bot_info, run_sync
from games.faults import Fault, FaultKind
from tournaments.models import Bot, BotCheck

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
ERROR_NAME_UNRESOLVED = "The bot is unreachable: {detail}"
ERROR_CHECK_CRASHED = "The check itself failed ({error}); please report it."

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,39}")
SECRET_PREFIX = "whsec_"

DEFAULT_VERIFY_TIMEOUT_MS = 3000
DEFAULT_CHECK_TIMEOUT_MS = 1000
DEFAULT_UNHEALTHY_AFTER = 3
DEFAULT_MAX_BOTS_PER_OWNER = 20
# Check history kept per bot: enough to explain its health, bounded under scheduled checks.
KEEP_CHECKS = 50


def _setting(name: str, default: int) -> int:
    return int(getattr(settings, name, default))


def unhealthy_after() -> int:
    """Consecutive failed checks that make a bot unhealthy (`ESCOBA_BOT_UNHEALTHY_AFTER`)."""
    return max(1, _setting("ESCOBA_BOT_UNHEALTHY_AFTER", DEFAULT_UNHEALTHY_AFTER))


def new_secret() -> str:
    """A Standard Webhooks signing secret: `whsec_` and the base64 of 24 random bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(24)).decode("ascii")


def bots_schedulable() -> QuerySet[Bot]:
    """Bots a league may schedule: active (not paused by their owner) and not unhealthy.

    A bot whose health is still unknown (registered, never fully checked) is schedulable: its
    `GET U` answered `escoba/1` at registration.
    """
    return Bot.objects.filter(status=Bot.Status.ACTIVE).exclude(health=Bot.Health.UNHEALTHY)


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


def _verify_url(url: str, secret: str) -> dict[str, str]:
    """`GET U` through the hardened caller; the protocol info, or a `url` field error."""
    result = check_bot_info(
        url,
        secret,
        timeout_ms=_setting("ESCOBA_BOT_VERIFY_TIMEOUT_MS", DEFAULT_VERIFY_TIMEOUT_MS),
        allow_private=settings.ESCOBA_ALLOW_PRIVATE_BOT_URLS,
    )
    if not result.ok or result.info is None:
        raise ValidationError({"url": [result.reason]})
    return {
        "protocol_name": result.info.name,
        "protocol_author": result.info.author,
        "protocol_version": result.info.version,
    }


def _save(bot: Bot, update_fields: list[str] | None = None) -> None:
    """Save, turning a lost race for the bot's name into the same error as a name taken."""
    try:
        with transaction.atomic():
            bot.save(update_fields=update_fields)
    except IntegrityError as error:
        raise ValidationError({"name": [ERROR_NAME_TAKEN]}) from error


def bot_register(*, owner: Any, name: str, url: str, description: str = "") -> Bot:
    """Register a bot for `owner` once its `GET U` answers `escoba/1` within the timeout.

    The returned bot carries its new secret, which the caller shows to the owner this once.
    """
    name = _clean_name(name)
    limit = _setting("ESCOBA_MAX_BOTS_PER_OWNER", DEFAULT_MAX_BOTS_PER_OWNER)
    if Bot.objects.filter(owner=owner).count() >= limit:
        raise ValidationError(ERROR_TOO_MANY_BOTS.format(limit=limit))
    url = url.strip()
    secret = new_secret()
    info = _verify_url(url, secret)
    bot = Bot(
        owner=owner, name=name, url=url, description=description.strip(), secret=secret, **info
    )
    _save(bot)
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
    return bot


def bot_pause(*, bot: Bot) -> Bot:
    """The owner takes the bot out of scheduling; leagues already running are not changed."""
    bot.status = Bot.Status.PAUSED
    bot.save(update_fields=["status", "updated_at"])
    return bot


def bot_resume(*, bot: Bot) -> Bot:
    bot.status = Bot.Status.ACTIVE
    bot.save(update_fields=["status", "updated_at"])
    return bot


def bot_delete(*, bot: Bot) -> None:
    """Delete a bot that never played; one that did is part of other bots' records."""
    if bot.seats.exists() or bot.rating_changes.exists():
        raise ValidationError(ERROR_HAS_PLAYED)
    bot.delete()


def bot_rotate_secret(*, bot: Bot) -> Bot:
    """Issue a new signing secret; the old one stops working at once."""
    bot.secret = new_secret()
    bot.save(update_fields=["secret", "updated_at"])
    return bot


def bot_check(*, bot: Bot, trigger: str = BotCheck.Trigger.OWNER) -> BotCheck:
    """Run the protocol check against the live bot, keep the report and update its health.

    A pass makes the bot healthy and clears its failure count; a failure adds one, and the
    `unhealthy_after()`-th in a row makes it unhealthy.
    """
    url, secret = bot.url, bot.secret
    report = _run_check(url, secret)
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
        if passed:
            bot.check_failures = 0
            bot.health = Bot.Health.HEALTHY
        else:
            bot.check_failures += 1
            if bot.check_failures >= unhealthy_after():
                bot.health = Bot.Health.UNHEALTHY
        bot.last_checked_at = timezone.now()
        bot.last_check_report = data
        bot.last_latency_ms = latency
        bot.save(update_fields=[
            "check_failures", "health", "last_checked_at", "last_check_report",
            "last_latency_ms", "updated_at",
        ])
        check = BotCheck.objects.create(
            bot=bot, trigger=trigger, passed=passed, latency_ms=latency, report=data
        )
        old = bot.checks.order_by("-created_at", "-id").values_list("id", flat=True)[KEEP_CHECKS:]
        BotCheck.objects.filter(id__in=list(old)).delete()
        return check


def _run_check(url: str, secret: str) -> CheckReport:
    """`bots_sdk.check.run_check`, behind our address policy and under one overall deadline.

    The SDK client connects where it is told, so the name is resolved and checked here once and
    the checked address is handed over (no second lookup to rebind). Each of its requests has
    one total deadline, so a check ends by itself; it still runs in a thread we stop waiting
    for at an overall deadline, so that nothing a bot does can hold a worker longer.
    """
    timeout_ms = _setting("ESCOBA_BOT_CHECK_TIMEOUT_MS", DEFAULT_CHECK_TIMEOUT_MS)
    allow_private = settings.ESCOBA_ALLOW_PRIVATE_BOT_URLS
    report = CheckReport(url=url, timeout_ms=timeout_ms)
    try:
        target = parse_bot_url(url, allow_private=allow_private)
        addresses = run_sync(resolve_checked(target, allow_private=allow_private))
    except AddressError as error:
        report.add("url", FAIL, Fault(FaultKind.ADDRESS, str(error)).message)
        return report
    except OSError as error:
        report.add("url", FAIL, ERROR_NAME_UNRESOLVED.format(detail=error))
        return report
    outcome: list[CheckReport] = []

    def check() -> None:
        try:
            outcome.append(
                run_check(url, secret=secret, timeout_ms=timeout_ms, connect_host=str(addresses[0]))
            )
        except Exception as error:  # the SDK promises not to raise; a bug must not hide a bot
            logger.exception("bot check of %s crashed", url)
            report.add("check", FAIL, ERROR_CHECK_CRASHED.format(error=type(error).__name__))
            outcome.append(report)

    deadline_s = _check_deadline_s(timeout_ms)
    worker = threading.Thread(target=check, name=f"bot-check {target.host}", daemon=True)
    worker.start()
    worker.join(deadline_s)
    if outcome:
        return outcome[0]
    report.add("deadline", FAIL, ERROR_CHECK_TOO_LONG.format(seconds=deadline_s))
    return report


def _check_deadline_s(timeout_ms: int) -> float:
    """Every request of a check at its full timeout, plus a margin for the rest."""
    requests = len(POSITIONS) + 4  # info, the positions, two notices, the forged signature
    return requests * timeout_ms / 1000 + 2.0
