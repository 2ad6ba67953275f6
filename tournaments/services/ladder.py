"""The continuous ladder: a matchmaker keeps a number of rated duplicate sets in flight per pool.

Each pool of ``ESCOBA_LADDER_POOLS`` has one ladder ``League`` (kind ``ladder``, rated, owned
by the inactive account ``ladder``) that is running for good and grows: ``ladder_fill`` asks
the matchmaker (``tournaments.matchmaking``) for tables until ``ESCOBA_LADDER_SETS_IN_FLIGHT``
sets are pending or being played, and appends them as matches. They are played by the same
``leagues.play_match`` task as every league's, with its leases and idempotence; each finished
set is recorded as a rated set of the pool in the transaction that finishes its match
(``services.rated_sets.rated_set_record``), and the pool's ratings are refitted after it.

Who fills: Celery beat's ``ladder.tick`` every ``ESCOBA_LADDER_TICK_S`` seconds, and, so the
workers never wait for the next tick, a ``ladder.fill`` sent whenever a ladder set ends
(``ESCOBA_LADDER_REFILL_ON_RESULT``). Two fills of one pool never overlap: each holds the
ladder league's row lock for its whole transaction, and one that finds it taken returns at once
(PostgreSQL ``SKIP LOCKED``; SQLite serialises its writers anyway). A lock in the database,
rather than in Redis, dies with the transaction if its process is killed.

Who plays: the bots in rated play (``services.rated_entry.bots_rated_eligible``: active, passed
their protocol check, not paused for no-shows) that are not waiting out the backoff of a no-show
(``Bot.rated_retry_at``), placed by their current version's fitted rating and interval
(``rating_selectors.pool_standing``). A bot whose health is still unknown (just registered, or
moved to a new URL) is checked by the tick, so a newcomer is ranked within its first minute; so
is a bot paused for no-shows once its next check is due (``bots_to_recheck``: 1, 2, 4...
minutes apart, up to an hour), which brings it back when it passes, with nobody acting. Two bots
of one owner never meet; bots owned by an inactive account (the house's example bots) count as
owned by nobody who could farm with them.
"""

from __future__ import annotations

import datetime
import logging
import math
import random
import secrets
from collections import defaultdict

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import IntegrityError, NotSupportedError, transaction
from django.db.models import Count, Q
from django.utils import timezone

from games.ratings import fit as rating_fit
from games.scheduling import minimum_bots
from tournaments import queueing
from tournaments.matchmaking import HISTORY_PER_BOT, Entrant, Matchmaker, Rules
from tournaments.models import Bot, League, Match
from tournaments.selectors.ratings import pool_standing
from tournaments.services.league_creation import league_create, league_name_free, system_user
from tournaments.services.league_schedules import league_add_sets
from tournaments.services.league_states import league_open
from tournaments.services.no_shows import recheck_delay_s
from tournaments.services.rated_entry import bots_rated_eligible, rated_move_timeout_ms

logger = logging.getLogger(__name__)

LADDER_USERNAME = "ladder"
IN_FLIGHT = (Match.Status.PENDING, Match.Status.RUNNING)
# A bot still unknown is checked at most this often (a failed check leaves it unknown until the
# ESCOBA_BOT_UNHEALTHY_AFTER-th failure).
CHECK_NEWCOMER_EVERY_S = 60
# Where a bot whose current version has no fitted rating yet is placed among the rated ones: the
# fit's anchor, which every connected group of ratings averages (docs/ratings.md).
UNRATED = rating_fit.MEAN


def ladder_pools() -> list[str]:
    """Pools the ladder serves (setting ``ESCOBA_LADDER_POOLS``, e.g. ``classic/2p``)."""
    return list(settings.ESCOBA_LADDER_POOLS)


def ladder_rules(players: int) -> Rules:
    return Rules(
        max_sets_per_bot=settings.ESCOBA_LADDER_MAX_SETS_PER_BOT,
        # Partnerships: four different bots, partners rotating (no bot sees a partner's hand).
        table=players if players in (3, 4) else 2,
        spread=float(settings.ESCOBA_LADDER_SPREAD),
    )


