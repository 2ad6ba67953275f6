"""An owner's request for a protocol check of their bot, run by a worker, not the web process."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied

from tournaments import queueing
from tournaments.bot_check_progress import check_progress_claim, check_progress_clear
from tournaments.models import Bot
from tournaments.rate_limits import CACHE_ERRORS


class CheckUnavailable(Exception):
    """Redis (the queue and the progress state) cannot be reached: nothing was queued."""


def bot_check_request(*, bot: Bot, user: Any) -> bool:
    """Queue a check of ``bot`` for its owner; False when one is queued or running already.

    Raises ``PermissionDenied`` for anyone but the owner and ``CheckUnavailable`` when the
    queue cannot be reached.
    """
    if bot.owner_id != user.pk:
        raise PermissionDenied
    try:
        if not check_progress_claim(bot.pk):
            return False
        queueing.owner_check_enqueue(bot.pk)
    except (*CACHE_ERRORS, *queueing.BROKER_ERRORS):
        try:
            check_progress_clear(bot.pk)
        except CACHE_ERRORS:
            pass
        raise CheckUnavailable from None
    return True
