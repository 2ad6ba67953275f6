"""No-shows: a bot that could not be reached or never answered, and what it costs in rated play.

A game in which a bot never made a valid move because it could not be reached or never answered
is recorded as a no-show on its seats (``game_no_shows_record``) and its set is rated for nobody.
Only rated games move a bot's run: after a no-show the ladder leaves the bot alone for a while (a
backoff, doubling with the run), a no-show during that wait grows no run, and
``ESCOBA_NOSHOW_PAUSE_AFTER`` of them in a row take the bot out of rated play until a protocol
check passes (``bot_no_shows_clear``); the ladder's tick checks a paused bot again on its own,
less and less often (``recheck_delay_s``).
"""

from __future__ import annotations

import datetime

from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone

from games.ratings.sets import no_show_seats
from tournaments.bot_calls.runner import GameRecord
from tournaments.models import Bot, Game, Seat
from tournaments.read_cache import reads_changed
from tournaments.services.notifications import EVENT_BOT_RATED_PAUSED, notification_send


def noshow_backoff_s(run: int) -> float:
    """Seconds the ladder leaves a bot alone after the ``run``-th no-show in a row (1, 2, ...):
    ``ESCOBA_NOSHOW_BACKOFF_S`` doubled for each earlier one, at most ``ESCOBA_RECHECK_MAX_S``."""
    base = float(settings.ESCOBA_NOSHOW_BACKOFF_S)
    return min(base * 2 ** max(run - 1, 0), float(settings.ESCOBA_RECHECK_MAX_S))


def recheck_delay_s(failures: int) -> float:
    """Seconds until a bot paused for no-shows is checked again, after ``failures`` failed
    checks since the pause: ``ESCOBA_RECHECK_FIRST_S``, doubled for each failure, at most
    ``ESCOBA_RECHECK_MAX_S`` (1, 2, 4... minutes, up to an hour, by default)."""
    first = float(settings.ESCOBA_RECHECK_FIRST_S)
    return min(first * 2 ** min(failures, 32), float(settings.ESCOBA_RECHECK_MAX_S))


def noshow_pause_after() -> int:
    """No-shows in a row that take a bot out of rated play (``ESCOBA_NOSHOW_PAUSE_AFTER``)."""
    return max(1, int(settings.ESCOBA_NOSHOW_PAUSE_AFTER))


def game_no_shows_record(*, game: Game, record: GameRecord, seats: list[Seat]) -> set[int]:
    """Mark the seats of bots that did not show up (the caller saves ``seats``); in a rated
    game, count the bots' no-shows. Call inside the transaction that stores the game. Returns
    the absent bots' ids.

    A bot counts as absent when every seat it held was a no-show seat. Only rated games move a
    bot's standing (anyone's league could otherwise knock a bot out of rated play with a 10 ms
    timeout): elsewhere the seats are marked and nothing else changes. In a rated game a bot that
    showed up ends its run. An absent bot's run grows unless it is still waiting out the backoff
    of its last no-show (the other sets it was already in fail at the same moment: one blip, one
    no-show), and the ladder then leaves it alone for ``noshow_backoff_s(run)``; at
    ``noshow_pause_after()`` it leaves rated play, its owner is told, and the ladder's tick
    checks it again after ``recheck_delay_s(0)``. When every bot of the game was absent, nobody
    can be told apart from an outage on our side: the no-shows are recorded, but nobody's run
    grows.
    """
    plays = [
        (call.seat, None if call.fault is None else str(call.fault.kind)) for call in record.plays
    ]
    absent_seats = no_show_seats(seats=len(game.seating), plays=plays, faults=record.faults)
    seats_of: dict[int, list[int]] = {}
    for seat, bot_id in enumerate(game.seating):
        seats_of.setdefault(bot_id, []).append(seat)
    absent = {bot for bot, held in seats_of.items() if set(held) <= absent_seats}
    for seat in seats:
        seat.no_show = seat.bot_id in absent
    if not game.league.rated:
        return absent
    everyone = absent == set(seats_of)
    now = timezone.now()
    if not absent:  # the usual game: one statement ends any run (an id list is visited in order)
        Bot.objects.filter(pk__in=sorted(seats_of), no_shows_in_row__gt=0).update(no_shows_in_row=0)
        return absent
    for bot_id in sorted(seats_of):  # one order of row locks for every game
        bots = Bot.objects.filter(pk=bot_id)
        if bot_id not in absent:
            bots.filter(no_shows_in_row__gt=0).update(no_shows_in_row=0)
        elif everyone:
            bots.update(no_shows=F("no_shows") + 1)
        else:
            bots.update(no_shows=F("no_shows") + 1)
            waited = Q(rated_retry_at__isnull=True) | Q(rated_retry_at__lte=now)
            if bots.filter(waited).update(no_shows_in_row=F("no_shows_in_row") + 1):
                _no_show_counted(Bot.objects.select_related("owner").get(pk=bot_id), now)
    return absent


def _no_show_counted(bot: Bot, now: datetime.datetime) -> None:
    """A no-show grew ``bot``'s run: the ladder waits before pairing it again, and at
    ``noshow_pause_after()`` it leaves rated play until a check passes."""
    if bot.rated_paused_at is not None:  # paused already: its next check stays as planned
        return
    if bot.no_shows_in_row < noshow_pause_after():
        bot.rated_retry_at = now + datetime.timedelta(seconds=noshow_backoff_s(bot.no_shows_in_row))
        bot.save(update_fields=["rated_retry_at"])
        return
    delay = recheck_delay_s(0)
    bot.rated_paused_at = now
    bot.rated_rechecks = 0
    bot.rated_retry_at = now + datetime.timedelta(seconds=delay)
    bot.save(update_fields=["rated_paused_at", "rated_rechecks", "rated_retry_at"])
    reads_changed(f"bot:{bot.pk}", "catalog")
    notification_send(
        user=bot.owner,
        event=EVENT_BOT_RATED_PAUSED,
        bot=bot,
        data={"no_shows": bot.no_shows_in_row, "recheck_in_s": round(delay)},
    )


NO_SHOW_FIELDS = ["no_shows_in_row", "rated_paused_at", "rated_retry_at", "rated_rechecks"]


def bot_no_shows_clear(*, bot: Bot) -> None:
    """A protocol check passed: the bot is back in rated play, at once. Call inside the check's
    transaction, with ``bot`` locked; the caller saves ``NO_SHOW_FIELDS``."""
    bot.no_shows_in_row = 0
    bot.rated_paused_at = None
    bot.rated_retry_at = None
    bot.rated_rechecks = 0


def bot_recheck_failed(*, bot: Bot) -> None:
    """A protocol check of a bot paused for no-shows failed: the next is due twice as late (at
    most ``ESCOBA_RECHECK_MAX_S``). Call inside the check's transaction, with ``bot`` locked;
    the caller saves ``NO_SHOW_FIELDS``. Nothing for a bot in rated play."""
    if bot.rated_paused_at is None:
        return
    bot.rated_rechecks += 1
    delay = recheck_delay_s(bot.rated_rechecks)
    bot.rated_retry_at = timezone.now() + datetime.timedelta(seconds=delay)
