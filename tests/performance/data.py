"""A database of finished, rated leagues, made fast: for query counts and the read shapes.

The leagues are written by the pool filler's bulk writer (``benchmarks.pool_data.leagues_write``:
schedules as ``league_start`` writes them, each game played by the engine from its seed, the rows
and running totals the services leave, a rating fit per league), among bots made here, each with
its own owner.

Rows costly to make and read by several tests of a module are made once per module:
``rows_for_a_module`` keeps them in a transaction open for the module's tests (every test of the
module reads them), ``rows_made`` keeps a copy that ``rows_restore`` writes back in each test
that asks (the others find none).
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

from django.contrib.auth import get_user_model

from benchmarks.pool_data import leagues_plan, leagues_write
from tournaments.models import Bot, Game, League, Match, Seat

BOTS_PER_LEAGUE = 10
T = TypeVar("T")


@contextmanager
def rows_for_a_module(django_db_blocker, make: Callable[[], T]) -> Iterator[T]:
    """What ``make()`` writes stays for the tests of one module, rolled back after the last.

    For a module fixture (asking for ``django_db_setup``) whose rows are costly to make and
    which every test of the module reads: ``make`` writes inside a transaction that stays open
    while the module's tests run. Each ``django_db`` test (not a transactional one: it would
    empty the tables) runs in a savepoint of it, rolled back after the test, so no test sees
    another's writes; the rows themselves are rolled back after the module, so no other module
    sees them. On-commit callbacks of ``make`` run when it returns, as
    ``django_capture_on_commit_callbacks(execute=True)`` runs them in a test.
    """
    from django.db import transaction
    from django.test import TestCase

    with django_db_blocker.unblock(), transaction.atomic():
        with TestCase.captureOnCommitCallbacks(execute=True):
            made = make()
        yield made
        transaction.set_rollback(True)


def rows_made(django_db_blocker, make: Callable[[], T]) -> tuple[T, list[dict]]:
    """What ``make()`` returns, and the rows it added (Django's "python" serialization), made
    in a transaction that is rolled back: for a module fixture (asking for ``django_db_setup``)
    whose rows are costly to make, restored by ``rows_restore`` in each test that asks for them,
    so a test that does not ask finds none, and no test sees another's writes. On-commit
    callbacks of ``make`` run when it returns, as ``django_capture_on_commit_callbacks(execute=
    True)`` runs them in a test."""
    from django.apps import apps
    from django.core import serializers
    from django.db import transaction
    from django.test import TestCase

    models = [model for model in apps.get_models() if model._meta.managed]
    with django_db_blocker.unblock(), transaction.atomic():
        before = {model: list(model._base_manager.values_list("pk", flat=True)) for model in models}
        with TestCase.captureOnCommitCallbacks(execute=True):
            made = make()
        rows = []
        for model in models:
            added = model._base_manager.exclude(pk__in=before[model]).order_by("pk")
            rows.extend(serializers.serialize("python", added))
        transaction.set_rollback(True)
    return made, rows


def rows_restore(rows: list[dict]) -> None:
    """Write back the rows ``rows_made`` kept, with their ids, as they were (raw saves: no
    model ``save()`` and no signals run, as when Django loads a fixture)."""
    from django.core import serializers

    for row in serializers.deserialize("python", rows):
        row.save()


@dataclass
class Filled:
    """Ids of what ``fill_database`` made, and how many games."""

    leagues: list[int]
    bots: list[int]
    games: int


def fill_database(*, games: int, bots: int = 20, bots_per_league: int = BOTS_PER_LEAGUE) -> Filled:
    """At least ``games`` finished and rated 2-player games, in leagues of ``bots_per_league``."""
    start = Bot.objects.count()
    # each bot its own owner: two bots of one owner never meet in rated play
    owners = get_user_model().objects.bulk_create(
        get_user_model()(username=f"load-owner-{start + n}") for n in range(bots)
    )
    new_bots = Bot.objects.bulk_create(
        Bot(
            owner=owners[n],
            name=f"load-bot-{start + n}",
            url=f"http://127.0.0.1:9/bot{start + n}",
            secret="whsec_" + "B" * 32,
            health=Bot.Health.HEALTHY,
        )
        for n in range(bots)
    )
    bot_ids = [bot.id for bot in new_bots]
    per_league = min(bots_per_league, bots)
    tasks = leagues_plan(
        leagues=math.ceil(games / (per_league * (per_league - 1))),
        bot_ids=bot_ids,
        bots_per_league=per_league,
        rng=random.Random(games),
        label=f"load {League.objects.count()}",  # league names are unique
    )
    made = leagues_write(tasks, processes=0, chunk_leagues=1, fit_every=1)
    leagues = list(
        League.objects.filter(name__in=[t.name for t in tasks]).values_list("id", flat=True)
    )
    return Filled(leagues=sorted(leagues), bots=bot_ids, games=made)


def head_to_head_counted(bot: Bot) -> dict[int, list[int]]:
    """The bot's head to head counted afresh from its finished games, game by game: opponent id
    -> [games, wins, draws, losses]. What ``HeadToHead``'s running totals must equal."""
    mine = {seat.game_id: seat.team for seat in Seat.objects.filter(bot=bot)}
    counted: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for game in Game.objects.filter(pk__in=mine, status=Game.Status.FINISHED):
        opponents = {s.bot_id for s in game.seats.all() if s.team != mine[game.pk]}
        for opponent in opponents - {bot.id}:
            cell = counted[opponent]
            cell[0] += 1
            if game.winner is None:
                cell[2] += 1
            elif game.winner == mine[game.pk]:
                cell[1] += 1
            else:
                cell[3] += 1
    return dict(counted)


def set_in_play(*, rated: bool, bots: list[Bot], creator) -> list[int]:
    """A running set of two games dealt the same cards, the first finished (so sealed while the
    second is played, and in rated play naming no bot), the second pending."""
    league = League.objects.create(
        name=f"in play {rated}", creator=creator, pool="classic/2p", players=2, seed=7,
        ruleset={"name": "classic", "version": 1, "options": {}},
        status=League.Status.RUNNING, rated=rated,
    )  # fmt: skip
    league.bots.set(bots)
    match = Match.objects.create(league=league, number=1, round=1, seed=7, status="running")
    ids = []
    for number, status in ((1, Game.Status.FINISHED), (2, Game.Status.PENDING)):
        seating = [bot.pk for bot in (bots if number == 1 else bots[::-1])]
        game = Game.objects.create(
            league=league, match=match, number=number, seed=7, seating=seating, status=status,
            winner=0 if number == 1 else None, totals=[9, 4] if number == 1 else None,
            reason="score" if number == 1 else "",
        )  # fmt: skip
        for seat, bot_id in enumerate(seating):
            Seat.objects.create(game=game, seat=seat, team=seat, bot_id=bot_id)
        ids.append(game.pk)
    return ids
