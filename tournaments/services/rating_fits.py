"""Fitting each pool's ratings from its rated sets, and publishing them.

After each recorded set (``services.rated_sets``) the pool is marked dirty and a Celery task
refits it (``ratings_fit_coalesced``): a lock in the shared cache (Redis) lets one fit run per
pool at a time, and a set recorded during a fit makes the holder fit once more, so fits coalesce.
Each fit (``ratings_fit``) recomputes the whole pool from its rated sets, replaces the published
ratings and adds the history points. ``ratings_recompute`` is the same fit, from every set
afresh, compared with what is published.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field, replace
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import Count, Max, OuterRef, Q, Subquery, Sum
from django.utils import timezone

from games.ratings.baseline import CORRECTION_UNIT, corrected_sum
from games.ratings.fit import Fit, PairTable, fit_table
from games.ratings.ranking import ranking_key, rated
from tournaments import queueing, redis_locks
from tournaments.models import (
    BotVersion,
    PairTotal,
    RatedSet,
    Rating,
    RatingFit,
    RatingPoint,
    SetScore,
    VersionTotal,
)
from tournaments.read_cache import reads_changed

logger = logging.getLogger(__name__)

# A history point is kept when a rating moved at least this much (or its sets changed).
HISTORY_MIN_CHANGE = Decimal("1.00")
CENT = Decimal("0.01")
# The pool's fit lock is a lease, renewed before every fit: far longer than one fit takes (about
# a second for a thousand bots), short enough that a holder that died (a killed worker child)
# frees the pool soon; the sweep (``ratings_sweep``) then sends the fit it owed.
FIT_LEASE_S = 30


def provisional_half_width() -> float:
    """A rating is provisional while its 95 % interval is wider than ± this
    (``ESCOBA_PROVISIONAL_HALF_WIDTH``)."""
    return float(settings.ESCOBA_PROVISIONAL_HALF_WIDTH)


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
        with redis_locks.held(_lock_key(pool), FIT_LEASE_S) as lease:
            if lease is None:
                return fits
            # The database is the truth, the mark a hint: a mark lost with the process or the
            # cache that held it (a killed worker child, a Redis that lost its data) must not
            # leave recorded sets unfitted.
            while cache.delete(_dirty_key(pool)) or _pool_behind(pool):
                if not lease.renew():
                    return fits  # the lease ran out and another task holds the pool now
                ratings_fit(pool=pool)
                fits += 1
        if cache.get(_dirty_key(pool)) is None and not _pool_behind(pool):
            return fits


def _pool_marks(pool: str) -> tuple[int, int]:
    """What a fit of the pool reads, as two numbers that only grow: its highest rated set id
    and how many of its sets are corrected for luck (a correction changes a set's score, not
    its id)."""
    sets = RatedSet.objects.filter(pool=pool)
    last = sets.aggregate(last=Max("id"))["last"] or 0
    return last, sets.filter(corrected_at__isnull=False).count()


def _pool_behind(pool: str) -> bool:
    """Whether the pool has a rated set or a correction newer than its latest fit."""
    fitted = (
        RatingFit.objects.filter(pool=pool)
        .order_by("-id")
        .values_list("last_set_id", "corrected_sets")
        .first()
    )
    last_set_id, corrected = _pool_marks(pool)
    if fitted is None:
        return last_set_id > 0
    return last_set_id > fitted[0] or corrected > fitted[1]


def ratings_sweep() -> list[str]:
    """Request a fit of every pool with a rated set or a correction newer than its latest fit
    (a fit task lost with a worker, or never sent while the broker was down). For Celery beat."""
    pools = RatedSet.objects.order_by().values_list("pool", flat=True).distinct()
    stale = sorted(pool for pool in pools if _pool_behind(pool))
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
    # The pool's corrected sets when this one began reading (``_pool_marks``).
    corrected_sets: int = 0


def pool_fit_compute(*, pool: str, from_sets: bool = False) -> PoolFit:
    """Fit ``pool`` from all its rated sets and rank the result, writing nothing.

    The fit reads the pool's running totals (``pool_totals``); ``from_sets`` sums every rated
    set afresh instead (``ratings_recompute``), which gives the same fit when the totals are
    right. The published ranking holds each bot's current version that has a rated set:
    established ratings first, provisional ones after them, each group best first.
    """
    after_fit_id = RatingFit.objects.filter(pool=pool).aggregate(last=Max("id"))["last"] or 0
    # The marks first: the totals read after them hold at least every set up to the highest id
    # and every correction counted (one committed in between is in them too, and its own fit
    # request follows).
    last_set_id, corrected_sets = _pool_marks(pool)
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
        figures = rated(fit, version_id, provisional_half_width=threshold)
        entries[version_id] = Entry(
            version_id=version_id,
            bot_id=row["bot_id"],
            rating=_cents(figures.rating),
            rating_low=_cents(figures.low),
            rating_high=_cents(figures.high),
            provisional=figures.provisional,
            sets=row["sets"],
            games=row["games"],
            rank=None,
            los_next=None,
        )
    ranked = sorted(
        (v for v, row in versions.items() if row["version"] == row["bot__protocol_version"]),
        key=lambda v: (
            *ranking_key(
                entries[v].provisional, float(entries[v].rating), versions[v]["bot__name"]
            ),
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
    return PoolFit(pool, sets, last_set_id, fit, by_version, seconds, after_fit_id, corrected_sets)


@transaction.atomic
def pool_fit_publish(*, result: PoolFit) -> RatingFit | None:
    """Replace the pool's published ratings with ``result`` and add the history points; None,
    publishing nothing, when a fit of newer sets or corrections (``_pool_marks``) was published
    since this one began.

    Fits of one pool run one at a time under a lease (``ratings_fit_coalesced``), but a holder
    stalled past its lease (a paused process, a slow database, a cache without shared locks)
    can finish after the fit that took over. Published last, its older figures would put the
    rankings and their history back in time, and the sweep, which trusts the newest fit's
    marks, would not mend them.
    Publishers of a pool take turns (``_publish_turn``), so the check sees every fit committed
    before this one writes. A fit from fewer sets with no fit in between (a set deleted by
    hand, then ``ratings_recompute --write``) is published as before.
    """
    pool = result.pool
    _publish_turn(pool)
    overtaken = (
        RatingFit.objects.filter(pool=pool, id__gt=result.after_fit_id)
        .filter(Q(last_set_id__gt=result.last_set_id) | Q(corrected_sets__gt=result.corrected_sets))
        .exists()
    )
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
        corrected_sets=result.corrected_sets,
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
