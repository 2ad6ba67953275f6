"""Move calls through the arena's caller, for the tests of the caller and of what it sends: a sample
request and a client making calls."""

from __future__ import annotations

import asyncio
import time

from games.engine import Game, Ruleset
from games.wire import move_request
from tournaments.bot_calls.caller import BotClient

DEADLINE_MS = 300


def sample_request() -> dict:
    game = Game.new(Ruleset.from_preset("classic", {}), seed=5)
    return move_request(
        game.view(game.current_seat),
        game_id=1,
        timeout_ms=300,
        seat_names=["a", "b"],
        latency_ms=None,
        time_bank_ms=300,
    )


def call(
    url: str,
    *,
    timeout_ms: int = DEADLINE_MS,
    secret: str | None = None,
    allow_private: bool = True,
    resolve=None,
    times: int = 1,
):
    """Make `times` move calls with one client; the replies and the slowest call's seconds."""

    async def main():
        client = BotClient(url, secret, allow_private=allow_private, resolve=resolve)
        replies, slowest = [], 0.0
        try:
            for _ in range(times):
                started = time.perf_counter()
                replies.append(await client.move(sample_request(), timeout_ms))
                slowest = max(slowest, time.perf_counter() - started)
        finally:
            await client.aclose()
        return replies, slowest

    return asyncio.run(main())
