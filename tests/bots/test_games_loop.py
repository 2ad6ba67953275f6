"""The games worker's event loop thread (`tournaments.bot_calls.game_loop`): uvloop's loop, and
whole games played on it against a real loopback bot, slow calls cut at their deadline."""

from __future__ import annotations

import asyncio

import uvloop

from games.engine import Ruleset
from games.faults import FaultKind
from tests.fakebots.simple import SimpleBot
from tournaments.bot_calls.caller import Caller
from tournaments.bot_calls.game_loop import GameLoop
from tournaments.bot_calls.runner import BotEndpoint, play_game


def games_loop() -> GameLoop[str]:
    return GameLoop(make_caller=lambda: Caller(allow_private=True), make_feeds=lambda loop: "none")


def test_games_are_played_on_uvloop_and_slow_calls_are_cut_at_their_deadline(servers):
    loop = games_loop()
    quick = f"http://127.0.0.1:{servers.start_app(SimpleBot().app())}/"
    slow = f"http://127.0.0.1:{servers.start_app(SimpleBot(mode='slow', delay=5).app())}/"

    def game(urls: list[str], seed: int):
        async def play(caller: Caller, feeds: str):
            assert isinstance(asyncio.get_running_loop(), uvloop.Loop)
            return await play_game(
                ruleset=Ruleset.from_preset("classic"), seed=seed,
                bots=[BotEndpoint(url, name=f"s{i}") for i, url in enumerate(urls)],
                game_id=seed, timeout_ms=150, caller=caller, max_faults=2,
            )  # fmt: skip

        return loop.submit(play)

    played, forfeited = game([quick, quick], 1), game([quick, slow], 2)
    record = played.result(timeout=60)
    assert record.faults == [] and record.result is not None
    record = forfeited.result(timeout=60)
    assert [fault["kind"] for fault in record.faults] == [FaultKind.TIMEOUT.value] * 3
    assert record.result["forfeit_seat"] == 1
    # Each timed-out call ended at its deadline (a loop on time: no grace), not the bot's 5 s.
    latencies = [call.latency_ms for call in record.calls if call.fault is not None]
    assert all(150 <= latency < 150 + 200 for latency in latencies), latencies
