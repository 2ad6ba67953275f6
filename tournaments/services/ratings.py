"""Rated play: who may enter it, no-shows, rated sets, and fitting each pool's ratings.

Every rated result is one the arena chose and a bot earned (docs/ratings.md):

- **Who rates.** Only leagues created by staff or by the arena itself (its system accounts: the
  ladder, operator commands) are rated (``rated_league_errors``), and only bots that passed the
  protocol check and are not paused for no-shows enter them (``bots_rated_eligible``), never two
  bots of one owner.
- **Versions.** A set belongs to the versions its bots announced when it began
  (``match_versions_record``), whatever they announce when it ends.
- **No-shows.** A game in which a bot never made a valid move because it could not be reached or
  never answered is recorded as a no-show on its seats (``game_no_shows_record``) and its set is
  rated for nobody. Only rated games move a bot's run: after a no-show the ladder leaves the bot
  alone for a while (a backoff, doubling with the run), a no-show during that wait grows no run,
  and ``ESCOBA_NOSHOW_PAUSE_AFTER`` of them in a row take the bot out of rated play until a
  protocol check passes (``bot_no_shows_clear``); the ladder's tick checks a paused bot again on
  its own, less and less often (``recheck_delay_s``).
- **Sets.** When a match (one set, dealt afresh game by game) of a rated league finishes,
  ``rated_set_record`` stores what it gave each pair of bot versions, in the transaction that
  finishes the match; ``services.baselines`` corrects it for the luck of its deals later. The
  ladder's matches go the same way: a rated league's finished match *is* a rated set of its pool.
- **Fits.** After each recorded set the pool is marked dirty and a Celery task refits it
  (``ratings_fit_coalesced``): a lock in the shared cache (Redis) lets one fit run per pool at a
  time, and a set recorded during a fit makes the holder fit once more, so fits coalesce. Each fit
  (``ratings_fit``) recomputes the whole pool from its rated sets, replaces the published ratings
  and adds the history points. ``ratings_recompute`` is the same fit.
"""

from __future__ import annotations

import datetime
import logging
import time
import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import Count, F, Max, OuterRef, Q, QuerySet, Subquery, Sum
from django.utils import timezone

from games.engine import Ruleset
from games.ratings.baseline import CORRECTION_UNIT, corrected_sum
from games.ratings.fit import DEFAULT_PROVISIONAL_HALF_WIDTH, Fit, PairTable, fit_table
from games.ratings.sets import GameFacts, game_participants, no_show_seats, set_pair_scores
from tournaments import queueing
from tournaments.bot_calls.runner import GameRecord
from tournaments.models import (
    Bot,
    BotVersion,
    Game,
    Match,
    PairTotal,
    RatedSet,
    Rating,
    RatingFit,
    RatingPoint,
    Seat,
    SetScore,
    VersionTotal,
)
from tournaments.read_cache import reads_changed
from tournaments.services.notifications import EVENT_BOT_RATED_PAUSED, notification_send

logger = logging.getLogger(__name__)

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

DEFAULT_NOSHOW_PAUSE_AFTER = 3
# A history point is kept when a rating moved at least this much (or its sets changed).
HISTORY_MIN_CHANGE = Decimal("1.00")
CENT = Decimal("0.01")
# The pool's fit lock is a lease, renewed before every fit: far longer than one fit takes (about
# a second for a thousand bots), short enough that a holder that died (a killed worker child)
# frees the pool soon; the sweep (``ratings_sweep``) then sends the fit it owed.
FIT_LEASE_S = 30


def rated_move_timeout_ms() -> int:
    """The move timeout of rated play (``ESCOBA_RATED_MOVE_TIMEOUT_MS``): the ladder's, and the
    least with which a user's league may enter another user's bot."""
    return int(settings.ESCOBA_RATED_MOVE_TIMEOUT_MS)


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
    return max(1, int(getattr(settings, "ESCOBA_NOSHOW_PAUSE_AFTER", DEFAULT_NOSHOW_PAUSE_AFTER)))


def provisional_half_width() -> float:
    """A rating is provisional while its 95 % interval is wider than ± this
    (``ESCOBA_PROVISIONAL_HALF_WIDTH``)."""
    return float(getattr(settings, "ESCOBA_PROVISIONAL_HALF_WIDTH", DEFAULT_PROVISIONAL_HALF_WIDTH))


# -- who enters rated play -----------------------------------------------------------------------


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


