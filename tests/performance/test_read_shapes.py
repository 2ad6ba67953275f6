"""Reads rewritten so their cost does not grow with the pool give the figures they gave before.

The rankings' set score comes from the running totals (``PairTotal``) rather than every
``SetScore``, their trend from two index lookups per version rather than every history point,
and a bot's head to head from its running totals (``HeadToHead``) rather than all its games.
Each is checked here against the figures computed the old way from the rows themselves.
"""

import random

import pytest
from django.db.models import Count

from tests.performance.data import fill_database, head_to_head_counted
from tournaments.models import Bot, League, Match, RatingPoint, SetScore
from tournaments.selectors.pages import bot_head_to_head
from tournaments.selectors.ratings import TREND_POINTS, ranking_rows
from tournaments.services.bot_versions import bot_version_current
from tournaments.services.rated_sets import rated_set_store
from tournaments.services.rating_fits import ratings_fit

pytestmark = pytest.mark.django_db


def _sets_with_many_fits(bots: list[Bot], rng: random.Random, fits: int) -> None:
    """Rated sets between random pairs, the pool fitted after every three, so that versions have
    histories longer than the trend's window. Each set hangs on a match of its own."""
    league = League.objects.get(pk=fill_database(games=2, bots=2, bots_per_league=2).leagues[0])
    for _ in range(fits):
        for _ in range(3):
            a, b = rng.sample(bots, 2)
            va, vb = sorted([bot_version_current(bot=a).id, bot_version_current(bot=b).id])
            number = league.matches.count() + 1
            match = Match.objects.create(
                league=league, number=number, round=1, seed=number, status=Match.Status.FINISHED
            )
            rated_set_store(
                match=match,
                pool="classic/2p",
                games=2,
                version_ids=[va, vb],
                pair_twelfths=[(va, vb, rng.choice([0, 3, 6, 9, 12]))],
            )
        ratings_fit(pool="classic/2p")


def test_rankings_set_score_and_trend_are_those_of_the_rows():
    rng = random.Random(15)
    bots = list(Bot.objects.filter(pk__in=fill_database(games=2, bots=5).bots))
    _sets_with_many_fits(bots, rng, fits=14)
    rows = ranking_rows(pool="classic/2p")
    assert rows
    for row in rows:
        version = bot_version_current(bot=Bot.objects.get(pk=row["bot"])).id
        won = possible = 0
        for player, opponent, twelfths in SetScore.objects.filter(pool="classic/2p").values_list(
            "player_id", "opponent_id", "twelfths"
        ):
            if version in (player, opponent):
                won += twelfths if player == version else 12 - twelfths
                possible += 12
        assert row["set_score"] == pytest.approx(100 * won / possible)
        ratings = [
            float(r)
            for r in RatingPoint.objects.filter(version_id=version, pool="classic/2p")
            .order_by("-id")
            .values_list("rating", flat=True)
        ]
        window = ratings[: TREND_POINTS + 1]
        assert row["trend"] == pytest.approx(window[0] - window[-1])
    # the window really was shorter than some history, so the cut-off was exercised
    longest = (
        RatingPoint.objects.values("version_id").annotate(n=Count("id")).order_by("-n")[0]["n"]
    )
    assert longest > TREND_POINTS + 1


def test_head_to_head_is_each_opponent_s_games_won_drawn_and_lost():
    filled = fill_database(games=90, bots=6, bots_per_league=6)
    for bot in Bot.objects.filter(pk__in=filled.bots):
        rows = bot_head_to_head(bot=bot)
        got = {r["bot_id"]: [r["games"], r["wins"], r["draws"], r["losses"]] for r in rows}
        assert got == head_to_head_counted(bot)
        assert sum(r["games"] for r in rows) > 0
        assert [r["games"] for r in rows] == sorted((r["games"] for r in rows), reverse=True)
