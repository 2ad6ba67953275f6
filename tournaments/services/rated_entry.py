"""Who enters rated play: the leagues that are rated, and the bots that may play them.

Every rated result is one the arena chose and a bot earned (docs/ratings.md). Only leagues
created by staff or by the arena itself (its system accounts: the ladder, operator commands) are
rated (``rated_league_errors``), and only bots that passed the protocol check and are not paused
for no-shows (``services.no_shows``) enter them (``bots_rated_eligible``), never two bots of one
owner.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db.models import QuerySet

from tournaments.models import Bot

ERROR_RATED_STAFF_ONLY = (
    "Only staff may create rated leagues: a rating counts only opponents the arena chooses."
)
ERROR_BOT_NOT_RATED = (
    "Bot {name} cannot enter rated play: it must have passed the protocol check, and not be "
    "paused for no-shows."
)
ERROR_ONE_OWNER = (
    "Bots {names} have one owner, and two bots of one owner never meet in rated play: enter "
    "only one of them."
)


def rated_move_timeout_ms() -> int:
    """The move timeout of rated play (``ESCOBA_RATED_MOVE_TIMEOUT_MS``): the ladder's, and the
    least with which a user's league may enter another user's bot."""
    return int(settings.ESCOBA_RATED_MOVE_TIMEOUT_MS)


def bots_rated_eligible() -> QuerySet[Bot]:
    """Bots rated play may schedule: active, healthy (they passed the protocol check, so they
    are schedulable too) and not paused for no-shows. The ladder picks among these."""
    return Bot.objects.filter(
        status=Bot.Status.ACTIVE, health=Bot.Health.HEALTHY, rated_paused_at__isnull=True
    )


def may_create_rated(user: Any) -> bool:
    """Staff, or one of the arena's own accounts (inactive, without a password: the ladder's,
    the operator commands'), which nobody can sign in as."""
    return bool(user.is_staff or (not user.is_active and not user.has_usable_password()))


def rated_league_errors(*, creator: Any, rated: bool, bot_ids: Iterable[int]) -> dict:
    """Field -> messages for every reason these bots cannot play a rated league of ``creator``."""
    if not rated:
        return {}
    if not may_create_rated(creator):
        return {"rated": [ERROR_RATED_STAFF_ONLY]}
    return rated_entry_errors(bot_ids=bot_ids, field="bots")


def rated_entry_errors(
    *, bot_ids: Iterable[int], field: str = "bot", beside: Iterable[int] = ()
) -> dict:
    """``field`` -> a message per bot that may not enter rated play (unknown ids are skipped:
    the caller reports those), and one per owner with two bots among ``bot_ids`` and the bots
    already entered (``beside``).

    A round robin seats every pair, so a rated league of two bots of one owner would have them
    meet, and one could lose to the other on purpose: such a league is refused rather than
    scheduled around, which keeps every rated league a whole round robin. Bots of the arena's own
    inactive accounts (the house's example bots) count as owned by nobody, as on the ladder.
    """
    ids = list(bot_ids)
    fit = set(bots_rated_eligible().filter(id__in=ids).values_list("id", flat=True))
    names = dict(Bot.objects.filter(id__in=ids).values_list("id", "name"))
    refused = [
        ERROR_BOT_NOT_RATED.format(name=names[i]) for i in ids if i in names and i not in fit
    ]
    refused += _one_owner_errors(ids, list(beside))
    return {field: refused} if refused else {}


def _one_owner_errors(ids: list[int], beside: list[int]) -> list[str]:
    """A message per owner holding two of ``ids`` and ``beside``, one of them in ``ids``."""
    rows = Bot.objects.filter(id__in=[*ids, *beside], owner__is_active=True).values_list(
        "id", "name", "owner_id"
    )
    by_owner: defaultdict[int, list[tuple[int, str]]] = defaultdict(list)
    for bot_id, name, owner_id in rows.order_by("id"):
        by_owner[owner_id].append((bot_id, name))
    return [
        ERROR_ONE_OWNER.format(names=", ".join(name for _, name in bots))
        for _, bots in sorted(by_owner.items())
        if len(bots) > 1 and any(bot_id in ids for bot_id, _ in bots)
    ]


def rated_league_check(*, creator: Any, rated: bool, bot_ids: Iterable[int]) -> None:
    errors = rated_league_errors(creator=creator, rated=rated, bot_ids=bot_ids)
    if errors:
        raise ValidationError(errors)
