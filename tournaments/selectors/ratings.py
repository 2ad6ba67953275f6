"""Reads of the published ratings: rankings, a bot's versions and its rating history.

Everything here comes from the latest fit of each pool (``rating_fits``): one rating per bot
version per pool, with its 95 % interval, whether it is provisional, its sets and games, its place
in the ranking and its likelihood of superiority over the next one down. Pages and the API show
these figures and no other Elo.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

from django.db import connection
from django.db.models import F, QuerySet

from tournaments.models import Bot, BotVersion, Rating, RatingPoint
from tournaments.selectors.fixed import fixed_all, fixed_rows

TREND_POINTS = 10


def _rated_pools() -> QuerySet:
    return Rating.objects.order_by("pool").values_list("pool").distinct()


def rating_pools() -> list[str]:
    """Pools with a published rating, alphabetically (a fixed statement: the rankings page
    reads it on every request)."""
    return [pool for (pool,) in fixed_all(_rated_pools)]


def published_ratings() -> QuerySet[Rating]:
    """Every pool's published ranking: each bot's current version with a rated set,
    established ratings first, then provisional ones, each best first (the fit's ``rank``)."""
    return (
        Rating.objects.filter(rank__isnull=False)
        .select_related("bot__owner", "version")
        .order_by("pool", "rank")
    )


def ranking(pool: str) -> QuerySet[Rating]:
    """The published ranking of ``pool`` (see ``published_ratings``)."""
    return published_ratings().filter(pool=pool)


def current_ratings(*, pool: str, bot_ids: list[int]) -> QuerySet[Rating]:
    """The ratings of these bots' current versions in ``pool`` (a bot without one is absent)."""
    return Rating.objects.filter(
        pool=pool, bot_id__in=bot_ids, version__version=F("bot__protocol_version")
    )


def pool_standing(pool: str) -> dict[int, dict[str, Any]]:
    """Bot id -> its current version's ``rating``, ``half_width`` (of the 95 % interval),
    ``provisional`` and ``sets`` in ``pool``: what a matchmaker needs to pick who plays whom.
    Bots without a rated set of their current version are absent."""
    rows = Rating.objects.filter(
        pool=pool, version__version=F("bot__protocol_version")
    ).values_list("bot_id", "rating", "rating_low", "rating_high", "provisional", "sets")
    return {
        bot_id: {
            "rating": float(rating),
            "half_width": float(high - low) / 2,
            "provisional": provisional,
            "sets": sets,
        }
        for bot_id, rating, low, high, provisional, sets in rows
    }


def bot_current_ratings(bot: Bot) -> QuerySet[Rating]:
    """The bot's ratings in every pool, for its current version only."""
    return Rating.objects.filter(bot=bot, version__version=bot.protocol_version).order_by("pool")


def bot_pools(bot: Bot) -> list[str]:
    """Pools where any version of the bot has a rating, alphabetically."""
    return list(
        Rating.objects.filter(bot=bot).order_by("pool").values_list("pool", flat=True).distinct()
    )


# Per ranked version of a pool: its points won and possible in twelfths summed over the pairs
# it met (``PairTotal`` stores each pair once, lower id first), its newest rating point and the
# one ``TREND_POINTS`` before it (else its first). Parameters: ``TREND_POINTS``, the pool x 3.
_SCORES_AND_TRENDS = """
SELECT r.version_id, s.won, s.possible,
  (SELECT p.rating FROM tournaments_ratingpoint p WHERE p.version_id = r.version_id
     AND p.pool = r.pool ORDER BY p.id DESC LIMIT 1),
  COALESCE(
    (SELECT p.rating FROM tournaments_ratingpoint p WHERE p.version_id = r.version_id
       AND p.pool = r.pool ORDER BY p.id DESC LIMIT 1 OFFSET %s),
    (SELECT p.rating FROM tournaments_ratingpoint p WHERE p.version_id = r.version_id
       AND p.pool = r.pool ORDER BY p.id LIMIT 1))
FROM tournaments_rating r
LEFT JOIN (
  SELECT t.version_id, SUM(t.won) AS won, SUM(t.possible) AS possible FROM (
    SELECT player_id AS version_id, twelfths AS won, 12 * sets AS possible
      FROM tournaments_pairtotal WHERE pool = %s AND sets > 0
    UNION ALL
    SELECT opponent_id, 12 * sets - twelfths, 12 * sets
      FROM tournaments_pairtotal WHERE pool = %s AND sets > 0
  ) t GROUP BY t.version_id
) s ON s.version_id = r.version_id
WHERE r.pool = %s AND r.rank IS NOT NULL
"""


def ranked_scores_and_trends(pool: str) -> tuple[dict[int, float], dict[int, float]]:
    """Per ranked version of the pool (by version id): its mean score per pair met in its rated
    sets (0 to 1, from the running totals, ``PairTotal``) and its rating change over its last
    ``TREND_POINTS`` history points, in one fixed statement summed by the database (as Django
    queries, with every pair of the pool walked in Python, they cost more than half of an
    uncached rankings page)."""
    with connection.cursor() as cursor:
        cursor.execute(_SCORES_AND_TRENDS, [TREND_POINTS, pool, pool, pool])
        rows = cursor.fetchall()
    scores = {
        version_id: int(won) / int(possible) for version_id, won, possible, _, _ in rows if possible
    }
    trends = {
        version_id: float(new) - float(old)
        for version_id, _, _, new, old in rows
        if new is not None and old is not None
    }
    return scores, trends


def rating_row(rating: Rating) -> dict[str, Any]:
    """One published rating as plain JSON numbers: what the API and pages show of it."""
    return {
        "rank": rating.rank,
        "bot": rating.bot_id,
        "name": rating.bot.name,
        "version": rating.version.version,
        "pool": rating.pool,
        "rating": float(rating.rating),
        "rating_low": float(rating.rating_low),
        "rating_high": float(rating.rating_high),
        "provisional": rating.provisional,
        "sets": rating.sets,
        "games": rating.games,
        "los_next": rating.los_next,
        "updated_at": rating.updated_at,
    }


# Column -> key of the plain rows of a ranking: the published figures (``ranking_table``, the
# API's) and what the pages show (``ranking_rows``: no time, which a page does not show and
# whose loading per row costs more than the rest of the row).
_FIGURES = {
    "rank": "rank", "bot_id": "bot_id", "pool": "pool", "rating": "rating",
    "rating_low": "rating_low", "rating_high": "rating_high", "provisional": "provisional",
    "sets": "sets", "games": "games", "los_next": "los_next", "bot__name": "name",
    "version__version": "version_name",
}  # fmt: skip
_PUBLISHED = {**_FIGURES, "updated_at": "updated_at"}
_SHOWN = {
    **_FIGURES, "version_id": "version_id", "bot__owner__username": "owner",
    "bot__no_shows": "no_shows", "bot__no_shows_in_row": "no_shows_in_row",
    "bot__rated_paused_at": "rated_paused_at",
}  # fmt: skip


def _published_values(pool: str) -> QuerySet:
    return ranking(pool).values_list(*_PUBLISHED)


def _shown_values(pool: str) -> QuerySet:
    return ranking(pool).values_list(*_SHOWN)


def _table(build: Callable[[str], QuerySet], keys: Iterable[str], pool: str) -> list[dict]:
    """The rows of ``build(pool)``, a fixed statement (``fixed_rows``), as dicts of ``keys``:
    building and compiling the query as Django does on every request cost more than running
    it, and a ``Rating`` with its bot, owner and version built per row, each bot's secret
    decrypted for nothing, most of an uncached rankings read."""
    keys = tuple(keys)
    return [dict(zip(keys, row, strict=True)) for row in fixed_rows(build, pool)]


def ranking_table(*, pool: str) -> list[dict[str, Any]]:
    """The published ranking of ``pool`` (``ranking``) as plain rows: the rating's figures as
    stored (decimals), ``updated_at``, its bot's ``name`` and its version's ``version_name``."""
    return _table(_published_values, _PUBLISHED.values(), pool)


def ranking_rows(*, pool: str) -> list[dict[str, Any]]:
    """The ranking of ``pool`` with everything a page shows per bot.

    Beside the published figures (``rating_row``'s, but its time): ``owner``, ``bot_id``,
    ``interval`` (half the 95 % interval), ``set_score`` (the mean score per pair in its rated
    sets, in %), ``trend`` (the change over its last ``TREND_POINTS`` history points), and the
    bot's no-shows: ``no_shows`` (all), ``no_shows_in_row`` and ``rated_paused`` (out of rated
    play for them).
    Read in two fixed statements (``fixed_rows`` and ``ranked_scores_and_trends``).
    """
    scores, trends = ranked_scores_and_trends(pool)
    rows = []
    for row in _table(_shown_values, _SHOWN.values(), pool):
        version_id = row["version_id"]
        low, high = float(row["rating_low"]), float(row["rating_high"])
        rows.append(
            {
                "rank": row["rank"],
                "bot": row["bot_id"],
                "name": row["name"],
                "version": row["version_name"],
                "pool": row["pool"],
                "rating": float(row["rating"]),
                "rating_low": low,
                "rating_high": high,
                "provisional": row["provisional"],
                "sets": row["sets"],
                "games": row["games"],
                "los_next": row["los_next"],
                "bot_id": row["bot_id"],
                "owner": row["owner"],
                "interval": (high - low) / 2,
                "set_score": 100 * scores[version_id] if version_id in scores else None,
                "trend": trends.get(version_id, 0.0),
                "no_shows": row["no_shows"],
                "no_shows_in_row": row["no_shows_in_row"],
                "rated_paused": row["rated_paused_at"] is not None,
            }
        )
    return rows


def rating_points() -> QuerySet[RatingPoint]:
    """Every bot version's rating after each fit that moved it, oldest first."""
    return RatingPoint.objects.select_related("version").order_by("id")


def bot_rating_history(bot: Bot, pool: str | None = None) -> QuerySet[RatingPoint]:
    """The bot's rating after each fit that moved it, oldest first, every version (for charts:
    a new version starts a new series)."""
    points = rating_points().filter(bot=bot)
    return points.filter(pool=pool) if pool else points


SERIES_POINTS = 200


_SERIES_COLUMNS = ("rating", "rating_low", "rating_high", "provisional", "sets", "games")


@functools.cache
def _series_statement(pool: str, limit: int) -> Callable[[int], QuerySet[RatingPoint]]:
    """The query of a bot's latest ``limit`` points in ``pool``, newest first, as a statement
    ``fixed_rows`` compiles once (one per pool and limit: a bot's page reads it every time)."""

    def points(bot_id: int) -> QuerySet[RatingPoint]:
        rows = RatingPoint.objects.filter(bot_id=bot_id, pool=pool).order_by("-id")
        return rows.values_list("version_id", "version__version", "created_at", *_SERIES_COLUMNS)

    return points


def bot_rating_series(bot: Bot, pool: str, limit: int = SERIES_POINTS) -> list[dict[str, Any]]:
    """The bot's latest ``limit`` history points in ``pool`` as one series per version, oldest
    version first: ``[{"version", "current", "points": [{"at", "rating", "rating_low",
    "rating_high", "provisional", "sets", "games"}]}]``. A chart's worth: the whole history,
    which grows with every fit, is the API's (``/api/rankings/history/``, page by page)."""
    series: dict[int, dict[str, Any]] = {}
    latest = fixed_rows(_series_statement(pool, limit), bot.pk, limit=limit)
    for version_id, version, *figures in reversed(latest):
        entry = series.setdefault(
            version_id,
            {"version": version, "current": version == bot.protocol_version, "points": []},
        )
        point = dict(zip(("at", *_SERIES_COLUMNS), figures, strict=True))
        for name in ("rating", "rating_low", "rating_high"):
            point[name] = float(point[name])
        entry["points"].append(point)
    return list(series.values())


def bot_versions(bot: Bot) -> list[dict[str, Any]]:
    """Every version the bot announced, newest first, each with its ratings per pool (old
    versions keep theirs: a new version starts a new, provisional entry)."""
    versions = BotVersion.objects.filter(bot=bot).prefetch_related(
        "ratings__bot", "ratings__version"
    )
    return [
        {
            "version": version.version,
            "current": version.version == bot.protocol_version,
            "first_seen_at": version.first_seen_at,
            "last_seen_at": version.last_seen_at,
            "ratings": [rating_row(r) for r in sorted(version.ratings.all(), key=lambda r: r.pool)],
        }
        for version in versions.order_by("-first_seen_at", "-id")
    ]


BOT_PUBLIC_COLUMNS = (
    "id", "name", "owner_id", "description", "status", "health", "protocol_version",
    "accepts_challenges", "rated_paused_at", "no_shows", "no_shows_in_row", "created_at",
)  # fmt: skip
RATING_COLUMNS = (
    "version_id", "pool", "rating", "rating_low", "rating_high", "provisional", "rank", "sets",
    "games", "los_next",
)  # fmt: skip


def bot_public_rows(
    *, bot_id: int
) -> tuple[dict[str, Any] | None, list[dict[str, Any]], list[dict[str, Any]]]:
    """What anyone may see of a bot, as plain rows: the bot (``BOT_PUBLIC_COLUMNS`` and its
    owner's ``owner_name``; None if there is no such bot), every version newest first, and the
    ratings of all its versions by pool (``RATING_COLUMNS`` and the ``version_name``). Three
    queries, no model instance."""
    bot = (
        Bot.objects.filter(pk=bot_id)
        .values(*BOT_PUBLIC_COLUMNS, owner_name=F("owner__username"))
        .first()
    )
    if bot is None:
        return None, [], []
    versions = BotVersion.objects.filter(bot_id=bot_id).order_by("-first_seen_at", "-id")
    ratings = Rating.objects.filter(bot_id=bot_id).order_by("pool", "version_id")
    return (
        bot,
        list(versions.values("id", "version", "first_seen_at", "last_seen_at")),
        list(ratings.values(*RATING_COLUMNS, version_name=F("version__version"))),
    )
