"""Fill a rating pool with finished games through the real services, for the read benchmarks.

    .venv/bin/python -m benchmarks.pool_data --games 100000     # DATABASE_URL decides where

Every row is written by the services a real league goes through: ``league_create`` and
``league_start`` schedule the league, ``match_begin`` claims each match, ``game_finish`` stores
each game (result, log, seats and their figures, no-shows), ``match_finish`` records the rated
set, ``league_finish_if_done`` closes the league, and ``ratings_fit`` publishes the pool's
ratings. What is skipped is HTTP: each game is played by the engine in this process from its
scheduled seed, a seeded random legal move per play, and each play's latency is drawn at random
(0.2-3 ms), so a game's log is a real ``escoba-log/1`` document of that seed but no bot was
called. The pool is fitted every ``--fit-every`` leagues (fits are coalesced in production too)
and once at the end.

Leagues have ``--bots-per-league`` bots (default 10: 45 pairings, 90 games) drawn from
``--bots`` bots (default 40), all in ``classic/2p``.
"""

from __future__ import annotations

import argparse
import random
import time
from dataclasses import dataclass

from games.engine import Game as EngineGame
from games.engine import Ruleset

LEAGUE_OWNER = "pool-data-owner"
BOTS_OWNER = "pool-data-bots"


@dataclass
class PoolFilled:
    leagues: int
    games: int
    seconds: float


def play_record(ruleset: Ruleset, seed: int, rng: random.Random):
    """A game of ``seed`` played by the engine in-process, as the runner would record it."""
    from tournaments.bot_calls.runner import GameRecord, PlayCall

    game = EngineGame.new(ruleset, seed=seed)
    calls = []
    round_number, play = 0, 0
    while not game.is_over:
        if game.round != round_number:
            round_number, play = game.round, 0
        play += 1
        seat = game.current_seat
        move = rng.choice(game.legal_moves())
        game.apply(move)
        calls.append(PlayCall(seat, round_number, play, move, round(rng.uniform(0.2, 3.0), 2)))
    return GameRecord(log=game.log(), calls=calls)


def _bots(count: int) -> list[int]:
    """``count`` healthy bots in rated play, made once and reused by later runs."""
    from django.contrib.auth import get_user_model

    from tournaments.models import Bot

    get_user_model().objects.get_or_create(username=LEAGUE_OWNER, defaults={"is_staff": True})
    # The bots belong to an inactive account, like the house's example bots: owned by nobody
    # who could farm with them, so a rated league may hold them all.
    owner, _ = get_user_model().objects.get_or_create(
        username=BOTS_OWNER, defaults={"is_active": False}
    )
    have = list(Bot.objects.filter(owner=owner).order_by("id").values_list("id", flat=True))
    if len(have) < count:
        made = Bot.objects.bulk_create(
            Bot(
                owner=owner,
                name=f"pool-bot-{n}",
                url=f"http://127.0.0.1:9/bot{n}",
                secret="whsec_" + "P" * 32,
                health=Bot.Health.HEALTHY,
            )
            for n in range(len(have), count)
        )
        have += [bot.id for bot in made]
    return have[:count]


def league_play(*, bot_ids: list[int], name: str, rng: random.Random) -> int:
    """One rated league played to its end through the services; returns its games."""
    from django.contrib.auth import get_user_model

    from tournaments.services.game_results import game_finish
    from tournaments.services.leagues import league_create, league_finish_if_done, league_start
    from tournaments.services.matches import match_begin, match_finish

    owner = get_user_model().objects.get(username=LEAGUE_OWNER)
    league = league_create(creator=owner, name=name, bot_ids=bot_ids, rated=True)
    league_start(league_id=league.id, enqueue=False)
    games = 0
    for match_id in league.matches.order_by("number").values_list("id", flat=True):
        plan = match_begin(match_id=match_id, worker="pool-data", claim=f"pool-data-{match_id}")
        assert plan is not None
        for game in plan.games:
            record = play_record(plan.ruleset, game.seed, rng)
            games += game_finish(game_id=game.game_id, record=record)
        match_finish(match_id=match_id)
    league_finish_if_done(league_id=league.id)
    return games


def pool_fill(
    *,
    games: int,
    bots: int = 40,
    bots_per_league: int = 10,
    fit_every: int = 100,
    seed: int = 1,
    seconds: float | None = None,
) -> PoolFilled:
    """Play rated leagues until the pool ``classic/2p`` has at least ``games`` finished games,
    or until ``seconds`` have passed (several processes may fill one database at once, each
    with its own ``seed``; give them a ``fit_every`` of 0 and fit once at the end)."""
    from django.db import connection

    from tournaments.models import Game
    from tournaments.services.ratings import ratings_fit

    started = time.perf_counter()
    if connection.vendor == "postgresql":
        # Durability of each commit is not what is measured here: waiting for the disk after
        # every game would make the filling hours long. Everything else is as in production.
        with connection.cursor() as cursor:
            cursor.execute("SET synchronous_commit TO off")
    pool = "classic/2p"
    finished = Game.objects.filter(league__pool=pool, status=Game.Status.FINISHED)
    have = finished.count()
    bot_ids = _bots(bots)
    rng = random.Random(seed + have)
    leagues = played = 0
    while have < games and (seconds is None or time.perf_counter() - started < seconds):
        entered = rng.sample(bot_ids, bots_per_league)
        # Names are unique: the seed keeps those of processes filling at once apart.
        played += league_play(bot_ids=entered, name=f"pool {seed}-{have}-{leagues}", rng=rng)
        leagues += 1
        # Counted again, not added up: other processes may be filling the same pool, and all of
        # them stop once the pool has ``games``.
        have = finished.count()
        if fit_every and leagues % fit_every == 0:
            ratings_fit(pool=pool)
        if leagues % 10 == 0:
            rate = played / (time.perf_counter() - started)
            print(f"{have} games in the pool, {played} by this process ({rate:.0f}/s)", flush=True)
    if leagues and fit_every:
        ratings_fit(pool=pool)
    return PoolFilled(leagues=leagues, games=have, seconds=time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--bots", type=int, default=40)
    parser.add_argument("--bots-per-league", type=int, default=10)
    parser.add_argument(
        "--fit-every", type=int, default=100, help="Fit the pool every N leagues (0: never)."
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--minutes", type=float, help="Stop after a league once this has passed.")
    args = parser.parse_args()
    import django

    django.setup()
    filled = pool_fill(
        games=args.games,
        bots=args.bots,
        bots_per_league=args.bots_per_league,
        fit_every=args.fit_every,
        seed=args.seed,
        seconds=args.minutes * 60 if args.minutes else None,
    )
    print(f"{filled.games} games in the pool; {filled.leagues} leagues in {filled.seconds:.0f} s")


if __name__ == "__main__":
    main()
