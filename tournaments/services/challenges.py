"""Challenges: a user's bot against any bot that accepts challenges, for 1 to 10 unrated sets.

A challenge is a league of kind ``challenge`` with its two bots, ``2 × sets`` games per pairing
and ``rated`` off, started at once: its sets are matches like any other, played by the same task
with the same leases. A daily quota per user (``ESCOBA_CHALLENGES_PER_DAY``, over the last 24
hours) keeps the workers for everyone; past it, ``QuotaExceeded`` says how long to wait. The
count is read under the user's row lock (``services.quotas.user_lock``), so concurrent requests
of one user, in any number of web processes, never pass it; a challenge's games also count
towards the user's queued games (``ESCOBA_QUEUED_GAMES_PER_USER``).

The challenged bot's owner is told (``challenge.received``) when it is someone else's.
"""

from __future__ import annotations

import datetime
import math
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from tournaments.models import Bot, Challenge, League, VersionTest
from tournaments.services.league_creation import league_create, league_name_free
from tournaments.services.league_schedules import league_start
from tournaments.services.notifications import EVENT_CHALLENGE_RECEIVED, notification_send
from tournaments.services.quotas import QuotaExceeded as QuotaExceeded  # where views import it
from tournaments.services.quotas import user_lock

ERROR_NOT_YOUR_BOT = "This must be one of your own bots."
ERROR_NOT_ACCEPTING = "Bot {name} does not accept challenges."
ERROR_SAME_BOT = "A bot cannot play itself."
ERROR_UNKNOWN_BOT = "No bot with this id."
ERROR_SETS = "sets must be between 1 and {high}."
ERROR_QUOTA = "You have used your {limit} {what} of the last 24 hours; try again in {wait} s."

MAX_SETS = 10
# Challenges and version tests are duels of the classic rules.
RULESET = "classic"
PLAYERS = 2
DAY = datetime.timedelta(days=1)


def quota_check(*, made: QuerySet, limit: int, what: str) -> None:
    """Raise ``QuotaExceeded`` when ``made`` (a user's rows with ``created_at``) holds ``limit``
    or more rows from the last 24 hours; the wait is until the oldest of them is a day old.
    Call under ``user_lock`` of that user, in the transaction that writes the new row."""
    since = timezone.now() - DAY
    recent = list(
        made.filter(created_at__gte=since)
        .order_by("-created_at")
        .values_list("created_at", flat=True)[:limit]
    )
    if len(recent) < limit:
        return
    wait = max(1, math.ceil((recent[-1] + DAY - timezone.now()).total_seconds()))
    raise QuotaExceeded(ERROR_QUOTA.format(limit=limit, what=what, wait=wait), wait)


def bot_for(field: str, bot_id: int, *, owner: Any = None) -> Bot:
    """The bot ``bot_id``, or a field error; with ``owner``, it must be theirs."""
    bot = Bot.objects.filter(pk=bot_id).first()
    if bot is None:
        raise ValidationError({field: [ERROR_UNKNOWN_BOT]})
    if owner is not None and bot.owner_id != owner.pk:
        raise ValidationError({field: [ERROR_NOT_YOUR_BOT]})
    return bot


def opponent_check(*, field: str, opponent: Bot, bot: Bot, user: Any) -> None:
    """A user's bot may meet any of the user's bots, and others' bots that accept challenges."""
    if opponent.pk == bot.pk:
        raise ValidationError({field: [ERROR_SAME_BOT]})
    if opponent.owner_id != user.pk and not opponent.accepts_challenges:
        raise ValidationError({field: [ERROR_NOT_ACCEPTING.format(name=opponent.name)]})


def duel_bots(*, user: Any, bot: tuple[str, int], opponent: tuple[str, int]) -> tuple[Bot, Bot]:
    """The user's bot and the bot it is to meet, each given as (form field, id): a field error
    for a bot that does not exist, that is not the user's, or that may not be met."""
    mine = bot_for(*bot, owner=user)
    other = bot_for(*opponent)
    opponent_check(field=opponent[0], opponent=other, bot=mine, user=user)
    return mine, other


# The duels users ask for, by league kind: the league's name, the model whose rows count for
# the daily quota, the setting of that quota and what the quota's message calls them.
DUELS: dict[str, tuple[str, type[Challenge | VersionTest], str, str]] = {
    League.Kind.CHALLENGE: ("Challenge", Challenge, "ESCOBA_CHALLENGES_PER_DAY", "challenges"),
    League.Kind.TEST: ("Test", VersionTest, "ESCOBA_TESTS_PER_DAY", "version tests"),
}


def duel_league_create(
    *, user: Any, bots: tuple[Bot, Bot], kind: str, games_per_pairing: int | None = None
) -> League:
    """The unrated league of classic duels a user asked for (`kind`: a challenge, a version
    test), named "Title: bot v opponent" (numbered if taken). Takes the user's lock and checks
    the kind's daily quota first (`QuotaExceeded`)."""
    title, model, setting, what = DUELS[kind]
    user_lock(user)  # the count below is read and written by one request of the user at a time
    made = model.objects.filter(creator=user)
    quota_check(made=made, limit=getattr(settings, setting), what=what)
    bot, opponent = bots
    return league_create(
        creator=user,
        name=league_name_free(f"{title}: {bot.name} v {opponent.name}"),  # names are unique
        ruleset_name=RULESET,
        players=PLAYERS,
        games_per_pairing=games_per_pairing,
        rated=False,
        bot_ids=[bot.id, opponent.id],
        kind=kind,
    )


@transaction.atomic
def challenge_create(*, user: Any, bot_id: int, opponent_id: int, sets: int) -> Challenge:
    """Start ``sets`` unrated duplicate sets of the user's ``bot_id`` against ``opponent_id``."""
    if not 1 <= sets <= MAX_SETS:
        raise ValidationError({"sets": [ERROR_SETS.format(high=MAX_SETS)]})
    bot, opponent = duel_bots(user=user, bot=("bot", bot_id), opponent=("opponent", opponent_id))
    league = duel_league_create(
        user=user, bots=(bot, opponent), kind=League.Kind.CHALLENGE, games_per_pairing=2 * sets
    )
    challenge = Challenge.objects.create(
        creator=user, bot=bot, opponent=opponent, sets=sets, league=league
    )
    league_start(league_id=league.id, user=user)
    if opponent.owner_id != user.pk and opponent.owner.is_active:
        notification_send(
            user=opponent.owner,
            event=EVENT_CHALLENGE_RECEIVED,
            bot=opponent,
            data={"challenger": user.username, "challenge": challenge.pk},
        )
    return challenge
