"""What the live tests play with: the worker's publisher on an event loop thread of its own, a
game in play, and legal plays for it."""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Iterator

from games.engine import Game as EngineGame
from games.engine import Ruleset
from tests.browser.data import stored_game
from tournaments.live_feed import LiveFeeds
from tournaments.models import Game, League

CLASSIC = {"name": "classic", "version": 1}


class Feeds:
    """The worker's publisher on an event loop thread of its own, as in a games worker."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.feeds = LiveFeeds(self.loop)

    def stop(self) -> None:
        async def cancel_the_rest() -> None:
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        asyncio.run_coroutine_threadsafe(cancel_the_rest(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


def pending_game(owner, seed: int = 5, names: tuple[str, str] = ("keeper", "giver")) -> Game:
    """A game in play (pending, its league running) between two new bots named ``names``."""
    game = stored_game(owner, ruleset=CLASSIC, seed=seed, names=names)
    Game.objects.filter(pk=game.pk).update(status=Game.Status.PENDING, reason="")
    League.objects.filter(pk=game.league_id).update(status=League.Status.RUNNING)
    game.refresh_from_db()
    return game


def legal_moves(seed: int, count: int) -> Iterator[tuple[int, str]]:
    """``count`` legal plays of a game of ``seed``, chosen at random: (seat, move)."""
    game = EngineGame.new(Ruleset.from_dict(CLASSIC), seed)
    choices = random.Random(seed)
    for _ in range(count):
        seat = game.current_seat
        move = choices.choice(game.view(seat).legal_moves)
        game.apply(move)
        yield seat, move.to_str()
