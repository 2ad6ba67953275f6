"""The read benchmarks' pool generator (benchmarks/pool_data.py): several processes fill one
pool at once, and each stops once the pool, not its own share, has the games asked for."""

import pytest

from benchmarks import pool_data
from tournaments.models import Game

pytestmark = pytest.mark.django_db


def test_filling_stops_at_the_pools_size_counting_what_others_added(monkeypatch):
    play = pool_data.league_play

    def with_a_neighbour(**kwargs):
        games = play(**kwargs)
        if not neighbour_played:  # another process finishes a league at the same time
            neighbour_played.append(
                play(bot_ids=kwargs["bot_ids"], name="neighbour", rng=kwargs["rng"])
            )
        return games

    neighbour_played: list[int] = []
    monkeypatch.setattr(pool_data, "league_play", with_a_neighbour)
    # Leagues of 3 bots: 3 pairings, 6 games.
    filled = pool_data.pool_fill(games=12, bots=3, bots_per_league=3, fit_every=0)
    assert (filled.leagues, filled.games) == (1, 12)
    assert Game.objects.filter(status=Game.Status.FINISHED).count() == 12

    again = pool_data.pool_fill(games=12, bots=3, bots_per_league=3, fit_every=0)
    assert (again.leagues, again.games) == (0, 12)
