"""A stall of the caller's own process across a call's deadline is never the bot's timeout.

The stall is made on purpose: a callback on the caller's event loop sleeps (as a long garbage
collection or a starved core would hold it) while a real loopback bot, in its own thread, has
already answered. The bot's reply is in the socket before the deadline; the loop wakes after it.
"""

from __future__ import annotations

import asyncio
import time

import orjson
import pytest

from games.engine import Ruleset
from games.faults import FaultKind
from tests.bots.calls import sample_request
from tests.fakebots.simple import SimpleBot
from tournaments.bot_calls.caller import BotClient, Caller
from tournaments.bot_calls.deadlines import GRACE_S, LATE_S, MAX_GRACES, CallDeadline
from tournaments.bot_calls.runner import BotEndpoint, play_game

# Both event loops the caller runs on: asyncio's and the games worker's uvloop.
pytestmark = pytest.mark.usefixtures("each_event_loop")

TIMEOUT_MS = 400
STALL_S = 0.7  # from just after the bot received the request to well past the deadline
# The bot thinks a little, so it answers while the caller's loop is stalled rather than before.
THINK_S = 0.05


def stall_when_seen(bot: SimpleBot, requests: int, stall_s: float = STALL_S) -> None:
    """Hold the running loop in `stall_s` seconds of blocking work as soon as `bot` has received
    `requests` requests: its reply comes while the loop is not looking. Until then the check
    runs once per loop turn, without blocking."""
    loop = asyncio.get_running_loop()

    def check() -> None:
        if len(bot.seen) >= requests:
            time.sleep(stall_s)
        else:
            loop.call_soon(check)

    loop.call_soon(check)


def bot_url(servers, bot: SimpleBot) -> str:
    return f"http://127.0.0.1:{servers.start_app(bot.app())}/"


def move_during_a_stall(servers, bot: SimpleBot):
    url = bot_url(servers, bot)

    async def main():
        client = BotClient(url, None, allow_private=True)
        try:
            await client.move(sample_request(), TIMEOUT_MS)  # a warm connection, as in a game
            stall_when_seen(bot, 2)
            return await client.move(sample_request(), TIMEOUT_MS)
        finally:
            await client.aclose()

    return asyncio.run(main())


def test_a_reply_that_came_while_the_loop_stalled_past_the_deadline_is_taken(servers):
    reply = move_during_a_stall(servers, SimpleBot(mode="slow", delay=THINK_S))

    assert reply.fault is None and reply.move is not None
    # The measured latency holds our stall: it is what the call took, not what the bot did.
    assert reply.latency_ms >= STALL_S * 1000


def test_the_same_stall_under_a_plain_asyncio_timeout_loses_the_reply(servers):
    """Why `CallDeadline` exists: the stall above really does cost a stock deadline the reply."""
    bot = SimpleBot(mode="slow", delay=THINK_S)
    url = bot_url(servers, bot)
    body = orjson.dumps(sample_request())

    async def main():
        client = BotClient(url, None, allow_private=True)
        try:
            await client.fetch("POST", "move", body, TIMEOUT_MS)
            stall_when_seen(bot, 2)
            async with asyncio.timeout(TIMEOUT_MS / 1000):
                request = client._request("POST", "move", body)
                await client._connections().send(request, strict=True)
        finally:
            await client.aclose()

    with pytest.raises(TimeoutError):
        asyncio.run(main())


def test_a_bot_that_never_answers_still_times_out_after_a_stall(servers, each_event_loop):
    started = time.perf_counter()
    reply = move_during_a_stall(servers, SimpleBot(mode="slow", delay=5))
    took = time.perf_counter() - started

    assert reply.fault is not None and reply.fault.kind == FaultKind.TIMEOUT
    # One grace after the loop woke, not the bot's five seconds. libuv waits for its next timer
    # as if no time had passed during a stall in a callback, unless I/O wakes it first (a games
    # worker's always does): on an otherwise idle uvloop the deadline is looked at up to a whole
    # timeout after the stall, and only then judged late.
    late = TIMEOUT_MS / 1000 if each_event_loop == "uvloop" else 0
    assert took < STALL_S + late + GRACE_S + 0.5


def test_on_a_loop_that_is_on_time_the_deadline_is_exact(servers):
    url = bot_url(servers, SimpleBot(mode="slow", delay=5))

    async def main():
        client = BotClient(url, None, allow_private=True)
        try:
            return await client.move(sample_request(), 200)
        finally:
            await client.aclose()

    reply = asyncio.run(main())
    assert reply.fault is not None and reply.fault.kind == FaultKind.TIMEOUT
    assert 200 <= reply.latency_ms < 200 + GRACE_S * 1000


