"""The pool filler (benchmarks/pool_data.py): the bulk writer leaves the rows the services leave.

One league is filled both ways with the same seed and bots: in bulk (``leagues_write``, the
rows of ``benchmarks.pool_rows``) and through the real services (``league_play``: league_create,
league_start, match_begin, game_finish, match_finish). Every game, log, seat, match and rated set
must match; the running totals both leave must equal what ``ratings_recompute`` and the head to
head counted afresh find.
"""

import random

import pytest

from benchmarks import pool_data
from games.engine import replay_log
from tests.performance.data import head_to_head_counted
from tournaments.models import (
    Bot,
    Game,
    HeadToHead,
    League,
    LeaguePair,
    LeagueStanding,
    LeagueTally,
    Match,
    Rating,
    SetScore,
)
from tournaments.services.rating_fits import ratings_fit, ratings_recompute

pytestmark = pytest.mark.django_db


def bulk_league(bot_ids: list[int], label: str) -> League:
    """One league written in bulk, in this process."""
    tasks = pool_data.leagues_plan(
        leagues=1, bot_ids=bot_ids, bots_per_league=len(bot_ids), rng=random.Random(7), label=label
    )
    assert pool_data.leagues_write(tasks, processes=0, chunk_leagues=1, fit_every=0) == 12
    return League.objects.get(name=tasks[0].name)


def games_of(league: League) -> list[dict]:
    """Every game of the league as its rows say, in play order, ids left out."""
    games = []
    for game in league.games.select_related("log", "match").order_by("match__number", "number"):
        games.append(
            {
                "match": game.match.number,
                "number": game.number,
                **{
                    name: getattr(game, name)
                    for name in ("seed", "seating", "status", "winner", "totals", "reason")
                    + ("forfeit", "moves", "faults", "rated")
                },
                "log": game.log.document,
                "diagnostics": game.log.diagnostics,
                "faults_logged": game.log.faults,
                "seats": list(
                    game.seats.order_by("seat").values(
                        "seat",
                        "team",
                        "bot_id",
                        "moves",
                        "faults",
                        "latency_mean_ms",
                        "latency_p50_ms",
                        "latency_p95_ms",
                        "latency_max_ms",
                        "fault_kinds",
                        "no_show",
                    )
                ),  # fmt: skip
                "finished": game.finished_at is not None and game.started_at is not None,
            }
        )
    return games


def matches_of(league: League) -> list[dict]:
    """Every match with its bots, rated set and pair scores, ids of rows left out."""
    matches = []
    for match in league.matches.order_by("number"):
        rated_set = match.rated_set
        matches.append(
            {
                **{
                    name: getattr(match, name)
                    for name in ("number", "round", "seed", "status", "attempts", "versions")
                },
                "bots": sorted(match.bots.values_list("id", flat=True)),
                "set": (rated_set.pool, rated_set.games, rated_set.coefficient_id),
                "players": sorted(rated_set.players.values_list("id", flat=True)),
                "scores": list(
                    SetScore.objects.filter(rated_set=rated_set)
                    .order_by("player", "opponent")
                    .values_list("pool", "player", "opponent", "twelfths")
                ),
                "times": None not in (match.started_at, match.finished_at, match.heartbeat_at),
            }
        )
    return matches


def league_of(league: League) -> dict:
    fields = (
        "ruleset", "pool", "players", "games_per_pairing", "move_timeout_ms", "max_faults",
        "rated", "kind", "seed", "status", "games_planned", "creator_id",
    )  # fmt: skip
    return {
        **{name: getattr(league, name) for name in fields},
        "entries": list(league.entries.order_by("id").values_list("bot_id", flat=True)),
        "times": None not in (league.started_at, league.finished_at),
    }


def tallies_of(league: League) -> dict:
    """The league's progress, standings and crosstable as its tally rows keep them."""
    fields = ("games", "wins", "draws", "losses", "points_for", "points_against", "sets_won")
    return {
        "tally": LeagueTally.objects.filter(league=league).values(
            "games", "finished", "aborted", "faults"
        )[0],
        "standings": list(
            LeagueStanding.objects.filter(league=league).order_by("bot").values("bot", *fields)
        ),
        "pairs": list(
            LeaguePair.objects.filter(league=league).values_list(
                "bot", "opponent", "score", "games"
            )
        ),
    }


