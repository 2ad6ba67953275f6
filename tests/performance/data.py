"""A database of finished, rated leagues, made fast: for query counts and the API load benchmark.

The rows are what a real run leaves behind (schedule from ``league_start``, real engine logs,
seat figures and head-to-head totals, rated sets through ``rated_set_record`` and a rating fit
per league), but no bot is called: each game takes its log from a small pool of games the engine
played with first-legal-move bots, so making 10,000 games costs seconds of engine time, not hours
of bot calls.
"""

from __future__ import annotations

import itertools
import random
from collections import defaultdict
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from games.engine import Game as EngineGame
from games.engine import Ruleset
from tournaments.models import Bot, Game, GameLog, League, Match, Seat
from tournaments.services.leagues import league_create, league_start
from tournaments.services.matches import head_to_head_add
from tournaments.services.ratings import rated_set_record, ratings_fit
from tournaments.services.tallies import tallies_rebuild

LOG_POOL = 64
BOTS_PER_LEAGUE = 10


@dataclass
class Filled:
    """Ids of what ``fill_database`` made, and how many games."""

    leagues: list[int]
    bots: list[int]
    games: int


def _logs(ruleset: Ruleset, count: int) -> list[dict]:
    rng = random.Random(2026)
    logs = []
    for seed in range(count):
        game = EngineGame.new(ruleset, seed=seed)
        while not game.is_over:
            game.apply(rng.choice(game.legal_moves()))
        logs.append(game.log())
    return logs


def fill_database(*, games: int, bots: int = 20, bots_per_league: int = BOTS_PER_LEAGUE) -> Filled:
    """At least ``games`` finished and rated 2-player games, in leagues of ``bots_per_league``."""
    # staff: only staff create rated leagues, of bots that passed the protocol check
    owner, _ = get_user_model().objects.get_or_create(
        username="load-owner", defaults={"is_staff": True}
    )
    start = Bot.objects.count()
    first_league = League.objects.count()  # league names are unique: number on from the last
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
    rng = random.Random(games)
    logs: list[dict] | None = None
    made, leagues = 0, []
    for number in itertools.count():
        if made >= games:
            break
        entered = rng.sample(bot_ids, min(bots_per_league, len(bot_ids)))
        with transaction.atomic():
            league = league_create(
                creator=owner, name=f"load {first_league + number}", bot_ids=entered, rated=True
            )
            league_start(league_id=league.id, enqueue=False)
            if logs is None:
                logs = _logs(Ruleset.from_dict(league.ruleset), LOG_POOL)
            made += _finish_league(league, logs, rng)
        leagues.append(league.id)
    return Filled(leagues=leagues, bots=bot_ids, games=made)


def _finish_league(league: League, logs: list[dict], rng: random.Random) -> int:
    now = timezone.now()
    games = list(league.games.select_related("league").order_by("id"))
    game_logs = []
    for game in games:
        log = rng.choice(logs)
        result = log["result"]
        plays = [play for round_log in log["rounds"] for play in round_log["plays"]]
        game.status = Game.Status.FINISHED
        game.seed = log.get("seed", game.seed)
        game.winner, game.totals = result["winner"], result["totals"]
        game.reason, game.forfeit = result["reason"], result["forfeit_seat"]
        game.moves, game.faults = len(plays), 0
        game.started_at = game.finished_at = now
        game_logs.append(
            GameLog(
                game=game,
                document=log,
                diagnostics=[
                    {
                        "round": r + 1,
                        "play": p + 1,
                        "move": play["card"],
                        "seat": play["seat"],
                        "latency_ms": round(rng.uniform(0.2, 3.0), 2),
                        "fault": None,
                        "detail": None,
                        "debug": None,
                        "debug_truncated": False,
                        "request": None,
                    }
                    for r, round_log in enumerate(log["rounds"])
                    for p, play in enumerate(round_log["plays"])
                ],
            )  # fmt: skip
        )
    Game.objects.bulk_update(
        games,
        ["status", "seed", "winner", "totals", "reason", "forfeit", "moves", "faults",
         "started_at", "finished_at"],
        batch_size=200,
    )  # fmt: skip
    GameLog.objects.bulk_create(game_logs, batch_size=200)
    seats = list(Seat.objects.filter(game__league=league))
    for seat in seats:
        seat.moves = 20
        seat.latency_mean_ms = round(rng.uniform(0.5, 2.0), 2)
        seat.latency_p50_ms = round(seat.latency_mean_ms * 0.9, 2)
        seat.latency_p95_ms = round(seat.latency_mean_ms * 2, 2)
        seat.latency_max_ms = round(seat.latency_mean_ms * 3, 2)
    figures = ["moves", "latency_mean_ms", "latency_p50_ms", "latency_p95_ms", "latency_max_ms"]
    for seat in seats:
        seat.finished_at = now
    Seat.objects.bulk_update(seats, [*figures, "finished_at"], batch_size=500)
    winners = {game.pk: game.winner for game in games}
    for game_id, table in itertools.groupby(
        sorted(seats, key=lambda s: s.game_id), key=lambda s: s.game_id
    ):
        head_to_head_add(winner=winners[game_id], seats=list(table))
    Match.objects.filter(league=league).update(status=Match.Status.FINISHED, finished_at=now)
    for match in Match.objects.filter(league=league).select_related("league"):
        rated_set_record(match=match)
    tallies_rebuild(league_ids=[league.id])  # standings, crosstable, progress
    ratings_fit(pool=league.pool)
    League.objects.filter(pk=league.pk).update(status=League.Status.FINISHED, finished_at=now)
    return len(games)


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
