"""Well-formed bots with a twist, as move choosers for the SDK's server
(``bots_sdk.serve_in_thread(Slow(0.01))``): they speak the protocol as the SDK does and play
legal moves, slowly, or crash on purpose, or count what they were sent."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from itertools import count
from typing import Any

from bots_sdk import BotState, Move
from bots_sdk.bot import Bot as SdkBot
from bots_sdk.examples import greedy
from bots_sdk.server import ServerHandle, serve_in_thread

Choose = Callable[[BotState], Move]


class Slow:
    """``choose`` (greedy by default) after a fixed think time, counting the moves it was asked
    for: the count tells a test that games are in flight right now, so a kill lands mid-game."""

    def __init__(self, delay_s: float, choose: Choose = greedy.choose) -> None:
        self.delay_s = delay_s
        self.choose = choose
        self.moves = 0
        self._lock = threading.Lock()

    def __call__(self, state: BotState) -> Move:
        time.sleep(self.delay_s)
        with self._lock:
            self.moves += 1
        return self.choose(state)


class Flaky:
    """``choose``, but every ``every``-th move it is asked for crashes (its server answers HTTP
    500): a fault the runner records against the bot."""

    def __init__(self, every: int, choose: Choose = greedy.choose) -> None:
        self.every = every
        self.choose = choose
        self._calls = count(1)

    def __call__(self, state: BotState) -> Move:
        if next(self._calls) % self.every == 0:
            raise RuntimeError("crashes on purpose")
        return self.choose(state)


@dataclass
class Switchable:
    """Greedy until `broken` is set, then fails every move (HTTP 500); serve ``bot.choose``."""

    url: str = ""
    broken: bool = False
    moves: list[str] = field(default_factory=list)

    def choose(self, state: BotState) -> Move:
        if self.broken:
            raise RuntimeError("broken on purpose")
        move = greedy.choose(state)
        self.moves.append(move.to_str())
        return move


class NoticedBot:
    """A `Slow` greedy that also counts the start and end notices it gets, per game id.

    An end notice means the game was played to its end against this bot: a game played to the
    end twice shows up as two. ``serve(port)`` serves it; serve it again on the same port to
    bring it back after ``stop()``.
    """

    def __init__(self, name: str, delay_s: float) -> None:
        self.name = name
        self.player = Slow(delay_s)
        self.starts: Counter[str] = Counter()
        self.ends: Counter[str] = Counter()
        self._lock = threading.Lock()
        self.bot = SdkBot(choose=self.player, name=name, on_start=self._start, on_end=self._end)

    @property
    def moves(self) -> int:
        return self.player.moves

    def _start(self, notice: Mapping[str, Any]) -> None:
        with self._lock:
            self.starts[str(notice["game"]["id"])] += 1

    def _end(self, notice: Mapping[str, Any]) -> None:
        with self._lock:
            self.ends[str(notice["game"]["id"])] += 1

    def serve(self, port: int = 0) -> ServerHandle:
        return serve_in_thread(self.bot, port=port)
