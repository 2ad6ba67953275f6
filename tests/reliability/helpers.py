"""What the reliability tests share: waiting, slow counting bots, and the league invariants."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from django.db.models import Count

from bots_sdk.examples import greedy
from tournaments.models import Game, League, RatedSet, SetScore
from tournaments.selectors import league_progress
from tournaments.services.ratings import ratings_recompute


def wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def league_status(league_id: int) -> str:
    return League.objects.values_list("status", flat=True).get(pk=league_id)


class SlowGreedy:
    """Greedy play after a fixed think time, counting the moves it was asked for.

    The count tells a test that games are in flight right now, so a kill lands mid-game.
    """

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s
        self.moves = 0
        self._lock = threading.Lock()

    def __call__(self, state):
        time.sleep(self.delay_s)
        with self._lock:
            self.moves += 1
        return greedy.choose(state)


def assert_played_and_rated_exactly_once(league: League, players_per_game: int = 2) -> None:
    """Every scheduled game finished, none aborted, each rated once: every match is one rated
    set with one score per pair of its bots; once the workers' last fit is done, the published
    ratings are exactly a fresh fit's."""
    league.refresh_from_db()
    total = league.games.count()
    assert league.status == League.Status.FINISHED
    assert league_progress(league)["done"] == total
    assert league.games.filter(status=Game.Status.FINISHED, rated=True).count() == total
    matches = league.matches.count()
    assert RatedSet.objects.filter(match__league=league).count() == matches
    per_set = (
        SetScore.objects.filter(rated_set__match__league=league)
        .values("rated_set")
        .annotate(n=Count("id"))
    )
    pairs = players_per_game * (players_per_game - 1) // 2
    assert len(per_set) == matches and {row["n"] for row in per_set} == {pairs}
    wait_for(lambda: ratings_recompute().exact, 30, "the last rating fit")