# -- versions ------------------------------------------------------------------------------------


def bot_version_current(*, bot: Bot) -> BotVersion:
    """The bot's current version row (its ``protocol_version``), made when first seen."""
    version, _ = BotVersion.objects.get_or_create(bot=bot, version=bot.protocol_version)
    return version


def bot_version_observe(*, bot: Bot) -> BotVersion:
    """Note that the bot now announces ``bot.protocol_version``: registration, URL change, check.

    A version never seen before starts a new entry: it is rated from its own sets only, so it is
    provisional until it has enough. The bot's older versions leave the published ranking at once
    (their ratings stay, in its profile) and the pools they were ranked in are refitted.
    """
    version = bot_version_current(bot=bot)
    BotVersion.objects.filter(pk=version.pk).update(last_seen_at=timezone.now())
    stale = Rating.objects.filter(bot=bot, rank__isnull=False).exclude(version=version)
    pools = sorted(set(stale.values_list("pool", flat=True)))
    if pools:
        stale.update(rank=None, los_next=None)
        reads_changed("ratings")
        for pool in pools:
            ratings_fit_request(pool=pool)
    return version


def match_versions_record(*, match: Match) -> None:
    """Note the versions the bots of a rated set announce as it begins: its result is theirs.

    Call when a match begins (``services.matches.match_begin``, under the match's lock); only
    its first beginning counts, so a set replayed after a restart keeps its versions. A bot that
    announces another version mid-set (a check while losing, say) moves no result onto it.
    """
    if match.versions or not match.league.rated:
        return
    bots = list(Bot.objects.filter(matches=match).order_by("id"))
    versions = _current_version_ids(bots)
    match.versions = {str(bot_id): version_id for bot_id, version_id in versions.items()}
    match.save(update_fields=["versions"])


def match_version_ids(*, match: Match, bots: list[Bot]) -> dict[int, int]:
    """Bot id -> the version the set is recorded for: the one noted when it began, or (a set
    begun before versions were noted) the current one."""
    noted = {int(bot_id): version_id for bot_id, version_id in (match.versions or {}).items()}
    missing = [bot for bot in bots if bot.id not in noted]
    if missing:
        noted.update(_current_version_ids(missing))
    return {bot.id: noted[bot.id] for bot in bots}


# -- no-shows ------------------------------------------------------------------------------------


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


# -- rated sets ----------------------------------------------------------------------------------


def rated_set_record(*, match: Match) -> RatedSet | None:
    """Record a finished match as a rated set of its league's pool, when it counts.

    The public way in for every kind of rated play (rated leagues, the ladder): call it inside
    the transaction that marks the match finished (``services.matches.match_finish`` does). It
    counts when the league is rated, every game of the set finished (none aborted), no bot was
    a no-show and every bot is still in rated play. Its games become ``rated``, each pair of bot
    versions gets its score (``games.ratings.sets.set_pair_scores``), and the pool is refitted after
    the transaction commits. Returns None, writing nothing, when it does not count or was
    already recorded.
    """
    league = match.league
    if not league.rated or RatedSet.objects.filter(match=match).exists():
        return None
    games = list(match.games.order_by("number"))
    if not games or any(game.status != Game.Status.FINISHED for game in games):
        return None
    if Seat.objects.filter(game__match=match, no_show=True).exists():
        return None
    bot_ids = sorted({bot_id for game in games for bot_id in game.seating})
    bots = list(Bot.objects.filter(id__in=bot_ids).order_by("id"))
    if any(bot.rated_paused_at is not None for bot in bots):
        return None
    versions = match_version_ids(match=match, bots=bots)
    team_of = Ruleset.from_dict(league.ruleset).team_of
    facts = []
    for game in games:
        participants = game_participants(game.seating, team_of)
        facts.append(
            GameFacts(
                participants=tuple((versions[bot_id], team) for bot_id, team in participants),
                winner=game.winner,
                totals=tuple(game.totals),
                forfeit_team=None if game.forfeit is None else team_of(game.forfeit),
            )
        )
    rated_set = rated_set_store(
        match=match,
        pool=league.pool,
        games=len(games),
        version_ids=list(versions.values()),
        pair_twelfths=[(a, b, round(12 * s)) for a, b, s in set_pair_scores(facts)],
    )
    Game.objects.filter(match=match).update(rated=True)
    ratings_fit_request(pool=league.pool)
    # The baseline correction (services.baselines), should every game's deal be valued already.
    transaction.on_commit(lambda: queueing.set_correction_enqueue(match.id), robust=True)
    return rated_set


