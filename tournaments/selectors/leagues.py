"""Reads that take more than one query: league standings, crosstable, progress.

Standings are computed from the league's finished games on every read; a league has at most a few
thousand games, and the figures can then never disagree with the games they come from. They are
the league's own results (points, sets won, drawn and lost): the one rating of a bot is its pool's,
from ``tournaments.selectors.ratings``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Prefetch, Q, QuerySet, Sum

from games.engine import Ruleset
from games.ratings.sets import GameFacts, crosstable_cells, game_participants, set_outcomes
from tournaments.models import Bot, Game, GameLog, League, Seat
from tournaments.selectors.ratings import current_ratings


def bots_schedulable() -> QuerySet[Bot]:
    """Bots a league may schedule: active (not paused by their owner) and not unhealthy.

    A bot whose health is still unknown (registered, never fully checked) is schedulable: its
    `GET U` answered `escoba/1` at registration.
    """
    return Bot.objects.filter(status=Bot.Status.ACTIVE).exclude(health=Bot.Health.UNHEALTHY)


def seats_with_bots() -> Prefetch:
    """A game's seats with their bots, for ``prefetch_related``: the bots read in the same query
    without what no list of seats shows (the check report, a few KB of JSON each, the description
    and the secret)."""
    seats = Seat.objects.select_related("bot").defer(
        "bot__last_check_report", "bot__description", "bot__secret"
    )
    return Prefetch("seats", queryset=seats)


def match_games_numbered() -> Prefetch:
    """A game's match with the ids, numbers, deals and status of all its games (the set's games),
    for ``prefetch_related``: what ``observers.game_sight`` reads to know whether another game in
    play shares the game's deal."""
    games = Game.objects.only("id", "match_id", "number", "seed", "status")
    return Prefetch("match__games", queryset=games)


def _finished_games(league: League) -> list[tuple[int, GameFacts]]:
    """(match id, the game as the set scoring sees it) for every finished game, in id order."""
    team_of = Ruleset.from_dict(league.ruleset).team_of
    facts = []
    games = league.games.filter(status=Game.Status.FINISHED).order_by("id")
    # league_id too: the related manager sets game.league from it, one query per game without it
    fields = ("id", "league_id", "match_id", "seating", "winner", "totals", "forfeit")
    for game in games.only(*fields):
        forfeit_team = None if game.forfeit is None else team_of(game.forfeit)
        facts.append(
            (
                game.match_id,
                GameFacts(
                    participants=tuple(game_participants(game.seating, team_of)),
                    winner=game.winner,
                    totals=tuple(game.totals),
                    forfeit_team=forfeit_team,
                ),
            )
        )
    return facts


@dataclass
class Standing:
    bot_id: int
    bot: str
    points: float = 0.0
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    points_for: int = 0
    points_against: int = 0
    faults: int = 0
    sets_won: int = 0
    sets_drawn: int = 0
    sets_lost: int = 0
    rating: float | None = None
    rating_low: float | None = None
    rating_high: float | None = None
    provisional: bool | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _set_results(games: list[tuple[int, GameFacts]]) -> list[dict[int, str]]:
    """Each duplicate set's outcome per bot (``games.ratings.sets.set_outcomes``)."""
    by_match: dict[int, list[GameFacts]] = defaultdict(list)
    for match_id, game in games:
        by_match[match_id].append(game)
    return [set_outcomes(games) for games in by_match.values()]


def league_standings(league: League) -> list[dict[str, Any]]:
    """One row per entered bot, best first: points (1 a win, ½ a draw), then game points.

    ``rating`` is the bot's published rating in the league's pool (its current version's; None
    without one) with its 95 % interval (``rating_low``, ``rating_high``) and ``provisional``,
    the same figures as the rankings show; the league itself has no second Elo.
    """
    bots = dict(league.bots.values_list("id", "name"))
    rows = {bot_id: Standing(bot_id=bot_id, bot=name) for bot_id, name in bots.items()}
    games = _finished_games(league)
    for _, game in games:
        for bot_id, team in game.participants:
            row = rows[bot_id]
            row.games += 1
            if game.winner is None:
                row.draws += 1
                row.points += 0.5
            elif game.winner == team:
                row.wins += 1
                row.points += 1
            else:
                row.losses += 1
            row.points_for += game.totals[team]
            row.points_against += sum(game.totals) - game.totals[team]
    for outcomes in _set_results(games):
        for bot_id, outcome in outcomes.items():
            setattr(rows[bot_id], f"sets_{outcome}", getattr(rows[bot_id], f"sets_{outcome}") + 1)
    faults = (
        league.games.filter(status=Game.Status.FINISHED)
        .values("seats__bot_id")
        .annotate(total=Sum("seats__faults"))
    )
    for item in faults:
        if item["seats__bot_id"] in rows:
            rows[item["seats__bot_id"]].faults = item["total"] or 0
    for rating in current_ratings(pool=league.pool, bot_ids=list(rows)):
        row = rows[rating.bot_id]
        row.rating, row.provisional = float(rating.rating), rating.provisional
        row.rating_low, row.rating_high = float(rating.rating_low), float(rating.rating_high)
    ordered = sorted(
        rows.values(),
        key=lambda r: (-r.points, -(r.points_for - r.points_against), -r.points_for, r.bot),
    )
    return [row.as_dict() for row in ordered]


