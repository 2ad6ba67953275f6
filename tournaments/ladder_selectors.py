"""Reads of the ladder, challenge and version test pages: who plays now, recent sets, lists."""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet

from tournaments.models import Bot, Challenge, League, Match, VersionTest
from tournaments.services.challenges import set_scores

RECENT_SETS = 20
LISTED = 10
IN_FLIGHT = (Match.Status.RUNNING, Match.Status.PENDING)


def ladder_of(pool: str) -> League | None:
    return League.objects.filter(kind=League.Kind.LADDER, pool=pool).order_by("id").first()


def _sets(matches: QuerySet[Match]) -> list[dict[str, Any]]:
    rows = []
    for match in matches.prefetch_related("bots", "games"):
        games = sorted(match.games.all(), key=lambda g: g.number)
        seating = games[0].seating if games else []
        by_id = {bot.id: bot for bot in match.bots.all()}
        rows.append(
            {
                "match": match,
                "bots": [by_id[bot_id] for bot_id in dict.fromkeys(seating) if bot_id in by_id],
                "games": games,
            }
        )
    return rows


def ladder_in_flight(league: League) -> list[dict[str, Any]]:
    """The ladder's sets being played (first) or waiting for a worker."""
    matches = league.matches.filter(status__in=IN_FLIGHT).order_by("-status", "number")
    return _sets(matches)


def ladder_recent_sets(league: League, limit: int = RECENT_SETS) -> list[dict[str, Any]]:
    """The last sets played, newest first, with the first-seated bot's set score."""
    matches = league.matches.filter(status=Match.Status.FINISHED).order_by("-finished_at", "-id")
    rows = _sets(matches[:limit])
    for row in rows:
        points = []
        for game in row["games"]:
            if game.winner is None or not row["bots"]:
                points.append(0.5)
            else:
                points.append(1.0 if game.seating[game.winner] == row["bots"][0].id else 0.0)
        row["score"] = sum(points) / len(points) if points else None
        row["other"] = None if row["score"] is None else 1 - row["score"]
    return rows


def bot_challenges(bot: Bot, limit: int = LISTED) -> QuerySet[Challenge]:
    return (
        Challenge.objects.filter(Q(bot=bot) | Q(opponent=bot))
        .select_related("bot", "opponent", "league")
        .order_by("-created_at", "-id")[:limit]
    )


def bot_version_tests(bot: Bot, limit: int = LISTED) -> QuerySet[VersionTest]:
    return (
        VersionTest.objects.filter(Q(candidate=bot) | Q(baseline=bot))
        .select_related("candidate", "baseline")
        .order_by("-created_at", "-id")[:limit]
    )


def challenge_summary(challenge: Challenge) -> dict[str, Any]:
    scores = [s.score for s in set_scores(challenge.league, challenge.bot_id)]
    return {
        "sets_done": len(scores),
        "bot_score": sum(scores),
        "opponent_score": len(scores) - sum(scores),
        "games": challenge.league.games.order_by("match__number", "number").only(
            "id", "number", "match_id", "status", "seating", "winner", "totals"
        ),
    }


def challengeable_bots(user: Any, limit: int = 200) -> QuerySet[Bot]:
    """Bots ``user`` may pick as an opponent or baseline: their own and those accepting."""
    return (
        Bot.objects.filter(Q(owner=user) | Q(accepts_challenges=True))
        .exclude(status=Bot.Status.PAUSED)
        .order_by("name")[:limit]
    )