def _current_version_ids(bots: list[Bot]) -> dict[int, int]:
    """Bot id -> its current version's id, in one query (a version not seen yet is made)."""
    wanted = {bot.id: bot.protocol_version for bot in bots}
    found = {
        bot_id: version_id
        for version_id, bot_id, version in BotVersion.objects.filter(bot_id__in=wanted).values_list(
            "id", "bot_id", "version"
        )
        if wanted[bot_id] == version
    }
    for bot in bots:
        if bot.id not in found:
            found[bot.id] = bot_version_current(bot=bot).id
    return {bot.id: found[bot.id] for bot in bots}


def rated_set_store(
    *,
    match: Match,
    pool: str,
    games: int,
    version_ids: list[int],
    pair_twelfths: list[tuple[int, int, int]],
) -> RatedSet:
    """Write one rated set: its row, its players, each pair's score (``(player, opponent,
    twelfths)``, player < opponent) and the pool's running totals, which a fit reads.

    Call inside the transaction that records the set, so the totals never disagree with the
    ``SetScore`` rows. Rows are locked in one order (pairs, then versions, each ascending), so
    sets of shared bots recorded at once wait for each other instead of deadlocking.
    """
    rated_set = RatedSet.objects.create(match=match, pool=pool, games=games)
    # A new set has no players yet: one INSERT (``set()`` would read the empty list first).
    RatedSet.players.through.objects.bulk_create(
        RatedSet.players.through(ratedset_id=rated_set.pk, botversion_id=version_id)
        for version_id in sorted(version_ids)
    )
    pairs = sorted(pair_twelfths)
    SetScore.objects.bulk_create(
        SetScore(rated_set=rated_set, pool=pool, player_id=a, opponent_id=b, twelfths=t)
        for a, b, t in pairs
    )
    # Make each row first (a row another transaction is making is waited for, then skipped),
    # then add to it: an UPDATE adds to the committed figure under the row's lock.
    PairTotal.objects.bulk_create(
        [PairTotal(pool=pool, player_id=a, opponent_id=b) for a, b, _ in pairs],
        ignore_conflicts=True,
    )
    for a, b, t in pairs:
        PairTotal.objects.filter(pool=pool, player_id=a, opponent_id=b).update(
            sets=F("sets") + 1, twelfths=F("twelfths") + t
        )
    VersionTotal.objects.bulk_create(
        [VersionTotal(pool=pool, version_id=v) for v in sorted(version_ids)],
        ignore_conflicts=True,
    )
    for version_id in sorted(version_ids):
        VersionTotal.objects.filter(pool=pool, version_id=version_id).update(
            sets=F("sets") + 1, games=F("games") + games
        )
    return rated_set


# -- fits ----------------------------------------------------------------------------------------


def _dirty_key(pool: str) -> str:
    return f"escoba:ratings:dirty:{pool}"


def _lock_key(pool: str) -> str:
    return f"escoba:ratings:fitting:{pool}"


def ratings_fit_request(*, pool: str) -> None:
    """Mark the pool dirty and send a fit task once the current transaction commits.

    Robust: the results are committed already, and a fit that could not be sent (the broker or
    the cache down) is sent by the next result or by ``ratings_sweep``.
    """

    def send() -> None:
        cache.set(_dirty_key(pool), 1, None)
        queueing.ratings_fit_enqueue(pool)

    transaction.on_commit(send, robust=True)


def ratings_fit_coalesced(*, pool: str) -> int:
    """Fit the pool as often as it was marked dirty, never two fits of one pool at once.

    Whoever holds the pool's lock fits while the dirty mark is set; a task that finds the lock
    taken returns at once, since the holder will see the mark. After releasing, the mark is
    looked at again, so a result recorded just as the holder finished is not left unfitted.
    Returns how many fits this call ran.
    """
    fits = 0
    while True:
        token, lock = uuid.uuid4().hex, _lock_key(pool)
        if not cache.add(lock, token, FIT_LEASE_S):
            return fits
        try:
            # The database is the truth, the mark a hint: a mark lost with the process or the
            # cache that held it (a killed worker child, a Redis that lost its data) must not
            # leave recorded sets unfitted.
            while cache.delete(_dirty_key(pool)) or _pool_behind(pool):
                if not _lease_renew(lock, token):
                    return fits  # the lease ran out and another task holds the pool now
                ratings_fit(pool=pool)
                fits += 1
        finally:
            if cache.get(lock) == token:
                cache.delete(lock)
        if cache.get(_dirty_key(pool)) is None and not _pool_behind(pool):
            return fits