def parse_pool(pool: str) -> tuple[str, int]:
    """``"classic/2p"`` → ``("classic", 2)``; a ``ValueError`` for anything else."""
    name, _, size = pool.partition("/")
    if not name or not size.endswith("p") or not size[:-1].isdigit():
        raise ValueError(f"A pool is a ruleset name and a table size, like classic/2p: {pool!r}")
    return name, int(size[:-1])


def ladder_league(pool: str) -> League:
    """The pool's ladder league, made (running, rated, empty) on first use."""
    league = League.objects.filter(kind=League.Kind.LADDER, pool=pool).order_by("id").first()
    if league is not None:
        return league
    ruleset_name, players = parse_pool(pool)
    try:
        with transaction.atomic():
            league = league_create(
                creator=system_user(LADDER_USERNAME),
                # a user's league may hold the name already: names are unique
                name=league_name_free(f"Ladder {pool}"),
                ruleset_name=ruleset_name,
                players=players,
                move_timeout_ms=rated_move_timeout_ms(),
                rated=True,
                kind=League.Kind.LADDER,
            )
            if league.pool != pool:  # e.g. a ruleset whose own name differs from the setting's
                raise ValueError(f"Pool {pool!r} resolves to {league.pool!r}; use that name.")
            return league_open(league=league)
    except (IntegrityError, ValidationError):
        # Another fill made it first: one ladder per pool, and its name is taken too (then
        # league_create says so as a ValidationError). Anything else is a real error.
        made = League.objects.filter(kind=League.Kind.LADDER, pool=pool).first()
        if made is None:
            raise
        return made


def ladder_bots(*, now: datetime.datetime | None = None) -> list[Bot]:
    """Bots the ladder may schedule: those in rated play (``services.rated_entry``: active, passed
    their protocol check, not paused for no-shows) not waiting out a no-show's backoff."""
    now = now or timezone.now()
    waited = Q(rated_retry_at__isnull=True) | Q(rated_retry_at__lte=now)
    return list(
        bots_rated_eligible()
        .filter(waited)
        .select_related("owner")
        .only("id", "owner_id", "owner__is_active")
    )


def _participants(matches) -> dict[int, list[int]]:
    """Match id → its bots, from the through table in one query."""
    rows = Match.bots.through.objects.filter(match__in=matches).order_by("match_id", "bot_id")
    tables: dict[int, list[int]] = defaultdict(list)
    for match_id, bot_id in rows.values_list("match_id", "bot_id"):
        tables[match_id].append(bot_id)
    return tables


def ladder_entrants(league: League, bots: list[Bot]) -> tuple[list[Entrant], list[tuple]]:
    """What the matchmaker weighs of each bot, and the ladder's recent sets (oldest first)."""
    standing = pool_standing(league.pool)
    since = timezone.now() - datetime.timedelta(seconds=settings.ESCOBA_LADDER_RECENT_S)
    through = Match.bots.through.objects.filter(match__league=league)
    recent = dict(
        through.filter(match__created_at__gte=since)
        .values_list("bot_id")
        .annotate(n=Count("id"))
        .values_list("bot_id", "n")
    )
    in_flight = dict(
        through.filter(match__status__in=IN_FLIGHT)
        .values_list("bot_id")
        .annotate(n=Count("id"))
        .values_list("bot_id", "n")
    )
    entrants = []
    for bot in bots:
        rated = standing.get(bot.id)
        entrants.append(
            Entrant(
                bot=bot.id,
                owner=bot.owner_id if bot.owner.is_active else None,
                rating=rated["rating"] if rated else UNRATED,
                width=2 * rated["half_width"] if rated else math.inf,
                new=rated is None,
                recent_sets=recent.get(bot.id, 0),
                in_flight=in_flight.get(bot.id, 0),
            )
        )
    window = max(len(bots), 1) * HISTORY_PER_BOT // ladder_rules(league.players).table
    latest = list(league.matches.order_by("-number").values_list("id", flat=True)[:window])
    tables = _participants(latest)
    history = [tuple(tables[match_id]) for match_id in reversed(latest)]
    return entrants, history