def _cell(score: float, games: int) -> dict[str, Any]:
    return {"score": score, "games": games}


def league_crosstable(league: League) -> dict[str, Any]:
    """Pairwise results: ``rows[i]["cells"][j]`` is bot i's score against bot j over its games.

    In 3-bot games each pair of bots counts as meeting once per game (by standing), and in
    partnership games the two bots of a table meet as opponents.
    """
    bots = list(league.bots.order_by("name").values_list("id", "name"))
    cells = crosstable_cells(game for _, game in _finished_games(league))
    return {
        "bots": [{"id": bot_id, "name": name} for bot_id, name in bots],
        "rows": [
            {
                "bot": bot_id,
                "cells": [
                    None if other_id == bot_id else _cell(*cells.get((bot_id, other_id), (0.0, 0)))
                    for other_id, _ in bots
                ],
            }
            for bot_id, _ in bots
        ],
    }


def league_progress(league: League) -> dict[str, int]:
    """Games done (finished or aborted) out of all scheduled, and bot faults so far."""
    counts = league.games.aggregate(
        total=Count("id"),
        done=Count("id", filter=~Q(status=Game.Status.PENDING)),
        aborted=Count("id", filter=Q(status=Game.Status.ABORTED)),
        faults=Sum("faults"),
    )
    return {
        "done": counts["done"],
        "total": counts["total"],
        "aborted": counts["aborted"],
        "faults": counts["faults"] or 0,
    }


def game_for_sight(*, game_id: int) -> Game | None:
    """The game with what ``observers.game_sight`` reads (league, match, the match's games), or
    None: one game's view is decided from these, before anything of it is read."""
    games = Game.objects.select_related("league", "match").prefetch_related(match_games_numbered())
    return games.filter(pk=game_id).order_by().first()


def game_log_gzip(*, game_id: int) -> bytes | None:
    """The game's stored escoba-log/1 document as gzip bytes (None before it finished), reading
    only that column of the log table. Ask ``observers.game_sight`` first whether it may be
    shown; the log endpoint serves these bytes as they are to clients that accept gzip."""
    rows = GameLog.objects.filter(game_id=game_id).values_list("document_gzip", flat=True)
    stored = rows.first()
    return None if stored is None else bytes(stored)


def game_diagnostics(*, game: Game, viewer: AbstractBaseUser | AnonymousUser) -> dict | None:
    """What the runner recorded of each move request of ``game``, as ``viewer`` may see it.

    Every play (the call on which a seat forfeited too) has its round and play (1-based), seat,
    bot, the move played (null: the seat forfeited instead), ``latency_ms`` and ``fault`` with
    its ``detail``. Only plays of the viewer's own bots (``mine``) carry their ``debug`` text
    and the exact ``request`` body sent; for everyone else those are null. None when the game
    has no log yet.
    """
    log = GameLog.objects.filter(game=game).first()  # diagnostics need the log's plays
    if log is None:
        return None
    seating = list(game.seating)
    own: set[int] = set()
    if viewer.is_authenticated:
        own = set(
            Bot.objects.filter(owner_id=viewer.pk, pk__in=seating).values_list("pk", flat=True)
        )
    plays = []
    for row in log.diagnostics:
        bot = seating[row["seat"]] if row["seat"] < len(seating) else None
        mine = bot in own
        plays.append(
            {
                "round": row["round"],
                "play": row["play"],
                "seat": row["seat"],
                "bot": bot,
                "move": row["move"],
                "latency_ms": row["latency_ms"],
                "fault": row["fault"],
                "detail": row["detail"],
                "mine": mine,
                "debug": row.get("debug") if mine else None,
                "debug_truncated": bool(row.get("debug_truncated")) if mine else False,
                "request": row.get("request") if mine else None,
            }
        )
    return {"game": game.pk, "faults": log.faults, "plays": plays}