def _lease_renew(lock: str, token: str) -> bool:
    """Give the holder of a pool's lock another ``FIT_LEASE_S``; False if ``token`` is not the
    holder's any more."""
    return cache.get(lock) == token and cache.touch(lock, FIT_LEASE_S)


def _pool_behind(pool: str) -> bool:
    """Whether the pool has a rated set newer than its latest fit."""
    newest = RatedSet.objects.filter(pool=pool).aggregate(last=Max("id"))["last"] or 0
    fitted = RatingFit.objects.filter(pool=pool).aggregate(last=Max("last_set_id"))["last"] or 0
    return newest > fitted


def ratings_sweep() -> list[str]:
    """Request a fit of every pool with a rated set newer than its latest fit (a fit task lost
    with a worker, or never sent while the broker was down). For Celery beat."""
    newest_sets = dict(
        RatedSet.objects.values("pool").annotate(last=Max("id")).values_list("pool", "last")
    )
    fitted = dict(
        RatingFit.objects.values("pool")
        .annotate(last=Max("last_set_id"))
        .values_list("pool", "last")
    )
    stale = sorted(pool for pool, last in newest_sets.items() if last > fitted.get(pool, 0))
    for pool in stale:
        ratings_fit_request(pool=pool)
    return stale


def _cents(value: float) -> Decimal:
    return Decimal(repr(float(value))).quantize(CENT, rounding=ROUND_HALF_EVEN)


@dataclass(frozen=True)
class Entry:
    """One bot version's figures after a fit, as they are published."""

    version_id: int
    bot_id: int
    rating: Decimal
    rating_low: Decimal
    rating_high: Decimal
    provisional: bool
    sets: int
    games: int
    rank: int | None
    los_next: float | None

    def published(self) -> tuple:
        return (
            self.rating, self.rating_low, self.rating_high, self.provisional, self.sets,
            self.games, self.rank, None if self.los_next is None else round(self.los_next, 6),
        )  # fmt: skip


PairSums = list[tuple[int, int, int, int, int]]
VersionSums = dict[int, dict[str, int]]


def pool_totals(*, pool: str) -> tuple[PairSums, VersionSums]:
    """The pool's running totals: ``(player, opponent, sets, twelfths, correction)`` per pair
    met, sorted (the correction in millionths of a set: services.baselines),
    and version id -> ``{"sets", "games"}``. One row per pair and per version, whatever the
    number of sets: this is what a fit reads."""
    pairs = list(
        PairTotal.objects.filter(pool=pool, sets__gt=0)
        .order_by("player_id", "opponent_id")
        .values_list("player_id", "opponent_id", "sets", "twelfths", "correction")
    )
    rows = VersionTotal.objects.filter(pool=pool, sets__gt=0).values_list(
        "version_id", "sets", "games"
    )
    versions = {version_id: {"sets": sets, "games": games} for version_id, sets, games in rows}
    return pairs, versions


def pool_totals_from_sets(*, pool: str) -> tuple[PairSums, VersionSums]:
    """The same figures as ``pool_totals``, summed afresh from every rated set of the pool (a
    read of every ``SetScore``: for checking and rebuilding the totals, not for fits)."""
    pairs = list(
        SetScore.objects.filter(pool=pool)
        .values("player_id", "opponent_id")
        .annotate(sets=Count("id"), twelfths=Sum("twelfths"), correction=Sum("correction"))
        .order_by("player_id", "opponent_id")
        .values_list("player_id", "opponent_id", "sets", "twelfths", "correction")
    )
    played = (
        BotVersion.objects.filter(rated_sets__pool=pool)
        .annotate(sets=Count("rated_sets"), games=Sum("rated_sets__games"))
        .values_list("id", "sets", "games")
    )
    versions = {version_id: {"sets": sets, "games": games} for version_id, sets, games in played}
    return pairs, versions


