"""The service's own stops and restarts are never a bot's fault.

Real ``celery worker`` processes, real bots on loopback (``NoticedBot``: they count the start and
end notices of every game). A worker stopped the warm way (SIGTERM, what ``make run``'s Ctrl-C
sends) hands back the games it is playing, even when the bots are stopped right behind it; a
worker killed outright has its matches played again at the bots' new addresses; bots that all
vanish at once in the middle of a game are not charged for it. In each case the league completes
with no fault, no forfeit and no rating charged for what the service did, and each game is
played to its end, and rated, once.

``service_fault``'s rules are also checked one by one on game records made by hand.
"""

import os
import signal

import pytest

from games.engine import Move
from games.faults import Fault, FaultKind
from tests.fakebots.players import NoticedBot
from tests.reliability.helpers import (
    assert_each_game_ended_once,
    assert_no_fault_charged,
    assert_played_and_rated_exactly_once,
    full_speed,
    league_status,
    moves_of,
    scheduled_games,
    vanish_all,
    wait_for,
)
from tournaments.bot_calls.game_loop import stopping
from tournaments.bot_calls.runner import BotEndpoint, GameRecord, PlayCall
from tournaments.models import Bot, Game, Match
from tournaments.selectors.leagues import league_progress
from tournaments.services.league_creation import league_create
from tournaments.services.league_schedules import league_start
from tournaments.services.matches import MAX_ATTEMPTS, GamePlan, MatchPlan, service_fault

THINK_S = 0.02


def noticed_league(user, make_bot, name: str, count: int = 4):
    """``count`` NoticedBots, served and registered, in an open rated league."""
    bots = [NoticedBot(f"{name}{n}", delay_s=THINK_S) for n in range(count)]
    servers = [bot.serve() for bot in bots]
    rows = []
    for bot, server in zip(bots, servers, strict=True):
        row = make_bot("greedy", name=bot.name)
        row.url = server.url
        row.save(update_fields=["url"])
        rows.append(row)
    league = league_create(creator=user, name=name, bot_ids=[row.id for row in rows], rated=True)
    return league, bots, servers, rows


def port_of(server) -> int:
    return server.server.server_address[1]


@pytest.mark.integration
@pytest.mark.timeout(300)
def test_warm_shutdown_hands_back_the_games_in_play_even_with_the_bots_stopped_behind_it(
    celery_worker_factory, user, make_bot
):
    league, bots, servers, _ = noticed_league(user, make_bot, "warm")
    ports = [port_of(server) for server in servers]
    worker = celery_worker_factory(pool="threads", concurrency=6)
    try:
        league_start(league_id=league.id, user=user)
        total = scheduled_games(league)
        wait_for(lambda: moves_of(bots) > 100, 60, "games in flight")
        assert league_progress(league)["done"] < total

        os.killpg(worker.process.pid, signal.SIGTERM)  # warm shutdown, as Ctrl-C in make run
        for server in servers:  # and the bots go at once: the worst case
            server.stop()
        assert worker.process.wait(60) == 0, worker.log_text()[-3000:]

        assert_no_fault_charged(league)
        unfinished = league.games.exclude(status=Game.Status.FINISHED)
        assert unfinished.exists(), "the shutdown cut no game short"
        assert not unfinished.filter(rated=True).exists()
        assert not league.matches.filter(status=Match.Status.RUNNING).exists()
        assert "released with" in worker.log_text()

        full_speed(bots)
        servers = [bot.serve(port) for bot, port in zip(bots, ports, strict=True)]
        celery_worker_factory(pool="threads", concurrency=6)
        wait_for(lambda: league_status(league.id) == "finished", 150, "the league to finish")
    finally:
        for server in servers:
            server.stop()

    assert_played_and_rated_exactly_once(league)
    assert_no_fault_charged(league)
    assert_each_game_ended_once(league, bots)


@pytest.mark.integration
@pytest.mark.postgres_too  # recovery re-sends matches a live worker's threads may hold: row locks
@pytest.mark.timeout(300)
def test_matches_recovered_after_a_worker_kill_are_played_at_the_bots_new_addresses(
    celery_worker_factory, user, make_bot
):
    league, bots, servers, rows = noticed_league(user, make_bot, "moved")
    worker = celery_worker_factory(pool="threads", concurrency=6)
    try:
        league_start(league_id=league.id, user=user)
        wait_for(lambda: moves_of(bots) > 100, 60, "games in flight")
        assert league_progress(league)["done"] < scheduled_games(league)

        worker.kill()  # SIGKILL: no shutdown at all
        for server in servers:
            server.stop()
        full_speed(bots)
        servers = [bot.serve() for bot in bots]  # new ports, as make run's next start
        for row, server in zip(rows, servers, strict=True):
            Bot.objects.filter(pk=row.pk).update(url=server.url)
        worker.start()
        wait_for(lambda: league_status(league.id) == "finished", 150, "the league to finish")
    finally:
        for server in servers:
            server.stop()

    assert_played_and_rated_exactly_once(league)
    assert_no_fault_charged(league)
    assert league.matches.filter(attempts__gt=1).exists(), "no match was cut off by the kill"


