"""Sets of one pool finishing at once on PostgreSQL: each recorded once, fitted one at a time.

Several leagues of the same pool share their bots, as the ladder and staff leagues do. Threads
store the games through ``game_finish`` and then close the matches through ``match_finish`` (the
very transactions a worker runs, each match closed twice as a redelivered task would), all
released together by a barrier, so sets of the same bots are recorded at the same moment and
every one of them asks for a fit of the pool. The fit is slowed down on purpose: without the
pool's lock two fits would run at once, and one started before the last set was recorded could
publish after the fit that saw it. The control run removes the lock and must see two fits at
once, which proves the check can fail.
"""

import threading
import time

import pytest
from django.db import connection
from django.db.models import Count

from games.engine import Game as EngineGame
from games.engine import Move, Ruleset
from tests.performance.data import head_to_head_counted
from tournaments.bot_calls.runner import GameRecord, PlayCall
from tournaments.models import Bot, Game, Match, RatedSet, Rating, SetScore
from tournaments.selectors.pages import bot_head_to_head
from tournaments.services import rating_fits
from tournaments.services.game_results import game_finish
from tournaments.services.league_creation import league_create
from tournaments.services.league_schedules import league_start
from tournaments.services.matches import match_finish
from tournaments.services.rating_fits import ratings_recompute

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

THREADS = 8
FIT_DELAY_S = 0.05


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
        league = league_create(creator=user, name=f"race {number}", bot_ids=bot_ids, rated=True)
        league_start(league_id=league.id, user=user, enqueue=False)
        per_league.append(list(Game.objects.filter(league=league).order_by("id")))
    interleaved = [game for batch in zip(*per_league, strict=True) for game in batch]
    return interleaved, Ruleset.from_dict(league.ruleset)


def finish_all_at_once(games: list[Game], ruleset: Ruleset) -> list[BaseException]:
    """Store every game, then close every match twice, from THREADS threads at once."""
    records = {game.id: played_record(ruleset, game.seed) for game in games}
    match_ids = sorted({game.match_id for game in games})
    Match.objects.filter(id__in=match_ids).update(status=Match.Status.RUNNING)
    barrier = threading.Barrier(THREADS)
    errors: list[BaseException] = []
    queue = [("game", game.id) for game in games] + [("match", i) for i in match_ids * 2]
    queue_lock = threading.Lock()

    def worker() -> None:
        try:
            barrier.wait(timeout=30)
            while True:
                with queue_lock:
                    if not queue:
                        return
                    kind, item = queue.pop(0)
                if kind == "game":
                    assert game_finish(game_id=item, record=records[item])
                else:
                    match_finish(match_id=item)
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
def fits_at_once(monkeypatch) -> list[int]:
    """Slow every fit down by FIT_DELAY_S; the list's one item is the most fits seen at once."""
    real = rating_fits.pool_fit_compute
    running, most = [0], [0]
    lock = threading.Lock()

    def slow(**kwargs):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        try:
            time.sleep(FIT_DELAY_S)
            return real(**kwargs)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(rating_fits, "pool_fit_compute", slow)
    return most


def test_concurrent_sets_are_recorded_once_and_fitted_one_at_a_time(user, make_bot, fits_at_once):
    games, ruleset = scheduled_games(user, make_bot)

    errors = finish_all_at_once(games, ruleset)

    assert errors == []
    assert Game.objects.filter(status="finished", rated=True).count() == len(games) == 6 * LEAGUES
    per_set = SetScore.objects.values("rated_set").annotate(n=Count("id"))
    assert {row["n"] for row in per_set} == {1} and len(per_set) == 3 * LEAGUES
    assert RatedSet.objects.count() == 3 * LEAGUES
    assert sum(Rating.objects.values_list("sets", flat=True)) == 2 * 3 * LEAGUES
    assert fits_at_once == [1], "two fits of one pool ran at once"
    report = ratings_recompute()
    assert report.exact, report.mismatches
    # the head-to-head totals of the same bots, added to by every thread at once, are exact
    for bot in Bot.objects.filter(seats__game__in=games).distinct():
        got = {r["bot_id"]: [r["games"], r["wins"], r["draws"], r["losses"]]
               for r in bot_head_to_head(bot=bot)}  # fmt: skip
        assert got == head_to_head_counted(bot)
        assert sum(cell[0] for cell in got.values()) == 2 * 2 * LEAGUES


def test_the_check_catches_two_fits_at_once_when_the_lock_is_removed(
    user, make_bot, fits_at_once, monkeypatch
):
    keys = iter(range(10**6))  # a new lock for every fit: no fit ever waits for another
    monkeypatch.setattr(rating_fits, "_lock_key", lambda pool: f"unlocked:{next(keys)}")
    games, ruleset = scheduled_games(user, make_bot)

    errors = finish_all_at_once(games, ruleset)

    assert errors == []
    assert fits_at_once[0] > 1, "two fits at once went unnoticed"