@transaction.atomic
def pool_totals_rebuild(*, pool: str) -> None:
    """Replace the pool's running totals with sums of its rated sets (after rows were deleted
    by hand; ``ratings_recompute --write``)."""
    pairs, versions = pool_totals_from_sets(pool=pool)
    PairTotal.objects.filter(pool=pool).delete()
    VersionTotal.objects.filter(pool=pool).delete()
    PairTotal.objects.bulk_create(
        (
            PairTotal(pool=pool, player_id=a, opponent_id=b, sets=n, twelfths=t, correction=c)
            for a, b, n, t, c in pairs
        ),
        batch_size=2000,
    )
    VersionTotal.objects.bulk_create(
        (VersionTotal(pool=pool, version_id=v, **sums) for v, sums in sorted(versions.items())),
        batch_size=2000,
    )


@dataclass(frozen=True)
class PoolFit:
    pool: str
    sets: int
    last_set_id: int
    fit: Fit
    entries: list[Entry]
    seconds: float
    # The pool's newest fit when this one began reading (0: none): see ``pool_fit_publish``.
    after_fit_id: int = 0


def pool_fit_compute(*, pool: str, from_sets: bool = False) -> PoolFit:
    """Fit ``pool`` from all its rated sets and rank the result, writing nothing.

    The fit reads the pool's running totals (``pool_totals``); ``from_sets`` sums every rated
    set afresh instead (``ratings_recompute``), which gives the same fit when the totals are
    right. The published ranking holds each bot's current version that has a rated set:
    established ratings first, provisional ones after them, each group best first.
    """
    after_fit_id = RatingFit.objects.filter(pool=pool).aggregate(last=Max("id"))["last"] or 0
    # The highest set id first: the totals read after it hold at least every set up to it (a
    # set committed in between is in them too, and its own fit request follows).
    last_set_id = RatedSet.objects.filter(pool=pool).aggregate(last=Max("id"))["last"] or 0
    sets = RatedSet.objects.filter(pool=pool, id__lte=last_set_id).count()
    read = pool_totals_from_sets if from_sets else pool_totals
    pairs, version_sums = read(pool=pool)
    # Each pair's score with its sets' baseline corrections (docs/ratings.md): a set not yet
    # corrected counts as played, unbiased too; the sum is kept within [0, sets].
    rows = [
        (a, b, results, corrected_sum(twelfths / 12 + correction / CORRECTION_UNIT, results))
        for a, b, results, twelfths, correction in pairs
    ]
    played = BotVersion.objects.filter(id__in=version_sums).values(
        "id", "bot_id", "version", "bot__protocol_version", "bot__name"
    )
    versions = {row["id"]: {**row, **version_sums[row["id"]]} for row in played}
    started = time.perf_counter()
    fit = fit_table(PairTable.from_sums(rows, players=versions))
    seconds = time.perf_counter() - started
    threshold = provisional_half_width()
    entries = {}
    for version_id, row in versions.items():
        rating, half = fit.rating_of(version_id), fit.half_width(version_id)
        entries[version_id] = Entry(
            version_id=version_id,
            bot_id=row["bot_id"],
            rating=_cents(rating),
            rating_low=_cents(rating - half),
            rating_high=_cents(rating + half),
            provisional=half > threshold,
            sets=row["sets"],
            games=row["games"],
            rank=None,
            los_next=None,
        )
    ranked = sorted(
        (v for v, row in versions.items() if row["version"] == row["bot__protocol_version"]),
        key=lambda v: (
            entries[v].provisional,
            -entries[v].rating,
            versions[v]["bot__name"].lower(),
            v,
        ),
    )
    for rank, version_id in enumerate(ranked, start=1):
        below = ranked[rank] if rank < len(ranked) else None
        entries[version_id] = replace(
            entries[version_id],
            rank=rank,
            los_next=None if below is None else fit.los(version_id, below),
        )
    by_version = [entries[v] for v in sorted(entries)]
    return PoolFit(pool, sets, last_set_id, fit, by_version, seconds, after_fit_id)


