"""Games of one pool finishing at the same moment on PostgreSQL: no rating update may be lost.

Several leagues of the same pool share their bots, as a ladder league and users' leagues do.
Threads store their games through ``game_finish`` (the very transaction a worker runs), all
released together by a barrier and taking games from the leagues in turn, so games of the same
bots commit at the same moment. The Elo arithmetic is slowed down on purpose so every
transaction holds its ratings for a while: without the row lock, two games of the same bot would
both read the old rating and the second write would erase the first. The control run removes the
lock and must see exactly that, which proves the check can fail.
"""

import threading
import time

import pytest
from django.db import connection
from django.db.models import Count
from django.db.models.query import QuerySet

from games.engine import Game as EngineGame
from games.engine import Move, Ruleset
from tournaments.bot_calls.runner import GameRecord, PlayCall
from tournaments.models import Game, Rating, RatingChange
from tournaments.services import ratings as rating_services
from tournaments.services.leagues import league_create, league_start
from tournaments.services.matches import game_finish
from tournaments.services.ratings import ratings_recompute

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

THREADS = 8
ELO_DELAY_S = 0.05


def played_record(ruleset: Ruleset, seed: int) -> GameRecord:
    """A real finished game from the engine, each seat trailing or taking its first legal move."""
    game = EngineGame.new(ruleset, seed=seed)
    while not game.is_over:
        game.apply(game.legal_moves()[0])
    log = game.log()
    calls = [
        PlayCall(play["seat"], number, index, move_of(play), latency_ms=1.0)
        for number, round_log in enumerate(log["rounds"], 1)
        for index, play in enumerate(round_log["plays"], 1)
    ]
    return GameRecord(log=log, calls=calls)


def move_of(play: dict) -> Move:
    return Move.from_wire({"card": play["card"], "capture": play["capture"]})


LEAGUES = 4


def scheduled_games(user, make_bot) -> tuple[list[Game], Ruleset]:
    """The games of LEAGUES leagues among the same three bots, interleaved league by league."""
    bot_ids = [make_bot("greedy").id for _ in range(3)]
    per_league = []
    for number in range(LEAGUES):
        league = league_create(creator=user, name=f"race {number}", bot_ids=bot_ids)
        league_start(league_id=league.id, user=user, enqueue=False)
        per_league.append(list(Game.objects.filter(league=league).order_by("id")))
    interleaved = [game for batch in zip(*per_league, strict=True) for game in batch]
    return interleaved, Ruleset.from_dict(league.ruleset)


def finish_all_at_once(games: list[Game], ruleset: Ruleset) -> list[BaseException]:
    records = {game.id: played_record(ruleset, game.seed) for game in games}
    barrier = threading.Barrier(THREADS)
    errors: list[BaseException] = []
    queue = list(games)
    queue_lock = threading.Lock()

    def worker() -> None:
        try:
            barrier.wait(timeout=30)
            while True:
                with queue_lock:
                    if not queue:
                        return
                    game = queue.pop(0)
                assert game_finish(game_id=game.id, record=records[game.id])
        except BaseException as error:  # reported to the test thread below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return errors


@pytest.fixture
def slow_elo(monkeypatch):
    """Hold each game's rating rows for ELO_DELAY_S between reading and writing them."""
    real = rating_services.game_deltas

    def slow(*args, **kwargs):
        time.sleep(ELO_DELAY_S)
        return real(*args, **kwargs)

    monkeypatch.setattr(rating_services, "game_deltas", slow)


def test_concurrent_commits_equal_the_sequential_recomputation(user, make_bot, slow_elo):
    games, ruleset = scheduled_games(user, make_bot)

    errors = finish_all_at_once(games, ruleset)

    assert errors == []
    assert Game.objects.filter(status="finished", rated=True).count() == len(games) == 6 * LEAGUES
    per_game = RatingChange.objects.values("game").annotate(n=Count("id"))
    assert {row["n"] for row in per_game} == {2} and len(per_game) == len(games)
    assert sum(Rating.objects.values_list("games", flat=True)) == 2 * len(games)
    report = ratings_recompute()
    assert report.exact, report.mismatches


def test_the_check_catches_a_lost_update_when_the_lock_is_removed(
    user, make_bot, slow_elo, monkeypatch
):
    real_select_for_update = QuerySet.select_for_update

    def no_lock_on_ratings(self, *args, **kwargs):
        if self.model is Rating:
            return self
        return real_select_for_update(self, *args, **kwargs)

    monkeypatch.setattr(QuerySet, "select_for_update", no_lock_on_ratings)
    games, ruleset = scheduled_games(user, make_bot)

    errors = finish_all_at_once(games, ruleset)

    assert errors == []
    assert not ratings_recompute().exact, "a lost update went unnoticed"
