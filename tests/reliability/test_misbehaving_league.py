"""A league where a third of the bots misbehave: every game finishes, every fault is recorded
against the bot that made it, and games between healthy bots run at their own pace.

Nine bots, three of them bad:

- *chaos* answers each request with the next misbehaviour of the hostile table
  (tests/fakebots/hostile.py): silence, dripped headers and bodies, huge and gzip-bomb bodies,
  a redirect to a metadata address, bad JSON, wrong schema, a card that does not exist, HTTP 500,
  a dropped connection, and a well-formed move that is rarely legal (a trail of the 1 of oros);
- *dies* plays well, then its server goes away for good mid-league;
- *returns* plays well, goes away mid-league, and comes back on the same port.
"""

import asyncio
import itertools
import multiprocessing
import threading
import time

import pytest
from django.db.models import Sum

from bots_sdk.server import serve_in_thread
from tests.fakebots.hostile import BEHAVIOURS, HostileBots, read_request
from tests.fakebots.loops import ServerThread
from tests.fakebots.players import Slow
from tests.reliability.helpers import league_status, wait_for
from tournaments.models import Game, Seat
from tournaments.services.league_creation import league_create
from tournaments.services.league_schedules import league_start

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

MOVE_TIMEOUT_MS = 1000
AWAY_S = 1.5
# What the chaos bot's replies must show up as, at least once each, somewhere in the league.
EXPECTED_FAULTS = {
    "timeout", "too_large", "redirect", "bad_json", "bad_schema", "http_status", "connect",
    "illegal_move",
}  # fmt: skip


class ChaosBot(HostileBots):
    """The hostile server, but each request gets the next misbehaviour, whatever its path."""

    def __init__(self) -> None:
        super().__init__()
        self.behaviours = itertools.cycle(
            [name for name in BEHAVIOURS if name not in ("gzipped-good", "wrong-protocol")]
        )

    async def __call__(self, reader, writer) -> None:
        self.connections += 1
        try:
            while True:
                await read_request(reader)
                await BEHAVIOURS[next(self.behaviours)](writer)
                if writer.is_closing():
                    return
                await writer.drain()
        except (ConnectionError, OSError, EOFError, asyncio.CancelledError):
            pass  # the client hung up, or the server is shutting down
        finally:
            writer.close()


def _serve_chaos(ports) -> None:
    servers = ServerThread()
    ports.put(servers.start_raw(ChaosBot()))
    threading.Event().wait()


@pytest.fixture
def chaos_url():
    """The chaos bot in a process of its own: streaming its huge bodies must not take CPU from
    the healthy bots, which share this process (the league's worker is a process too)."""
    context = multiprocessing.get_context("fork")
    ports = context.Queue()
    process = context.Process(target=_serve_chaos, args=(ports,), daemon=True)
    process.start()
    try:
        yield f"http://127.0.0.1:{ports.get(timeout=10)}"
    finally:
        process.kill()
        process.join(5)