@transaction.atomic
def pool_fit_publish(*, result: PoolFit) -> RatingFit | None:
    """Replace the pool's published ratings with ``result`` and add the history points; None,
    publishing nothing, when a fit of newer sets was published since this one began.

    Fits of one pool run one at a time under a lease (``ratings_fit_coalesced``), but a holder
    stalled past its lease (a paused process, a slow database) can finish after the fit that
    took over. Published last, its older figures would put the rankings and their history back
    in time, and the sweep, which trusts the newest fit's highest set, would not mend them.
    Publishers of a pool take turns (``_publish_turn``), so the check sees every fit committed
    before this one writes. A fit from fewer sets with no fit in between (a set deleted by
    hand, then ``ratings_recompute --write``) is published as before.
    """
    pool = result.pool
    _publish_turn(pool)
    overtaken = RatingFit.objects.filter(
        pool=pool, id__gt=result.after_fit_id, last_set_id__gt=result.last_set_id
    ).exists()
    if overtaken:
        logger.info(
            "fit of %s up to set %s not published: a fit of newer sets was published meanwhile",
            pool, result.last_set_id,
        )  # fmt: skip
        return None
    rating_fit = RatingFit.objects.create(
        pool=pool,
        sets=result.sets,
        last_set_id=result.last_set_id,
        players=len(result.entries),
        iterations=result.fit.iterations,
        seconds=result.seconds,
    )

    def last_point(name: str) -> Subquery:
        points = RatingPoint.objects.filter(version=OuterRef("version"), pool=pool)
        return Subquery(points.order_by("-id").values(name)[:1])

    stored = {
        rating.version_id: rating
        for rating in Rating.objects.select_for_update()
        .filter(pool=pool)
        .annotate(
            charted_rating=last_point("rating"),
            charted_sets=last_point("sets"),
            charted_provisional=last_point("provisional"),
        )
    }
    fields = [
        "rating", "rating_low", "rating_high", "provisional", "sets", "games", "rank", "los_next",
    ]  # fmt: skip
    changed, created, points = [], [], []
    for entry in result.entries:
        values = {name: getattr(entry, name) for name in fields}
        rating = stored.pop(entry.version_id, None)
        charted = None
        if rating is None:
            created.append(
                Rating(bot_id=entry.bot_id, version_id=entry.version_id, pool=pool, fit=rating_fit,
                       **values)
            )  # fmt: skip
        else:
            for name, value in values.items():
                setattr(rating, name, value)
            rating.fit = rating_fit
            changed.append(rating)
            if rating.charted_rating is not None:
                charted = (rating.charted_rating, rating.charted_sets, rating.charted_provisional)
        if (
            charted is None
            or abs(charted[0] - entry.rating) >= HISTORY_MIN_CHANGE
            or charted[1] != entry.sets
            or charted[2] != entry.provisional
        ):
            points.append(
                RatingPoint(
                    fit=rating_fit, bot_id=entry.bot_id, version_id=entry.version_id, pool=pool,
                    rating=entry.rating, rating_low=entry.rating_low,
                    rating_high=entry.rating_high, provisional=entry.provisional,
                    sets=entry.sets, games=entry.games, created_at=rating_fit.created_at,
                )
            )  # fmt: skip
    Rating.objects.bulk_create(created)
    _ratings_update(changed, fields=fields, fit=rating_fit)
    if stored:  # versions whose sets are gone (deleted by hand): nothing left to rate them on
        Rating.objects.filter(pk__in=[r.pk for r in stored.values()]).delete()
    RatingPoint.objects.bulk_create(points, batch_size=1000)
    reads_changed("ratings")
    return rating_fit


# The first key of the pool's PostgreSQL advisory lock (the second is the pool's hash): a
# constant of our own, so no other lock in the database shares it.
_PUBLISH_LOCK_CLASS = 0x45_53_43_42  # "ESCB"