def test_a_league_written_in_bulk_has_the_rows_the_services_leave():
    bot_ids = pool_data._bots(4)
    bulk = bulk_league(bot_ids, "bulk")
    pool_data.league_play(bot_ids=league_of(bulk)["entries"], name="services", seed=bulk.seed)
    services = League.objects.get(name="services")

    assert league_of(bulk) == league_of(services)
    assert league_of(bulk)["status"] == "finished" and league_of(bulk)["games_planned"] == 12
    assert matches_of(bulk) == matches_of(services)
    assert tallies_of(bulk) == tallies_of(services)
    assert tallies_of(bulk)["tally"]["finished"] == 12 and len(tallies_of(bulk)["pairs"]) == 12
    bulk_games = games_of(bulk)
    assert [g["seed"] for g in bulk_games] == [g["seed"] for g in games_of(services)]
    assert bulk_games == games_of(services)
    assert len(bulk_games) == 12 and all(game["finished"] for game in bulk_games)
    for game in bulk_games:  # every log replays to the stored result
        result = replay_log(game["log"]).result
        assert (result.winner, list(result.totals), result.reason) == (
            game["winner"], game["totals"], game["reason"],
        )  # fmt: skip

    # The running totals of both: pair and version totals as their rated sets sum, ratings as a
    # fresh fit publishes them, head to head as the games count.
    ratings_fit(pool=pool_data.POOL)
    report = ratings_recompute()
    assert report.exact, report.mismatches
    assert report.sets == 12 and Rating.objects.filter(rank__isnull=False).count() == 4
    for bot in Bot.objects.filter(pk__in=bot_ids):
        stored = {
            row.opponent_id: [row.games, row.wins, row.draws, row.games - row.wins - row.draws]
            for row in HeadToHead.objects.filter(bot=bot)
        }
        assert stored == head_to_head_counted(bot)


def test_filling_stops_at_the_pools_size_counting_what_is_there():
    # Leagues of 3 bots: 3 pairings, 6 games.
    pool_data.league_play(bot_ids=pool_data._bots(3), name="there before")
    filled = pool_data.pool_fill(games=12, bots=3, bots_per_league=3, fit_every=0, processes=0)
    assert (filled.leagues, filled.games) == (1, 12)
    assert Game.objects.filter(status=Game.Status.FINISHED, rated=True).count() == 12
    assert Rating.objects.count() == 3  # fitted at the end

    again = pool_data.pool_fill(games=12, bots=3, bots_per_league=3, fit_every=0, processes=0)
    assert (again.leagues, again.games) == (0, 12)


def test_reused_logs_keep_each_game_its_logs_seed_and_result():
    bot_ids = pool_data._bots(4)
    tasks = pool_data.leagues_plan(
        leagues=2, bot_ids=bot_ids, bots_per_league=4, rng=random.Random(3), label="reused"
    )
    pool_data.leagues_write(tasks, processes=0, chunk_leagues=2, fit_every=0, distinct_logs=5)
    games = list(Game.objects.select_related("log"))
    assert len(games) == 24 and len({game.seed for game in games}) <= 5
    for game in games:
        result = replay_log(game.log.document).result
        assert game.log.document["seed"] == game.seed
        assert (result.winner, list(result.totals)) == (game.winner, game.totals)
    assert Match.objects.filter(status="finished").count() == 12


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_worker_processes_copy_leagues_that_the_services_would_agree_with():
    filled = pool_data.pool_fill(games=60, bots=5, bots_per_league=4, fit_every=2, processes=2)
    assert (filled.leagues, filled.games) == (5, 60)
    report = ratings_recompute()
    assert report.exact, report.mismatches
    assert report.sets == 30 and Rating.objects.count() == 5
    assert Game.objects.filter(status="finished", rated=True).count() == 60
    for game in Game.objects.select_related("log"):
        result = replay_log(game.log.document).result
        assert (result.winner, list(result.totals)) == (game.winner, game.totals)
    for bot in Bot.objects.all():
        stored = {
            row.opponent_id: [row.games, row.wins, row.draws, row.games - row.wins - row.draws]
            for row in HeadToHead.objects.filter(bot=bot)
        }
        assert stored == head_to_head_counted(bot)
