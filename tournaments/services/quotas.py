"""Quotas: how much of the workers one user's requests may take (docs/security.md, "Quotas").

Two kinds of limit, each a setting:

- A league's size (``league_limits_check``): bots entered, games its schedule would hold, games
  per pairing, move timeout. Past one the answer is a 400 on the field, checked when the league
  is created and again when it starts (bots may have been enrolled since).
- What one user has running or waiting (``league_start_quota_check``, ``queued_games_check``):
  round robins running or paused, and games queued in every unfinished league of theirs
  (leagues, challenges, version tests). Past one the answer is a 429 (``QuotaExceeded``).

Counts are read, then written, by concurrent requests: every check that counts a user's rows
runs after ``user_lock``, a row lock on the user (``SELECT ... FOR UPDATE`` on PostgreSQL; on
SQLite every writing transaction takes the database's write lock when it begins), so two
requests of the same user never both see room for one more.

Staff are exempt, and so are the arena's own accounts
(``services.league_creation.system_user``: they cannot log in, so no request is ever theirs).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db.models import Count, Q

from games.scheduling import TABLE_SIZES, schedule_games
from tournaments.models import Game, League

ERROR_LEAGUE_BOTS = "A league may have at most {limit} bots; this one has {count}."
ERROR_LEAGUE_GAMES = (
    "A league may schedule at most {limit} games; {count} bots at {games_per_pairing} games a "
    "pairing would schedule {games}."
)
ERROR_GAMES_PER_PAIRING = "games_per_pairing may be at most {limit}."
ERROR_MOVE_TIMEOUT = "move_timeout_ms may be at most {limit}."
ERROR_RUNNING_LEAGUES = (
    "You have {count} leagues running or paused, as many as one user may have ({limit}); start "
    "this one when one of them has finished or been cancelled."
)
ERROR_QUEUED_GAMES = (
    "You have {queued} games waiting to be played; {adding} more would pass the {limit} one "
    "user may have waiting. Try again when some have been played."
)


class QuotaExceeded(Exception):
    """The user has used up a quota (a 429). ``retry_after``: seconds until one is free again,
    when that is known (a daily quota), else None (it frees when games are played)."""

    def __init__(self, message: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def quota_exempt(user: Any) -> bool:
    """Staff and the arena's own accounts (inactive: they cannot log in) have no quotas."""
    return user is None or user.is_staff or not user.is_active


def user_lock(user: Any) -> None:
    """Lock the user's row until the caller's transaction ends: quota checks of the same user
    then run one after the other (see the module docstring)."""
    list(get_user_model().objects.select_for_update().filter(pk=user.pk).values_list("pk"))


def league_limits_errors(
    *, bot_count: int, players: int, games_per_pairing: int, move_timeout_ms: int
) -> dict[str, list[str]]:
    """Field → messages for a league past the size limits (empty when within them)."""
    errors: dict[str, list[str]] = {}
    if bot_count > settings.ESCOBA_LEAGUE_MAX_BOTS:
        limit = settings.ESCOBA_LEAGUE_MAX_BOTS
        errors["bots"] = [ERROR_LEAGUE_BOTS.format(limit=limit, count=bot_count)]
    if games_per_pairing > settings.ESCOBA_LEAGUE_MAX_GAMES_PER_PAIRING:
        limit = settings.ESCOBA_LEAGUE_MAX_GAMES_PER_PAIRING
        errors["games_per_pairing"] = [ERROR_GAMES_PER_PAIRING.format(limit=limit)]
    if move_timeout_ms > settings.ESCOBA_LEAGUE_MAX_MOVE_TIMEOUT_MS:
        limit = settings.ESCOBA_LEAGUE_MAX_MOVE_TIMEOUT_MS
        errors["move_timeout_ms"] = [ERROR_MOVE_TIMEOUT.format(limit=limit)]
    if players in TABLE_SIZES and games_per_pairing > 0:
        games = schedule_games(
            bot_count=bot_count, players=players, games_per_pairing=games_per_pairing
        )
        if games > settings.ESCOBA_LEAGUE_MAX_GAMES:
            message = ERROR_LEAGUE_GAMES.format(
                limit=settings.ESCOBA_LEAGUE_MAX_GAMES,
                count=bot_count,
                games_per_pairing=games_per_pairing,
                games=games,
            )
            errors.setdefault("games_per_pairing", []).append(message)
    return errors


def league_limits_check(
    *, creator: Any, bot_count: int, players: int, games_per_pairing: int, move_timeout_ms: int
) -> None:
    """Raise ``ValidationError`` (a 400) for a user's league past a size limit."""
    if quota_exempt(creator):
        return
    errors = league_limits_errors(
        bot_count=bot_count,
        players=players,
        games_per_pairing=games_per_pairing,
        move_timeout_ms=move_timeout_ms,
    )
    if errors:
        raise ValidationError(errors)


def queued_games(user: Any) -> int:
    """Games of the user's running or paused leagues not yet played, those of a schedule still
    being written included."""
    leagues = (
        League.objects.filter(
            creator=user, status__in=[League.Status.RUNNING, League.Status.PAUSED]
        )
        .exclude(kind=League.Kind.LADDER)
        .annotate(
            written=Count("games"),
            waiting=Count("games", filter=Q(games__status=Game.Status.PENDING)),
        )
        .values_list("games_planned", "written", "waiting")
    )
    return sum(waiting + max(planned - written, 0) for planned, written, waiting in leagues)


def queued_games_check(*, user: Any, adding: int) -> None:
    """Raise ``QuotaExceeded`` when ``adding`` more games would pass the user's queued games.
    Call after ``user_lock``."""
    if quota_exempt(user):
        return
    queued = queued_games(user)
    limit = settings.ESCOBA_QUEUED_GAMES_PER_USER
    if queued + adding > limit:
        raise QuotaExceeded(ERROR_QUEUED_GAMES.format(queued=queued, adding=adding, limit=limit))


def league_start_quota_check(*, league: League, user: Any, games: int) -> None:
    """The quotas a league's start is held to: its size (bots may have been enrolled since it
    was created), the user's running leagues, the user's queued games. Takes ``user_lock``."""
    if quota_exempt(user):
        return
    user_lock(user)
    if league.kind == League.Kind.LEAGUE:
        league_limits_check(
            creator=user,
            bot_count=league.entries.count(),
            players=league.players,
            games_per_pairing=league.games_per_pairing,
            move_timeout_ms=league.move_timeout_ms,
        )
        running = (
            League.objects.filter(
                creator=user,
                kind=League.Kind.LEAGUE,
                status__in=[League.Status.RUNNING, League.Status.PAUSED],
            )
            .exclude(pk=league.pk)
            .count()
        )
        limit = settings.ESCOBA_RUNNING_LEAGUES_PER_USER
        if running >= limit:
            raise QuotaExceeded(ERROR_RUNNING_LEAGUES.format(count=running, limit=limit))
    queued_games_check(user=user, adding=games)
