"""The rescore_sets_by_points migration scores every rated set by game points, drops the luck
corrections and coefficients fitted on the old scores, sums the pair totals again, and back."""

from importlib import import_module
from pathlib import Path

import pytest
from django.utils import timezone

from games.engine import Ruleset
from games.ratings.sets import GameFacts, fresh_set_pair_scores
from tests.leagues.conftest import latest_schema_after, migrate  # noqa: F401 (a fixture)

# Found by name, so that renumbering the migration at merge needs no change here.
NAME = next(
    Path(__file__).parents[2].glob("tournaments/migrations/*_rescore_sets_by_points.py")
).stem
AFTER = [("tournaments", NAME)]
BEFORE = import_module(f"tournaments.migrations.{NAME}").Migration.dependencies

# Two sets of bot 1 against bot 2: (seating by bot, winner team, totals by team) per game.
# By games the first is 2-0 (12 twelfths) and the second 1-1 leaning to bot 1 on points (9);
# by game points bot 1 is 3 points up over each (7 and 7).
SETS = [
    [((1, 2), 0, (21, 19)), ((2, 1), 1, (20, 21))],
    [((1, 2), 0, (21, 15)), ((2, 1), 0, (21, 18))],
]
OLD = [12, 9]
NEW = [7, 7]


def fresh_twelfths(plan, version_of):
    """What ``fresh_set_pair_scores`` gives the planned set, in twelfths."""
    facts = [
        GameFacts(
            participants=tuple((version_of[bot], seat) for seat, bot in enumerate(seating)),
            winner=winner,
            totals=totals,
            forfeit_team=None,
        )
        for seating, winner, totals in plan
    ]
    [(_, _, score)] = fresh_set_pair_scores(facts)
    return round(12 * score)


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("latest_schema_after")
def test_sets_are_rescored_by_points_and_their_corrections_dropped_and_back():
    old = migrate(BEFORE)
    user = old.get_model("auth", "User").objects.create(username="migrator")
    Bot = old.get_model("tournaments", "Bot")
    BotVersion = old.get_model("tournaments", "BotVersion")
    bots = {
        n: Bot.objects.create(owner=user, name=f"b{n}", url="http://x", secret="s") for n in (1, 2)
    }
    versions = {n: BotVersion.objects.create(bot=bot, version="1") for n, bot in bots.items()}
    league = old.get_model("tournaments", "League").objects.create(
        name="l", creator=user, ruleset=Ruleset.from_preset("classic").to_dict(),
        pool="classic/2p", players=2, seed=7, rated=True,
    )  # fmt: skip
    coefficient = old.get_model("tournaments", "BaselineCoefficient").objects.create(
        pool="classic/2p", period_start=timezone.now(), bands=[{"betas": [0.1] * 6}]
    )
    Game = old.get_model("tournaments", "Game")
    set_ids = []
    for number, (plan, twelfths) in enumerate(zip(SETS, OLD, strict=True), 1):
        match = old.get_model("tournaments", "Match").objects.create(
            league=league, number=number, round=1, seed=number, status="finished"
        )
        for game_number, (seating, winner, totals) in enumerate(plan, 1):
            game = Game.objects.create(
                league=league, match=match, number=game_number, seed=game_number,
                seating=[bots[n].pk for n in seating], status="finished", winner=winner,
                totals=list(totals), rated=True,
            )  # fmt: skip
        old.get_model("tournaments", "DealBaseline").objects.create(
            game=game, seed=game.seed, values=[[1.0] * 3, [-1.0] * 3], policy="p", plays=1,
            cpu_ms=1.0,
        )  # fmt: skip
        rated_set = old.get_model("tournaments", "RatedSet").objects.create(
            match=match, pool="classic/2p", games=2, coefficient=coefficient,
            corrected_at=timezone.now(),
        )  # fmt: skip
        rated_set.players.set(versions.values())
        old.get_model("tournaments", "SetScore").objects.create(
            rated_set=rated_set, pool="classic/2p", player=versions[1], opponent=versions[2],
            twelfths=twelfths, controls=[0.5] * 6, band=0, correction=-40_000,
        )  # fmt: skip
        set_ids.append(rated_set.pk)
    old.get_model("tournaments", "PairTotal").objects.create(
        pool="classic/2p", player=versions[1], opponent=versions[2], sets=2, twelfths=sum(OLD),
        correction=-80_000,
    )  # fmt: skip

    old.get_model("tournaments", "RatingFit").objects.create(
        pool="classic/2p", sets=2, last_set_id=max(set_ids), corrected_sets=2, players=2
    )

    new = migrate(AFTER)
    version_of = {n: version.pk for n, version in versions.items()}
    assert [fresh_twelfths(plan, version_of) for plan in SETS] == NEW
    scores = new.get_model("tournaments", "SetScore").objects.order_by("rated_set_id")
    assert [(s.rated_set_id, s.twelfths) for s in scores] == list(zip(set_ids, NEW, strict=True))
    assert all((s.correction, s.controls, s.band) == (0, None, None) for s in scores)
    for rated_set in new.get_model("tournaments", "RatedSet").objects.all():
        assert (rated_set.corrected_at, rated_set.coefficient_id) == (None, None)
    assert not new.get_model("tournaments", "BaselineCoefficient").objects.exists()
    assert new.get_model("tournaments", "DealBaseline").objects.count() == 2
    # the fit counted corrections that are gone: the first new one shows the pool behind
    assert new.get_model("tournaments", "RatingFit").objects.get().corrected_sets == 0
    total = new.get_model("tournaments", "PairTotal").objects.get()
    assert (total.sets, total.twelfths, total.correction) == (2, sum(NEW), 0)

    back = migrate(BEFORE)
    scores = back.get_model("tournaments", "SetScore").objects.order_by("rated_set_id")
    assert [s.twelfths for s in scores] == OLD
    total = back.get_model("tournaments", "PairTotal").objects.get()
    assert (total.sets, total.twelfths, total.correction) == (2, sum(OLD), 0)
