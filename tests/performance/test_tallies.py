"""A league's running totals (standings, crosstable, progress) kept as its games are stored
equal the same totals counted afresh from the games (``tallies_rebuild``, which the migration
that made them runs too), and its reads never scan the games."""

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

from benchmarks import pool_data
from tournaments.models import Game, League, LeaguePair, LeagueStanding, LeagueTally
from tournaments.selectors.leagues import (
    STANDING_COLUMNS,
    league_crosstable,
    league_progress,
    league_standings,
)
from tournaments.services.league_creation import league_create
from tournaments.services.league_schedules import league_start
from tournaments.services.matches import game_abort, game_finish, match_begin
from tournaments.services.tallies import tallies_rebuild

pytestmark = pytest.mark.django_db
# pool_fill writes here (processes=0): its worker processes, on PostgreSQL, have connections of
# their own, which would not see the rows this test's transaction made (its bots' owner).


def totals(league: League) -> tuple:
    return (
        LeagueTally.objects.filter(league=league).values().first(),
        sorted(
            LeagueStanding.objects.filter(league=league).values_list("bot_id", *STANDING_COLUMNS)
        ),
        sorted(
            LeaguePair.objects.filter(league=league).values_list(
                "bot_id", "opponent_id", "score", "games"
            )
        ),
    )


def test_running_totals_equal_a_recount_of_the_games():
    pool_data.pool_fill(games=1, bots=4, bots_per_league=4, fit_every=0, processes=0)
    league = League.objects.get(kind=League.Kind.LEAGUE)
    kept = totals(league)
    assert kept[0]["games"] == kept[0]["finished"] == 12
    assert len(kept[1]) == 4 and len(kept[2]) == 12  # a line per bot, a cell per ordered pair

    tallies_rebuild(league_ids=[league.id])
    assert totals(league) == kept
    standings = league_standings(league)
    assert sum(row["games"] for row in standings) == 24
    assert sum(row["points"] for row in standings) == 12
    assert sum(row["sets_won"] + row["sets_drawn"] + row["sets_lost"] for row in standings) == 12
    cells = [cell for row in league_crosstable(league)["rows"] for cell in row["cells"] if cell]
    assert sum(cell["score"] for cell in cells) == 12 and sum(c["games"] for c in cells) == 24


def test_an_aborted_game_counts_as_done_without_a_result():
    bots = pool_data._bots(3)
    owner = get_user_model().objects.get(username=pool_data.LEAGUE_OWNER)
    league = league_create(creator=owner, name="aborted", bot_ids=bots, rated=True)
    league_start(league_id=league.id, enqueue=False)
    match_id = league.matches.order_by("number").values_list("id", flat=True)[0]
    plan = match_begin(match_id=match_id, worker="test", claim="test")
    first, second = plan.games
    record = pool_data.play_record(plan.ruleset, first.seed)
    game_finish(game_id=first.game_id, record=record)
    game_abort(game_id=second.game_id, reason="time limit")

    assert league_progress(league) == {"done": 2, "total": 6, "aborted": 1, "faults": 0}
    kept = totals(league)
    tallies_rebuild(league_ids=[league.id])
    assert totals(league) == kept
    assert Game.objects.filter(league=league, status=Game.Status.ABORTED).count() == 1


def test_standings_and_progress_do_not_read_the_games():
    pool_data.pool_fill(games=1, bots=4, bots_per_league=4, fit_every=0, processes=0)
    league = League.objects.get(kind=League.Kind.LEAGUE)
    with CaptureQueriesContext(connection) as queries:
        league_standings(league)
        league_crosstable(league)
        league_progress(league)
    assert not [q["sql"] for q in queries if '"tournaments_game"' in q["sql"]]