def _publish_turn(pool: str) -> None:
    """Wait until no other transaction is publishing a fit of ``pool``; held until commit.

    On PostgreSQL, a transaction-level advisory lock per pool: unlike a row lock it also
    serialises a pool's first fits, which have no row to lock yet. SQLite (development and
    tests) has no such lock; its writers queue for the whole database, and the lease keeps fits
    apart there.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_advisory_xact_lock(%s, hashtext(%s))", [_PUBLISH_LOCK_CLASS, pool]
            )


# Column types of ``_ratings_update``'s values, so PostgreSQL need not guess them from the first
# row (a NULL ``rank`` there would make the column text).
_RATING_COLUMN_TYPES = {
    "rating": "numeric", "rating_low": "numeric", "rating_high": "numeric",
    "provisional": "boolean", "sets": "integer", "games": "integer", "rank": "integer",
    "los_next": "double precision",
}  # fmt: skip
_UPDATE_BATCH = 100


def _ratings_update(ratings: list[Rating], *, fields: list[str], fit: RatingFit) -> None:
    """Write ``fields`` of every rating, and its fit, with one ``UPDATE … FROM (VALUES …)`` per
    batch of rows.

    Django's ``bulk_update`` builds a ``CASE WHEN id = … THEN …`` per field per row, which costs
    about 5 s of one core for a pool of a thousand bots, more than the fit itself
    (docs/benchmarks.md); this statement, understood by PostgreSQL and SQLite alike, costs a
    few milliseconds. The rows were locked by the caller (``select_for_update``).
    """
    table = connection.ops.quote_name(Rating._meta.db_table)
    model_fields = [Rating._meta.get_field(name) for name in fields]
    columns = [field.column for field in model_fields]
    sets = ", ".join(
        f"{connection.ops.quote_name(column)} = v.column{i + 2}" for i, column in enumerate(columns)
    )
    row = ", ".join(
        ["CAST(%s AS bigint)", *(f"CAST(%s AS {_RATING_COLUMN_TYPES[n]})" for n in fields)]
    )
    now = Rating._meta.get_field("updated_at").get_db_prep_save(timezone.now(), connection)
    with connection.cursor() as cursor:
        for start in range(0, len(ratings), _UPDATE_BATCH):
            batch = ratings[start : start + _UPDATE_BATCH]
            values = ", ".join(f"({row})" for _ in batch)
            params: list[Any] = [fit.pk, now]
            for rating in batch:
                params.append(rating.pk)
                params += [
                    field.get_db_prep_save(getattr(rating, field.attname), connection)
                    for field in model_fields
                ]
            cursor.execute(
                f"UPDATE {table} SET fit_id = %s, updated_at = %s, {sets} "
                f"FROM (VALUES {values}) AS v WHERE {table}.id = v.column1",
                params,
            )


def ratings_fit(*, pool: str) -> RatingFit | None:
    """Fit the pool from all its rated sets and publish the result (see the module docstring);
    None when a fit of newer sets was published while this one ran (``pool_fit_publish``)."""
    return pool_fit_publish(result=pool_fit_compute(pool=pool))


@dataclass
class RecomputeReport:
    """What a recomputation found: every difference between stored and fitted figures."""

    pools: int = 0
    sets: int = 0
    ratings: int = 0
    mismatches: list[str] = field(default_factory=list)

    @property
    def exact(self) -> bool:
        return not self.mismatches


def ratings_recompute(*, write: bool = False, pool: str | None = None) -> RecomputeReport:
    """Fit every pool (or ``pool``) afresh from all its rated sets, as the fit task does from
    the running totals, and compare with what is published: rating, interval, provisional,
    sets, games, rank and LOS to the cent; and the running totals with the sets' sums.

    With ``write`` the totals are rebuilt where they differ and the fits are published (a new
    fit in each pool's history); without it nothing changes. The fit depends only on the rated
    sets, so the comparison is exact.
    """
    report = RecomputeReport()
    pools = sorted(
        {*RatedSet.objects.order_by().values_list("pool", flat=True).distinct()}
        | {*PairTotal.objects.order_by().values_list("pool", flat=True).distinct()}
    )
    for name in [pool] if pool else pools:
        if pool_totals(pool=name) != pool_totals_from_sets(pool=name):
            report.mismatches.append(f"{name}: running totals differ from its rated sets")
            if write:
                pool_totals_rebuild(pool=name)
        result = pool_fit_compute(pool=name, from_sets=True)
        report.pools += 1
        report.sets += result.sets
        stored = {r.version_id: r for r in Rating.objects.filter(pool=name).select_related("bot")}
        for entry in result.entries:
            report.ratings += 1
            rating = stored.pop(entry.version_id, None)
            now = None if rating is None else Entry(
                version_id=rating.version_id, bot_id=rating.bot_id, rating=rating.rating,
                rating_low=rating.rating_low, rating_high=rating.rating_high,
                provisional=rating.provisional, sets=rating.sets, games=rating.games,
                rank=rating.rank, los_next=rating.los_next,
            )  # fmt: skip
            if now is None or now.published() != entry.published():
                report.mismatches.append(
                    f"{name} version {entry.version_id} (bot {entry.bot_id}): stored "
                    f"{None if now is None else now.published()}, fitted {entry.published()}"
                )
        for rating in stored.values():
            report.mismatches.append(f"{name} version {rating.version_id}: stored, not fitted")
        if write:
            pool_fit_publish(result=result)
    return report
