"""Reads of the ladder, challenges and version tests: who plays now, recent sets, set scores.

A set's score is the one the ratings use, by the rule for how the set was dealt
(``games.ratings.sets.pair_scores``): by game points on fresh deals (the ladder, a challenge
between two owners), by games won on one deal (an unrated set of one owner's bots), forfeits
first, so a challenge and the published rating count a set alike. A version test counts every
set by games won, its SPRT's five outcomes.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from django.db.models import Q, QuerySet

from games.engine import Ruleset
from games.ratings.sets import pair_scores
from tournaments.models import Bot, Challenge, Game, League, Match, VersionTest
from tournaments.observers import league_plays_anonymously
from tournaments.selectors.leagues import game_facts

RECENT_SETS = 20
LISTED = 10
IN_FLIGHT = (Match.Status.RUNNING, Match.Status.PENDING)


@dataclass(frozen=True)
class PlayedSet:
    match_id: int
    score: float  # the bot's, from 0 to 1; the other bot's is 1 minus it


def set_score_of(games: list[Game], bot_id: int, team_of, *, by_games: bool = False) -> float:
    """``bot_id``'s score in one finished set of two bots (``seed`` loaded), by the rule for how
    it was dealt (``pair_scores``): by game points on fresh deals (rated play, a challenge
    between two owners), by games won on one deal (one owner's bots). ``by_games`` scores it by
    games won however it was dealt: a version test's SPRT counts the five outcomes of a two-game
    set (0, 1/4, 1/2, 3/4, 1: ``tournaments.sprt``)."""
    dealt_afresh = not by_games and len({game.seed for game in games}) > 1
    facts = [game_facts(game, team_of) for game in games]
    ((a, _b, score),) = pair_scores(facts, dealt_afresh=dealt_afresh)
    return score if a == bot_id else 1.0 - score


def league_set_scores(league: League, bot_id: int, *, by_games: bool = False) -> list[PlayedSet]:
    """``bot_id``'s score in each finished set of a two-bot league, in the order they ended
    (``by_games``: as ``set_score_of`` has it).

    A set with a game that did not finish (aborted at the time limit) is left out: one game of a
    duplicate pair alone carries the deal's luck.
    """
    matches = list(
        league.matches.filter(status=Match.Status.FINISHED)
        .order_by("finished_at", "id")
        .values_list("id", flat=True)
    )
    games: dict[int, list[Game]] = defaultdict(list)
    rows = Game.objects.filter(match_id__in=matches).order_by("match_id", "number")
    fields = ("id", "match_id", "seating", "seed", "status", "winner", "totals", "forfeit")
    for game in rows.only(*fields):
        games[game.match_id].append(game)
    team_of = Ruleset.from_dict(league.ruleset).team_of
    return [
        PlayedSet(
            match_id=match_id,
            score=set_score_of(games[match_id], bot_id, team_of, by_games=by_games),
        )
        for match_id in matches
        if games[match_id] and all(g.status == Game.Status.FINISHED for g in games[match_id])
    ]


GAME_IDS_LISTED = 100


def league_game_ids(league: League, limit: int = GAME_IDS_LISTED) -> list[int]:
    """The ids of the league's latest ``limit`` games, in schedule order (ids grow with the match
    and game numbers); all of them page by page: ``/api/games/?league=<id>``."""
    newest = league.games.order_by("-id").values_list("id", flat=True)[:limit]
    return sorted(newest)


def ladder_of(pool: str) -> League | None:
    return League.objects.filter(kind=League.Kind.LADDER, pool=pool).order_by("id").first()


def _sets(matches: QuerySet[Match]) -> list[dict[str, Any]]:
    rows = []
    for match in matches.prefetch_related("bots", "games"):
        games = list(match.games.all())
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
    """The ladder's sets being played (first) or waiting for a worker, with no bots: the ladder is
    rated play, whose tables are anonymous until their games end (tournaments/observers.py)."""
    matches = league.matches.filter(status__in=IN_FLIGHT).order_by("-status", "number")
    rows = _sets(matches)
    if league_plays_anonymously(league):
        for row in rows:
            row["bots"] = []
    return rows


def ladder_recent_sets(league: League, limit: int = RECENT_SETS) -> list[dict[str, Any]]:
    """The last sets played, newest first, with the first-seated bot's set score (None for a
    set with an aborted game, which counts for nobody)."""
    matches = league.matches.filter(status=Match.Status.FINISHED).order_by("-finished_at", "-id")
    rows = _sets(matches[:limit])
    team_of = Ruleset.from_dict(league.ruleset).team_of
    for row in rows:
        games, bots = row["games"], row["bots"]
        scored = len(bots) == 2 and all(g.status == Game.Status.FINISHED for g in games)
        row["score"] = set_score_of(games, bots[0].id, team_of) if scored and games else None
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
    scores = [s.score for s in league_set_scores(challenge.league, challenge.bot_id)]
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


def challenge_find(challenge_id: int) -> Challenge | None:
    return (
        Challenge.objects.select_related("bot", "opponent", "league", "creator")
        .filter(pk=challenge_id)
        .first()
    )


def version_test_find(test_id: int) -> VersionTest | None:
    return (
        VersionTest.objects.select_related("candidate", "baseline", "league", "creator")
        .filter(pk=test_id)
        .first()
    )
