"""Many games and matches finishing at once must record each rated set once, never run two fits of
a pool at once, and leave the published ratings equal to a fresh fit. Marked ``postgres_too``:
``make test`` runs it again on PostgreSQL, whose row and advisory locks are what keeps the fits
apart there (SQLite serialises every write)."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from games.engine import Game as EngineGame
from games.engine import Move, Ruleset
from tournaments import queueing
from tournaments.bot_calls.runner import GameRecord, PlayCall
from tournaments.models import Game, Match, RatedSet, Rating, SetScore
from tournaments.services import rating_fits
from tournaments.services.game_results import game_finish
from tournaments.services.league_creation import league_create
from tournaments.services.league_schedules import league_start
from tournaments.services.matches import match_finish
from tournaments.services.rating_fits import ratings_recompute

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres_too]


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


def test_concurrent_finishes_record_each_set_once_and_fit_one_at_a_time(
    staff, make_rated_bot, monkeypatch
):
    monkeypatch.setattr(queueing, "matches_enqueue_on_commit", lambda ids: None)
    running, most = [0], [0]
    lock = threading.Lock()
    compute = rating_fits.pool_fit_compute

    def slow_compute(**kwargs):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        try:
            time.sleep(0.02)  # widen the window, so two fits at once would show
            return compute(**kwargs)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(rating_fits, "pool_fit_compute", slow_compute)
    bots = [make_rated_bot("greedy") for _ in range(4)]
    league = league_create(
        creator=staff, name="race", bot_ids=[b.id for b in bots], games_per_pairing=8, rated=True
    )
    league_start(league_id=league.id, user=staff)
    ruleset = Ruleset.from_dict(league.ruleset)
    games = list(Game.objects.filter(league=league).values_list("id", "seed"))
    records = {game_id: engine_record(ruleset, seed) for game_id, seed in games}
    Match.objects.filter(league=league).update(status=Match.Status.RUNNING)

    def finish(game_id: int) -> bool:
        try:
            return game_finish(game_id=game_id, record=records[game_id])
        finally:
            connection.close()

    def close(match_id: int) -> bool:
        try:
            return match_finish(match_id=match_id)
        finally:
            connection.close()

    with ThreadPoolExecutor(8) as pool:
        stored = list(pool.map(finish, [game_id for game_id, _ in games] * 2))
    match_ids = list(Match.objects.filter(league=league).values_list("id", flat=True))
    with ThreadPoolExecutor(8) as pool:
        closed = list(pool.map(close, match_ids * 2))

    assert stored.count(True) == len(games) == 48  # the second finish of each game is refused
    assert closed.count(True) == len(match_ids) == 24  # so is the second finish of a match
    assert RatedSet.objects.count() == 24 and SetScore.objects.count() == 24
    assert Game.objects.filter(rated=True).count() == 48
    assert most[0] == 1, "two fits of one pool ran at once"
    assert sorted(Rating.objects.values_list("sets", flat=True)) == [12, 12, 12, 12]
    report = ratings_recompute()
    assert report.exact, report.mismatches
