"""Rescore every rated set by game points, and drop the luck corrections made for the old scores.

A rated set is scored by game points now (``games.ratings.sets.fresh_set_pair_scores``,
docs/ratings.md), no longer by the share of games won (``set_pair_scores``). Each ``SetScore``
is recomputed from its set's games, and each ``PairTotal`` summed again from them. Every
baseline correction, and every ``BaselineCoefficient`` it used, was fitted on the old scores, so
they go: the sets are left uncorrected (``corrected_at`` null), ``baselines_sweep`` corrects
them again, and ``baselines.baseline_coefficient`` fits coefficients on the new scores when they
are asked for. The deals' values (``DealBaseline``) do not depend on the score and stay.
Going back rescores by ``set_pair_scores`` and drops the corrections the same way.
"""

from collections.abc import Callable, Sequence

from django.db import migrations, models
from django.db.models import OuterRef, Prefetch, Subquery, Sum
from django.db.models.functions import Coalesce

from games.engine import Ruleset
from games.ratings.sets import GameFacts, fresh_set_pair_scores, game_participants, set_pair_scores

# Rated sets read (with their games, players and scores) at a time: a pool of a million games
# migrates without holding it all.
BATCH = 500

Scoring = Callable[[Sequence[GameFacts]], list[tuple[int, int, float]]]


def rescore(apps, scoring: Scoring) -> None:
    """Score every rated set by ``scoring``, then drop every correction and rebuild the totals."""
    RatedSet = apps.get_model("tournaments", "RatedSet")
    SetScore = apps.get_model("tournaments", "SetScore")
    Game = apps.get_model("tournaments", "Game")
    finished = Game.objects.filter(status="finished").order_by("number")
    sets = RatedSet.objects.order_by("id").select_related("match__league")
    sets = sets.prefetch_related(Prefetch("match__games", queryset=finished), "players", "scores")
    teams: dict[int, Callable[[int], int]] = {}  # league id -> its ruleset's team_of
    last_id = 0
    while batch := list(sets.filter(id__gt=last_id)[:BATCH]):
        last_id = batch[-1].id
        changed = []
        for rated_set in batch:
            league = rated_set.match.league
            if league.id not in teams:
                teams[league.id] = Ruleset.from_dict(league.ruleset).team_of
            twelfths = set_twelfths(rated_set, teams[league.id], scoring)
            for score in rated_set.scores.all():
                new = twelfths.get((score.player_id, score.opponent_id), score.twelfths)
                if new != score.twelfths:
                    score.twelfths = new
                    changed.append(score)
        SetScore.objects.bulk_update(changed, ["twelfths"])
    corrections_drop(apps)


def set_twelfths(
    rated_set, team_of: Callable[[int], int], scoring: Scoring
) -> dict[tuple[int, int], int]:
    """(player, opponent) -> the player's score in twelfths, from the set's finished games, as
    ``services.rated_sets.rated_set_record`` builds them."""
    version_of = {version.bot_id: version.id for version in rated_set.players.all()}
    facts = [
        GameFacts(
            participants=tuple(
                (version_of[bot_id], team)
                for bot_id, team in game_participants(game.seating, team_of)
            ),
            winner=game.winner,
            totals=tuple(game.totals),
            forfeit_team=None if game.forfeit is None else team_of(game.forfeit),
        )
        for game in rated_set.match.games.all()
    ]
    return {(a, b): round(12 * score) for a, b, score in scoring(facts)}


def corrections_drop(apps) -> None:
    """Leave every set uncorrected, delete the coefficients, and sum every pair's total again
    from its scores, without corrections. The fits counted corrections that are gone: counted
    from 0 again, the first new correction shows the pool behind its fit (``ratings_sweep``)."""
    RatedSet = apps.get_model("tournaments", "RatedSet")
    SetScore = apps.get_model("tournaments", "SetScore")
    PairTotal = apps.get_model("tournaments", "PairTotal")
    BaselineCoefficient = apps.get_model("tournaments", "BaselineCoefficient")
    RatingFit = apps.get_model("tournaments", "RatingFit")
    SetScore.objects.update(correction=0, controls=None, band=None)
    RatedSet.objects.update(corrected_at=None, coefficient=None)
    BaselineCoefficient.objects.all().delete()
    RatingFit.objects.update(corrected_sets=0)
    pair_sum = (
        SetScore.objects.filter(
            pool=OuterRef("pool"), player=OuterRef("player"), opponent=OuterRef("opponent")
        )
        .order_by()
        .values("pool")
        .annotate(total=Sum("twelfths"))
        .values("total")
    )
    total = Coalesce(Subquery(pair_sum), 0, output_field=models.PositiveBigIntegerField())
    PairTotal.objects.update(twelfths=total, correction=0)


def forwards(apps, schema_editor) -> None:
    rescore(apps, fresh_set_pair_scores)


def backwards(apps, schema_editor) -> None:
    rescore(apps, set_pair_scores)


class Migration(migrations.Migration):
    dependencies = [
        ("tournaments", "0023_expertctl_coefficient_policy_means"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