@pytest.mark.integration
@pytest.mark.timeout(300)
def test_bots_vanishing_all_at_once_mid_game_are_not_charged(celery_worker_factory, user, make_bot):
    """The network, or our side of it, more likely than four bots failing in the same second:
    the games are played again once the bots answer."""
    league, bots, servers, _ = noticed_league(user, make_bot, "vanish")
    ports = [port_of(server) for server in servers]
    celery_worker_factory(pool="threads", concurrency=6)
    try:
        league_start(league_id=league.id, user=user)
        wait_for(lambda: moves_of(bots) > 100, 60, "games in flight")
        assert league_progress(league)["done"] < scheduled_games(league)
        vanish_all(servers)
        wait_for(
            lambda: not league.matches.filter(status=Match.Status.RUNNING).exists(),
            60,
            "the games in play to be handed back",
        )
        full_speed(bots)
        servers = [bot.serve(port) for bot, port in zip(bots, ports, strict=True)]
        wait_for(lambda: league_status(league.id) == "finished", 150, "the league to finish")
    finally:
        for server in servers:
            server.stop()

    assert_played_and_rated_exactly_once(league)
    assert_no_fault_charged(league)


# -- the rules, one by one ---------------------------------------------------------------------

URLS = ["http://127.0.0.1:9101", "http://127.0.0.1:9102"]


def record(calls: list[tuple[int, str | None]], forfeit: tuple[int, str] | None) -> GameRecord:
    """A two-seat game made of ``calls`` (seat, fault kind or None), then maybe a forfeit."""
    plays = [{"seat": seat} for seat, _ in calls]
    made = [
        PlayCall(
            seat=seat,
            round=1,
            play=n,
            move=Move.from_str("1o"),
            latency_ms=1.0,
            fault=Fault(FaultKind(kind), "x") if kind else None,
        )
        for n, (seat, kind) in enumerate(calls, start=1)
    ]
    if forfeit is not None:
        seat, kind = forfeit
        made.append(
            PlayCall(
                seat=seat,
                round=1,
                play=len(calls) + 1,
                move=None,
                latency_ms=0.0,
                fault=Fault(FaultKind(kind), "x"),
            )
        )
    result = {"winner": None, "totals": [0, 0], "reason": "forfeit" if forfeit else "points"}
    result["forfeit_seat"] = forfeit[0] if forfeit else None
    return GameRecord(log={"rounds": [{"plays": plays}], "result": result}, calls=made)


def plan_for(bot_ids: list[int], attempts: int = 1) -> tuple[MatchPlan, GamePlan]:
    game = GamePlan(
        game_id=1,
        seed=1,
        bots=[BotEndpoint(url=url, name=f"b{n}") for n, url in enumerate(URLS)],
        seating=bot_ids,
    )
    plan = MatchPlan(
        match_id=1, league_id=1, ruleset=None, timeout_ms=100, max_faults=1, games=[game],
        attempts=attempts,
    )  # fmt: skip
    return plan, game


@pytest.fixture
def seated(db, make_bot) -> list[int]:
    ids = []
    for url in URLS:
        bot = make_bot("greedy")
        Bot.objects.filter(pk=bot.pk).update(url=url)
        ids.append(bot.id)
    return ids


ALL_GONE = record([(0, None), (1, None), (0, "connect"), (1, "connect")], forfeit=(0, "connect"))


def test_a_clean_game_and_a_bot_s_own_faults_are_the_bot_s(seated):
    plan, game = plan_for(seated)
    assert service_fault(plan, game, record([(0, None), (1, None)], None)) is None
    one_gone = record([(0, None), (1, None), (0, "connect"), (1, None)], forfeit=(0, "connect"))
    assert service_fault(plan, game, one_gone) is None
    illegal = record(
        [(0, None), (1, "illegal_move"), (0, None), (1, "illegal_move")], (1, "bad_json")
    )
    assert service_fault(plan, game, illegal) is None


def test_every_seat_lost_at_once_is_ours_until_the_attempts_run_out(seated):
    plan, game = plan_for(seated)
    assert service_fault(plan, game, ALL_GONE) == "every seat lost its connection at once"
    plan, game = plan_for(seated, attempts=MAX_ATTEMPTS)
    assert service_fault(plan, game, ALL_GONE) is None


def test_a_table_that_never_answered_is_charged_once_the_attempts_run_out(seated):
    never = record([(0, "connect"), (1, "connect"), (0, "connect")], forfeit=(1, "connect"))
    for attempts in range(1, MAX_ATTEMPTS):
        plan, game = plan_for(seated, attempts=attempts)
        assert service_fault(plan, game, never) == "every seat lost its connection at once"
    plan, game = plan_for(seated, attempts=MAX_ATTEMPTS)
    assert service_fault(plan, game, never) is None


def test_a_bot_its_owner_moved_during_the_game_is_charged_for_its_old_address(seated):
    """The owner's doing, not ours: replaying would be a free do-over on a deal it has seen."""
    plan, game = plan_for(seated)
    gone = record([(0, None), (1, None), (0, "connect"), (1, None)], forfeit=(0, "connect"))
    Bot.objects.filter(pk=seated[0]).update(url="http://127.0.0.1:9999")
    assert service_fault(plan, game, gone) is None


def test_while_stopping_connection_and_timeout_faults_are_ours(seated):
    plan, game = plan_for(seated)
    timed_out = record([(0, None), (1, "timeout"), (0, None), (1, None)], None)
    assert service_fault(plan, game, timed_out) is None
    stopping.begin()
    try:
        assert service_fault(plan, game, timed_out) == "the service was stopping"
        illegal = record([(0, None), (1, "illegal_move")], None)
        assert service_fault(plan, game, illegal) is None
    finally:
        stopping.clear()
    assert not stopping
