"""The head_to_head migration gives each finished game's seats its time and counts every finished
game into the head-to-head totals, as ``game_finish`` does for a game stored after it."""

from importlib import import_module
from pathlib import Path

import pytest
from django.utils import timezone

from tests.leagues.conftest import migrate

# Found by name, so that renumbering the migration at merge needs no change here.
NAME = next(Path(__file__).parents[2].glob("tournaments/migrations/*_head_to_head.py")).stem
AFTER = [("tournaments", NAME)]
BEFORE = import_module(f"tournaments.migrations.{NAME}").Migration.dependencies


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("latest_schema_after")
def test_finished_games_fill_seat_times_and_head_to_head_totals():
    old = migrate(BEFORE)
    user = old.get_model("auth", "User").objects.create(username="migrator")
    Bot = old.get_model("tournaments", "Bot")
    a, b, c = (
        Bot.objects.create(owner=user, name=name, url="http://x", secret="s") for name in "abc"
    )
    league = old.get_model("tournaments", "League").objects.create(
        name="l", creator=user, ruleset={"name": "classic"}, pool="classic/3p", players=3, seed=7
    )
    match = old.get_model("tournaments", "Match").objects.create(
        league=league, number=1, round=1, seed=7
    )
    Game = old.get_model("tournaments", "Game")
    Seat = old.get_model("tournaments", "Seat")
    when = timezone.now()
    games = {}
    # (status, winner, seating): a game of three b wins, a drawn game of two, a game of two a
    # wins, and two that count for nothing (one still played, one aborted)
    plan = {
        "three": ("finished", 1, [a, b, c]),
        "drawn": ("finished", None, [a, b]),
        "won": ("finished", 0, [a, c]),
        "pending": ("pending", None, [a, b]),
        "aborted": ("aborted", None, [b, c]),
    }
    for number, (key, (status, winner, bots)) in enumerate(plan.items(), 1):
        finished_at = None if status == "pending" else when.replace(microsecond=number)
        games[key] = Game.objects.create(
            league=league, match=match, number=number, seed=number, status=status,
            winner=winner, seating=[bot.pk for bot in bots], finished_at=finished_at,
        )  # fmt: skip
        for seat, bot in enumerate(bots):
            Seat.objects.create(game=games[key], seat=seat, team=seat, bot=bot)

    new = migrate(AFTER)

    times = {
        (s.game_id, s.seat): s.finished_at
        for s in new.get_model("tournaments", "Seat").objects.all()
    }
    for key, game in games.items():
        expected = game.finished_at if key in ("three", "drawn", "won") else None
        assert {times[game.pk, seat] for seat in range(len(plan[key][2]))} == {expected}, key
    totals = {
        (row.bot_id, row.opponent_id): (row.games, row.wins, row.draws)
        for row in new.get_model("tournaments", "HeadToHead").objects.all()
    }
    assert totals == {
        (a.pk, b.pk): (2, 0, 1), (b.pk, a.pk): (2, 1, 1),
        (a.pk, c.pk): (2, 1, 0), (c.pk, a.pk): (2, 0, 0),
        (b.pk, c.pk): (1, 1, 0), (c.pk, b.pk): (1, 0, 0),
    }  # fmt: skip

    back = migrate(BEFORE)
    assert back.get_model("tournaments", "Seat").objects.count() == 11