def test_a_loop_that_keeps_stalling_still_ends_the_call():
    """At most `MAX_GRACES` graces: a call cannot be kept open by a loop that never recovers."""

    async def main():
        loop = asyncio.get_running_loop()

        def keep_stalling() -> None:
            # Longer than the deadline and a grace: every look at it is late, on either loop.
            time.sleep(LATE_S * 4)
            loop.call_soon(keep_stalling)

        loop.call_soon(keep_stalling)
        deadline = CallDeadline(0.05)
        with pytest.raises(TimeoutError):
            async with deadline:
                await asyncio.sleep(10)
        return deadline.graces

    assert asyncio.run(main()) == MAX_GRACES


def test_a_whole_game_with_the_loop_stalled_mid_game_charges_no_fault(servers):
    """A game played through a stall of its loop is stored as its bots played it."""
    ruleset = Ruleset.from_preset("classic", {})
    bot = SimpleBot(mode="slow", delay=THINK_S)
    bots = [BotEndpoint(url=bot_url(servers, bot), name=name) for name in ("a", "b")]

    async def main():
        async with Caller(allow_private=True) as caller:
            for requests in (5, 20, 40):  # the start notices count: stalls on three moves
                stall_when_seen(bot, requests)
            return await play_game(
                ruleset=ruleset, seed=3, bots=bots, game_id="g",
                timeout_ms=TIMEOUT_MS, caller=caller,
            )  # fmt: skip

    record = asyncio.run(main())
    assert record.faults == []
    stalled = [m for r in record.meta for m in r if m["latency_ms"] >= STALL_S * 1000]
    assert len(stalled) == 3, "three calls held a stall"
    assert record.result is not None


def test_deadlines_sharing_a_loop_are_each_judged_at_their_own_time():
    """One loop's deadlines share one timer: a shorter one entered after a longer one, a call
    that ends early, and calls of every length are each cut off at their own deadline only."""
    limits_and_work = [(1.0, 0.05), (0.1, 5), (1.0, 5), (0.2, 0.25), (0.1, 0.01), (0.05, 5)]

    async def main():
        async def call(limit_s: float, work_s: float) -> tuple[str, float]:
            started = time.monotonic()
            try:
                async with CallDeadline(limit_s):
                    await asyncio.sleep(work_s)
            except TimeoutError:
                return "timeout", time.monotonic() - started
            return "done", time.monotonic() - started

        return await asyncio.gather(*(call(*pair) for pair in limits_and_work))

    results = asyncio.run(main())
    assert [kind for kind, _ in results] == [
        "done",
        "timeout",
        "timeout",
        "timeout",
        "done",
        "timeout",
    ]
    # The bot's work is a sleep on the loop's own timers, which on uvloop count whole
    # milliseconds and may end up to one early; the deadlines may not (deadlines.py, "Clocks").
    tick_s = 0.001
    for (kind, took), (limit_s, work_s) in zip(results, limits_and_work, strict=True):
        if kind == "timeout":
            # Never before its deadline; graces for a late loop aside, well before the longer
            # deadlines entered first.
            assert limit_s <= took < limit_s + GRACE_S * MAX_GRACES + 0.2
        else:
            assert work_s - tick_s <= took < limit_s


def test_no_deadline_cuts_a_call_before_its_time_even_after_a_long_loop_turn():
    """A loop whose turns take a few milliseconds (a busy worker) enters deadlines late in a
    turn; uvloop's timers count from the turn's start in whole milliseconds, so a timer may come
    early. Each call still runs its full time before it is cut (by ``time.monotonic``)."""
    limits = [0.01 + 0.003 * i for i in range(12)]

    async def main():
        async def call(limit_s: float, busy_s: float) -> float:
            time.sleep(busy_s)  # the rest of this loop turn: other games' work
            started = time.monotonic()
            try:
                async with CallDeadline(limit_s):
                    await asyncio.sleep(5)
            except TimeoutError:
                return time.monotonic() - started
            raise AssertionError("the call was never cut")

        calls = [call(limit, 0.002 * (i % 4)) for i, limit in enumerate(limits)]
        return await asyncio.gather(*calls)

    for limit_s, took in zip(limits, asyncio.run(main()), strict=True):
        assert limit_s <= took < limit_s + GRACE_S * MAX_GRACES + 0.2, (limit_s, took)
