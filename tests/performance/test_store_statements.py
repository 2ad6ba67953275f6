"""Storing a game and ending a set add to each running-totals table in one statement
(``services.tallies.counts_add``), the first game making the rows and the next adding to them,
and the totals so kept equal the same totals counted afresh."""

from collections import Counter

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

from benchmarks import pool_data
from tournaments.models import (
    Game,
    HeadToHead,
    LeaguePair,
    LeagueStanding,
    LeagueTally,
    PairTotal,
    SetScore,
    VersionTotal,
)
from tournaments.services.league_creation import league_create
from tournaments.services.league_schedules import league_start
from tournaments.services.matches import game_finish, match_begin, match_finish
from tournaments.services.tallies import tallies_rebuild

pytestmark = pytest.mark.django_db

GAME_TOTALS = (LeagueTally, LeagueStanding, LeaguePair, HeadToHead)
SET_TOTALS = (PairTotal, VersionTotal)


def statements_on(queries: CaptureQueriesContext, models: tuple) -> dict[str, list[str]]:
    """Each model's table: the statements that named it."""
    return {
        model._meta.db_table: [q["sql"] for q in queries if f'"{model._meta.db_table}"' in q["sql"]]
        for model in models
    }


def league_rows(league_id: int) -> tuple:
    """The league's totals, less the ids a rebuild makes afresh."""
    rows = [
        LeagueTally.objects.filter(league_id=league_id).values(),
        LeagueStanding.objects.filter(league_id=league_id).order_by("bot_id").values(),
        LeaguePair.objects.filter(league_id=league_id).order_by("bot_id", "opponent_id").values(),
    ]
    return tuple([{k: v for k, v in row.items() if k != "id"} for row in query] for query in rows)


def test_each_total_is_one_statement_and_equals_a_recount():
    bots = pool_data._bots(3)
    owner = get_user_model().objects.get(username=pool_data.LEAGUE_OWNER)
    league = league_create(creator=owner, name="statements", bot_ids=bots, rated=True)
    league_start(league_id=league.id, enqueue=False)
    match_ids = list(league.matches.order_by("number").values_list("id", flat=True))
    for match_id in match_ids[:2]:
        plan = match_begin(match_id=match_id, worker="test", claim="test")
        for game in plan.games:
            record = pool_data.play_record(plan.ruleset, game.seed)
            with CaptureQueriesContext(connection) as queries:
                assert game_finish(game_id=game.game_id, record=record)
            for table, sql in statements_on(queries, GAME_TOTALS).items():
                assert len(sql) == 1, (table, sql)
                assert sql[0].startswith("INSERT") and "ON CONFLICT" in sql[0], sql[0]
        with CaptureQueriesContext(connection) as queries:
            assert match_finish(match_id=match_id)
        for table, sql in statements_on(queries, SET_TOTALS).items():
            assert len(sql) == 1, (table, sql)
            assert sql[0].startswith("INSERT") and "ON CONFLICT" in sql[0], sql[0]

    finished = Game.objects.filter(league=league, status=Game.Status.FINISHED)
    assert finished.count() == 4
    played = Counter(bot for game in finished for bot in game.seating)
    standings = dict(LeagueStanding.objects.filter(league=league).values_list("bot_id", "games"))
    assert standings == dict(played)  # rows made by the first game, added to by the others
    met = Counter()
    for game in finished:
        a, b = game.seating
        met[(a, b)] += 1
        met[(b, a)] += 1
    h2h = {(row.bot_id, row.opponent_id): row.games for row in HeadToHead.objects.all()}
    assert h2h == dict(met)
    kept = league_rows(league.id)
    tallies_rebuild(league_ids=[league.id])
    assert league_rows(league.id) == kept

    sets = Counter()
    for player, opponent in SetScore.objects.values_list("player_id", "opponent_id"):
        sets[(player, opponent)] += 1
    pair_sets = {(row.player_id, row.opponent_id): row.sets for row in PairTotal.objects.all()}
    assert pair_sets == dict(sets) and sum(sets.values()) == 2
    assert sum(VersionTotal.objects.values_list("games", flat=True)) == 8