def test_league_with_a_third_of_the_bots_misbehaving(
    celery_worker_factory, user, make_bot, chaos_url
):
    dies, returns = Slow(0.0), Slow(0.0)
    dies_server = serve_in_thread(dies, name="dies")
    returns_server = serve_in_thread(returns, name="returns")
    port = returns_server.server.server_address[1]
    healthy = [make_bot(kind) for kind in ("greedy", "random", "expert", "random7", "greedy")]
    healthy.append(make_bot("random"))
    bad = {
        "chaos": make_bot("greedy", name="chaos"),
        "dies": make_bot("greedy", name="dies"),
        "returns": make_bot("greedy", name="returns"),
    }
    for name, url in (
        ("chaos", chaos_url),
        ("dies", dies_server.url),
        ("returns", returns_server.url),
    ):
        bad[name].url = url
        bad[name].save(update_fields=["url"])
    league = league_create(
        creator=user,
        name="hostile",
        bot_ids=[b.id for b in [*healthy, *bad.values()]],
        move_timeout_ms=MOVE_TIMEOUT_MS,
    )
    celery_worker_factory(pool="threads", concurrency=8)
    try:
        league_start(league_id=league.id, user=user)
        wait_for(lambda: dies.moves > 30 and returns.moves > 30, 60, "the bad bots to play a bit")
        dies_server.stop()
        returns_server.stop()
        time.sleep(AWAY_S)  # games go on meanwhile: both bots fault with "connect"
        returns_server = serve_in_thread(returns, name="returns", port=port)
        back_at, moves_at_return = time.time(), returns.moves
        wait_for(lambda: league_status(league.id) == "finished", 200, "the league to finish")
    finally:
        returns_server.stop()

    games = list(Game.objects.filter(league=league))
    assert len(games) == 72 and {game.status for game in games} == {"finished"}

    bad_ids = {bot.id for bot in bad.values()}
    healthy_ids = {bot.id for bot in healthy}
    seats = Seat.objects.filter(game__league=league)
    assert not seats.exclude(bot_id__in=bad_ids).filter(faults__gt=0).exists()
    faults_by_bot = dict(
        seats.values("bot_id").annotate(n=Sum("faults")).values_list("bot_id", "n")
    )
    assert all(faults_by_bot[bot.id] > 0 for bot in bad.values())
    kinds = set()
    for game in games:
        bad_seats = {seat for seat, bot_id in enumerate(game.seating) if bot_id in bad_ids}
        assert {fault["seat"] for fault in game.log.faults} <= bad_seats
        assert game.faults == len(game.log.faults)
        kinds |= {fault["kind"] for fault in game.log.faults}
    assert EXPECTED_FAULTS <= kinds, f"never seen: {EXPECTED_FAULTS - kinds}"

    # The chaos bot faults on every call, so it forfeits each of its 12 games against healthy bots.
    chaos_games = [
        g for g in games if bad["chaos"].id in g.seating and set(g.seating) & healthy_ids
    ]
    assert len(chaos_games) == 12 and all(
        g.forfeit == g.seating.index(bad["chaos"].id) for g in chaos_games
    )
    assert returns.moves > moves_at_return, "the returning bot was not called again"
    assert any(
        bad["returns"].id in g.seating and g.faults == 0 and g.finished_at.timestamp() > back_at
        for g in games
    ), "no clean game of the returning bot after it came back"
    dead_faults = {
        fault["kind"]
        for g in games
        if bad["dies"].id in g.seating
        for fault in g.log.faults
        if g.seating[fault["seat"]] == bad["dies"].id
    }
    assert dead_faults == {"connect"}

    # The healthy bots' calls took no longer than when the same bots play a league on their own
    # (a blocked event loop would push them towards the move timeout, or past it).
    control = league_create(
        creator=user, name="control", bot_ids=sorted(healthy_ids), move_timeout_ms=MOVE_TIMEOUT_MS
    )
    league_start(league_id=control.id, user=user)
    wait_for(lambda: league_status(control.id) == "finished", 120, "the control league")
    with_bad = latency_summary(games, healthy_ids)
    alone = latency_summary(Game.objects.filter(league=control), healthy_ids)
    print(f"healthy bots' calls, mean / p95 ms: with bad bots {with_bad}, alone {alone}")
    assert with_bad[0] < 2 * alone[0] + 5
    assert with_bad[1] < 3 * alone[1] + 20


def latency_summary(games, bot_ids: set[int]) -> tuple[float, float]:
    """Mean and 95th percentile, in ms, of the calls made to these bots in these games."""
    latencies = sorted(
        meta["latency_ms"]
        for game in games
        for round_log, round_meta in zip(game.log.document["rounds"], game.log.meta, strict=True)
        for play, meta in zip(round_log["plays"], round_meta, strict=True)
        if game.seating[play["seat"]] in bot_ids
    )
    return round(sum(latencies) / len(latencies), 2), round(
        latencies[int(0.95 * len(latencies))], 1
    )