def _lock(league: League) -> League | None:
    """The ladder league's row, locked for this transaction; None when another fill holds it."""
    try:
        query = League.objects.select_for_update(skip_locked=True, no_key=True)
        return query.filter(pk=league.pk).first()
    except NotSupportedError:  # a database without SKIP LOCKED serialises writers instead
        return League.objects.select_for_update(no_key=True).get(pk=league.pk)


def ladder_fill(*, pool: str, rng: random.Random | None = None) -> list[int]:
    """Top the pool's sets in flight up to ``ESCOBA_LADDER_SETS_IN_FLIGHT``; the new match ids.

    Returns at once, adding nothing, when another fill of the pool holds the lock.
    """
    league = ladder_league(pool)
    with transaction.atomic():
        locked = _lock(league)
        if locked is None or locked.status != League.Status.RUNNING:
            return []
        room = settings.ESCOBA_LADDER_SETS_IN_FLIGHT - (
            locked.matches.filter(status__in=IN_FLIGHT).count()
        )
        bots = ladder_bots()
        if room <= 0 or len(bots) < minimum_bots(locked.players):
            return []
        entrants, history = ladder_entrants(locked, bots)
        matchmaker = Matchmaker(
            entrants,
            rules=ladder_rules(locked.players),
            history=history,
            rng=rng or random.Random(secrets.randbits(64)),
        )
        return league_add_sets(league=locked, tables=matchmaker.tables(room))


def bots_to_check() -> list[int]:
    """Active bots whose health is still unknown and that were not checked a minute ago."""
    cutoff = timezone.now() - datetime.timedelta(seconds=CHECK_NEWCOMER_EVERY_S)
    unknown = Bot.objects.filter(status=Bot.Status.ACTIVE, health=Bot.Health.UNKNOWN).filter(
        Q(last_checked_at__isnull=True) | Q(last_checked_at__lt=cutoff)
    )
    # The check itself may take seconds: a bot being checked is not sent again meanwhile.
    return [
        bot_id
        for bot_id in unknown.order_by("id").values_list("id", flat=True)
        if cache.add(f"ladder-check-{bot_id}", 1, CHECK_NEWCOMER_EVERY_S)
    ]


def bots_to_recheck(*, now: datetime.datetime | None = None) -> list[int]:
    """Active bots paused for no-shows whose next check is due, each claimed by moving that
    time on (``recheck_delay_s``), so a tick that comes while the check runs sends no other.

    The check (``bot_check``) brings the bot back into rated play when it passes, and when it
    fails puts the next one twice as far off: nobody needs to act for a bot that was down a
    while to come back.
    """
    now = now or timezone.now()
    due = Bot.objects.filter(status=Bot.Status.ACTIVE, rated_paused_at__isnull=False).filter(
        Q(rated_retry_at__isnull=True) | Q(rated_retry_at__lte=now)
    )
    claimed = []
    for bot_id, retry_at, rechecks in due.order_by("id").values_list(
        "id", "rated_retry_at", "rated_rechecks"
    ):
        later = now + datetime.timedelta(seconds=recheck_delay_s(rechecks))
        if Bot.objects.filter(pk=bot_id, rated_retry_at=retry_at).update(rated_retry_at=later):
            claimed.append(bot_id)
    return claimed


def ladder_tick() -> dict[str, list[int]]:
    """Beat's regular pass: check newcomers and bots paused for no-shows whose check is due,
    settle version tests, fill every pool."""
    from tournaments.services.version_tests import version_tests_settle

    checks = bots_to_check()
    rechecks = bots_to_recheck()
    queueing.newcomer_checks_enqueue([*checks, *(b for b in rechecks if b not in checks)])
    report: dict[str, list[int]] = {
        "checks": checks,
        "rechecks": rechecks,
        "tests": version_tests_settle(),
    }
    for pool in ladder_pools():
        report[pool] = ladder_fill(pool=pool)
    return report


def ladder_after_set(*, league: League) -> None:
    """A ladder set ended: fill its pool again at once (if ``ESCOBA_LADDER_REFILL_ON_RESULT``)."""
    if settings.ESCOBA_LADDER_REFILL_ON_RESULT and league.pool in ladder_pools():
        queueing.ladder_fill_enqueue(league.pool)
