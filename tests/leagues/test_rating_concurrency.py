"""Many games finishing at once must not lose a rating update (run it on PostgreSQL too:
``DATABASE_URL=postgres://... pytest tests/leagues/test_rating_concurrency.py``)."""

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from games.engine import Game as EngineGame
from games.engine import Move, Ruleset
from tournaments import queueing
from tournaments.bot_calls.runner import GameRecord, PlayCall
from tournaments.models import Game, Rating, RatingChange
from tournaments.services import ratings as rating_services
from tournaments.services.leagues import league_create, league_start
from tournaments.services.matches import game_finish
from tournaments.services.ratings import ratings_recompute

pytestmark = pytest.mark.django_db(transaction=True)


def engine_record(ruleset: Ruleset, seed: int) -> GameRecord:
    """A finished game played by the engine alone (first legal move), as the runner reports it."""
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


def test_concurrent_finishes_keep_every_update(user, make_bot, monkeypatch):
    monkeypatch.setattr(queueing, "matches_enqueue_on_commit", lambda ids: None)
    compute = rating_services.game_deltas

    def slow_deltas(*args):
        time.sleep(0.005)  # widen the read-modify-write window, so a missing lock shows
        return compute(*args)

    monkeypatch.setattr(rating_services, "game_deltas", slow_deltas)
    bots = [make_bot("greedy") for _ in range(4)]
    league = league_create(
        creator=user, name="race", bot_ids=[b.id for b in bots], games_per_pairing=8
    )
    league_start(league_id=league.id, user=user)
    ruleset = Ruleset.from_dict(league.ruleset)
    games = list(Game.objects.filter(league=league).values_list("id", "seed"))
    records = {game_id: engine_record(ruleset, seed) for game_id, seed in games}

    def finish(game_id: int) -> bool:
        try:
            return game_finish(game_id=game_id, record=records[game_id])
        finally:
            connection.close()

    with ThreadPoolExecutor(8) as pool:
        stored = list(pool.map(finish, [game_id for game_id, _ in games] * 2))

    assert stored.count(True) == len(games) == 48  # the second finish of each game is refused
    assert RatingChange.objects.count() == 2 * len(games)
    assert sorted(Rating.objects.values_list("games", flat=True)) == [24, 24, 24, 24]
    report = ratings_recompute()
    assert report.exact, report.mismatches
