"""Applying a finished game to the Elo pools, and replaying every rated game from scratch.

A game's rating changes are written inside the transaction that stores its result (see
``services.matches``). The bots' rating rows are locked in bot id order, so two games finishing
at once on PostgreSQL queue up instead of losing an update or deadlocking. ``RatingChange`` ids
record the order in which games were applied; ``ratings_recompute`` replays them in that order.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal

from django.conf import settings
from django.db import transaction

from tournaments.elo import INITIAL_RATING, game_deltas
from tournaments.models import Game, Rating, RatingChange
from tournaments.results import game_participants, game_ruleset, game_standings


def elo_k() -> Decimal:
    """K from the ``ESCOBA_ELO_K`` setting."""
    return Decimal(str(settings.ESCOBA_ELO_K))


def rating_apply_game(*, game: Game) -> list[RatingChange]:
    """Rate one finished game of a rated league. Call inside the transaction storing its result.

    Applying a game twice fails on the unique (game, bot) constraint rather than counting twice.
    """
    league = game.league
    if not league.rated:
        return []
    participants = game_participants(game, game_ruleset(game).team_of)
    bot_ids = [bot_id for bot_id, _ in participants]
    known = set(
        Rating.objects.filter(pool=league.pool, bot_id__in=bot_ids).values_list("bot_id", flat=True)
    )
    if len(known) < len(bot_ids):  # first rated game in this pool; another may race to create
        Rating.objects.bulk_create(
            [
                Rating(bot_id=bot_id, pool=league.pool, rating=INITIAL_RATING)
                for bot_id in bot_ids
                if bot_id not in known
            ],
            ignore_conflicts=True,
        )
    ratings = list(
        Rating.objects.select_for_update()
        .filter(pool=league.pool, bot_id__in=bot_ids)
        .order_by("bot_id")
    )
    k = elo_k()
    deltas = game_deltas([r.rating for r in ratings], game_standings(game, participants), k)
    changes = []
    for rating, delta in zip(ratings, deltas, strict=True):
        before = rating.rating
        rating.rating = before + delta
        rating.games += 1
        rating.save(update_fields=["rating", "games", "updated_at"])
        changes.append(
            RatingChange(
                game=game,
                bot_id=rating.bot_id,
                pool=league.pool,
                k=k,
                before=before,
                delta=delta,
                after=rating.rating,
            )
        )
    RatingChange.objects.bulk_create(changes)
    game.rated = True
    game.save(update_fields=["rated"])
    return changes


@dataclass
class RecomputeReport:
    """What a replay found: every difference between stored and replayed numbers."""

    games: int = 0
    ratings: int = 0
    mismatches: list[str] = field(default_factory=list)

    @property
    def exact(self) -> bool:
        return not self.mismatches


@transaction.atomic
def ratings_recompute(*, write: bool = False) -> RecomputeReport:
    """Replay every rated game in the order it was applied, from 1500 for everyone.

    Each game is replayed with the K it was rated with, so the replay must match the stored
    changes and ratings to the cent. With ``write`` the replayed values replace the stored ones
    (useful after repairing a result by hand); without it nothing is changed.
    """
    report = RecomputeReport()
    current: dict[tuple[str, int], Decimal] = defaultdict(lambda: INITIAL_RATING)
    counts: dict[tuple[str, int], int] = defaultdict(int)
    by_game: dict[int, list[RatingChange]] = defaultdict(list)
    for change in RatingChange.objects.select_related("game__league").order_by("id"):
        by_game[change.game_id].append(change)
    for changes in by_game.values():
        game = changes[0].game
        participants = game_participants(game, game_ruleset(game).team_of)
        stored = {change.bot_id: change for change in changes}
        pool = game.league.pool
        befores = [current[(pool, bot_id)] for bot_id, _ in participants]
        deltas = game_deltas(befores, game_standings(game, participants), changes[0].k)
        for (bot_id, _), before, delta in zip(participants, befores, deltas, strict=True):
            change = stored.get(bot_id)
            after = before + delta
            if change is None or (change.before, change.delta, change.after) != (
                before,
                delta,
                after,
            ):
                report.mismatches.append(
                    f"game {game.id} bot {bot_id}: replayed {before}{delta:+} = {after}"
                )
                if write and change is not None:
                    change.before, change.delta, change.after = before, delta, after
                    change.save(update_fields=["before", "delta", "after"])
            current[(pool, bot_id)] = after
            counts[(pool, bot_id)] += 1
        report.games += 1
    for rating in Rating.objects.select_for_update().order_by("bot_id", "pool"):
        key = (rating.pool, rating.bot_id)
        replayed, games = current[key], counts[key]
        report.ratings += 1
        if (rating.rating, rating.games) != (replayed, games):
            report.mismatches.append(
                f"rating of bot {rating.bot_id} in {rating.pool}: stored {rating.rating} "
                f"over {rating.games} games, replayed {replayed} over {games}"
            )
            if write:
                rating.rating, rating.games = replayed, games
                rating.save(update_fields=["rating", "games", "updated_at"])
    return report
