"""The live streams (web/live.py) under uvicorn with a real Redis, fed by the worker's publisher
(tournaments/live.py ``LiveFeeds``) on its own event loop: what a late viewer gets, resuming with
Last-Event-ID, the end, the open-stream limit, unknown ids, a Redis restart; and the public view
of a game, checked against the engine's own log.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from games.engine import Game as EngineGame
from games.engine import Ruleset
from scripts.private_redis import PrivateRedis
from tests.browser.data import stored_game
from tests.live.servers import AsgiServer, Stream
from tournaments.live import LiveFeeds
from tournaments.messages import NOT_FOUND
from tournaments.models import Game, GameLog, League
from web.live import NO_SUCH_GAME, NO_SUCH_PAGE, TOO_MANY_STREAMS, PublicGame

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


def _pending_game(owner, seed: int = 5) -> Game:
    game = stored_game(owner, ruleset=CLASSIC, seed=seed)
    Game.objects.filter(pk=game.pk).update(status=Game.Status.PENDING, reason="")
    League.objects.filter(pk=game.league_id).update(status=League.Status.RUNNING)
    game.refresh_from_db()
    return game


def _moves(seed: int, count: int) -> Iterator[tuple[int, str]]:
    """``count`` legal plays of a game of ``seed``, chosen at random: (seat, move)."""
    game = EngineGame.new(Ruleset.from_dict(CLASSIC), seed)
    choices = random.Random(seed)
    for _ in range(count):
        seat = game.current_seat
        move = choices.choice(game.view(seat).legal_moves)
        game.apply(move)
        yield seat, move.to_str()


@pytest.fixture
def feeds(settings, redis_url) -> Iterator[LiveFeeds]:
    settings.REDIS_URL = redis_url
    running = Feeds()
    yield running.feeds
    running.stop()


@pytest.fixture
def server(transactional_db, redis_url, tmp_path) -> Iterator[AsgiServer]:
    server = AsgiServer(
        redis_url,
        tmp_path / "uvicorn.log",
        ESCOBA_LIVE_HEARTBEAT_S="1",
        ESCOBA_LIVE_MAX_STREAMS="3",
    )
    yield server
    server.stop()


@pytest.mark.integration
def test_a_viewer_gets_the_game_so_far_then_each_play_and_resumes_where_it_was(
    server, feeds, django_user_model
):
    owner = django_user_model.objects.create_user(username="ana", password="x-long-pass-1")
    game = _pending_game(owner)
    plays = list(_moves(game.seed, 20))
    feeds.start(game.pk)
    for seat, move in plays[:10]:
        feeds.play(game.pk, seat=seat, move=move, fault=None)
    time.sleep(0.5)

    stream = Stream(server.port, f"/live/games/{game.pk}/")
    assert stream.response.status == 200
    assert stream.response.getheader("Content-Type").startswith("text/event-stream")
    snapshot = stream.next()
    assert snapshot["event"] == "snapshot"
    run, number = snapshot["id"].split(".")
    assert number == "10" and snapshot["data"]["n"] == 10
    log = snapshot["data"]["log"]
    assert "seed" not in log, "the seed would give every hand away"
    assert all(card is None for r in log["rounds"] for deal in r["deals"] for hand in deal
               for card in hand)  # fmt: skip
    assert sum(len(r["plays"]) for r in log["rounds"]) == 10

    for seat, move in plays[10:15]:
        feeds.play(game.pk, seat=seat, move=move, fault=None)
    for n in range(11, 16):
        event = stream.next()
        assert (event["event"], event["id"]) == ("play", f"{run}.{n}")
    stream.close()

    # Away for five plays: back with Last-Event-ID, it gets exactly those five.
    for seat, move in plays[15:]:
        feeds.play(game.pk, seat=seat, move=move, fault="timeout")
    time.sleep(0.5)
    again = Stream(server.port, f"/live/games/{game.pk}/", last_event_id=f"{run}.15")
    received = [again.next() for _ in range(5)]
    assert [(e["event"], e["id"]) for e in received] == [
        ("play", f"{run}.{n}") for n in range(16, 21)
    ]
    assert received[0]["data"]["meta"] == {"fault": "timeout"}

    # The end: stored, then announced; the stream says so and closes.
    Game.objects.filter(pk=game.pk).update(status=Game.Status.FINISHED)
    GameLog.objects.create(game=game, document={"format": "escoba-log/1"})
    feeds.end(game.pk, "finished")
    end = again.next()
    assert end["event"] == "end"
    assert end["data"] == {"status": "finished", "log_url": f"/api/games/{game.pk}/log/"}
    assert again.next() is None


@pytest.mark.integration
def test_a_game_played_again_starts_its_viewers_afresh(server, feeds, django_user_model):
    owner = django_user_model.objects.create_user(username="ana", password="x-long-pass-1")
    game = _pending_game(owner)
    plays = list(_moves(game.seed, 4))
    stream = Stream(server.port, f"/live/games/{game.pk}/")
    feeds.start(game.pk)
    assert stream.next()["event"] == "snapshot"
    for seat, move in plays:
        feeds.play(game.pk, seat=seat, move=move, fault=None)
    assert [stream.next()["event"] for _ in plays] == ["play"] * 4
    feeds.end(game.pk, "replay")  # the service stopped: the game will be played from its seed
    assert stream.next()["event"] == "reset"
    feeds.start(game.pk)
    fresh = stream.next()
    assert fresh["event"] == "snapshot" and fresh["data"]["n"] == 0
    stream.close()


@pytest.mark.integration
def test_open_streams_are_limited_and_given_back_when_a_browser_leaves(server, django_user_model):
    owner = django_user_model.objects.create_user(username="ana", password="x-long-pass-1")
    league = _pending_game(owner).league
    path = f"/live/league/{league.pk}/"
    open_streams = [Stream(server.port, path) for _ in range(3)]
    for stream in open_streams:
        assert stream.next()["event"] == "changed"
    refused = Stream(server.port, path)
    assert refused.response.status == 503
    assert refused.response.getheader("Retry-After") == "60"
    assert json.loads(refused.response.read()) == {
        "detail": TOO_MANY_STREAMS, "code": "live_busy", "errors": {},
    }  # fmt: skip
    open_streams.pop().close()
    deadline = time.monotonic() + 10  # the next keep-alive write finds the browser gone
    while True:
        retry = Stream(server.port, path)
        if retry.response.status == 200 or time.monotonic() > deadline:
            break
        retry.close()
        time.sleep(0.5)
    assert retry.response.status == 200


def _database_connections(pid: int) -> int:
    """How many connections to the test database the process ``pid`` holds open."""
    from django.db import connection

    if connection.vendor == "sqlite":
        database = os.path.realpath(connection.settings_dict["NAME"])
        held = 0
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                held += os.path.realpath(fd) == database
            except OSError:  # closed in the meantime
                pass
        return held
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]


@pytest.mark.integration
def test_open_streams_share_a_few_database_connections(
    transactional_db, redis_url, tmp_path, django_user_model
):
    """Every stream reads the database while it is open (the game's status at each keep-alive).
    Reads in each request's own thread held a connection per stream for its whole life, so a
    hundred viewers used up PostgreSQL's connections; the streams share ESCOBA_LIVE_DB_THREADS."""
    server = AsgiServer(
        redis_url,
        tmp_path / "uvicorn.log",
        ESCOBA_LIVE_HEARTBEAT_S="1",
        ESCOBA_LIVE_MAX_STREAMS="12",
        ESCOBA_LIVE_MAX_STREAMS_PER_CLIENT="12",
        ESCOBA_LIVE_DB_THREADS="2",
    )
    owner = django_user_model.objects.create_user(username="ana", password="x-long-pass-1")
    game = _pending_game(owner)
    streams = [Stream(server.port, f"/live/games/{game.pk}/") for _ in range(10)]
    try:
        for stream in streams:
            assert stream.response.status == 200
            stream.until_comment("keep-alive")  # it has read the game's status since it opened
        for stream in streams:
            stream.until_comment("keep-alive")
        # The 2 threads' connections; on PostgreSQL the web's pool (config/asgi.py) may keep
        # its 2 idle ones besides. Not one per stream: 10.
        assert _database_connections(server.process.pid) <= 4
    finally:
        for stream in streams:
            stream.close()
        server.stop()


@pytest.mark.postgres
@pytest.mark.integration
def test_under_asgi_requests_take_their_postgresql_sessions_from_a_pool(server, django_user_model):
    """Each request runs in a thread of its own under ASGI, and Django's connections belong to
    threads: without the pool every request opened a new PostgreSQL session."""
    from django.db import connection

    owner = django_user_model.objects.create_user(username="ana", password="x-long-pass-1")
    game = _pending_game(owner)

    def sessions() -> int:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT sessions FROM pg_stat_database WHERE datname = current_database()"
            )
            return cursor.fetchone()[0]

    client = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    before = sessions()
    for _ in range(30):
        client.request("GET", f"/api/games/{game.pk}/")
        response = client.getresponse()
        assert response.status == 200, response.read()
        response.read()
    assert sessions() - before <= 10  # the pool's size at most, not one per request
    assert _database_connections(server.process.pid) <= 10


@pytest.mark.integration
def test_unknown_ids_and_addresses_get_our_json_404(server):
    unknown = [
        ("/live/games/999999/", NO_SUCH_GAME),
        ("/live/league/999999/", NO_SUCH_PAGE),
        ("/live/ladder/1/", NO_SUCH_PAGE),
        ("/live/games/first/", NOT_FOUND),  # no such address at all: still JSON, not a page
        ("/live/", NOT_FOUND),
    ]
    for path, detail in unknown:
        stream = Stream(server.port, path)
        assert stream.response.status == 404, path
        assert json.loads(stream.response.read()) == {
            "detail": detail, "code": "not_found", "errors": {},
        }  # fmt: skip


@pytest.mark.integration
def test_a_stream_outlives_a_redis_restart(transactional_db, settings, django_user_model, tmp_path):
    """Redis goes away under an open stream: no 500, the stream stays open and says it is
    reconnecting; once Redis is back, plays flow again."""
    redis_server = PrivateRedis().start()
    settings.REDIS_URL = redis_server.url
    server = AsgiServer(redis_server.url, tmp_path / "uvicorn.log", ESCOBA_LIVE_HEARTBEAT_S="1")
    publisher = Feeds()
    try:
        owner = django_user_model.objects.create_user(username="ana", password="x-long-pass-1")
        game = _pending_game(owner)
        stream = Stream(server.port, f"/live/games/{game.pk}/")
        assert stream.response.status == 200
        redis_server.stop()
        stream.until_comment("the live feed is reconnecting")
        during = Stream(server.port, f"/live/games/{game.pk}/")
        assert during.response.status == 200
        during.until_comment("the live feed is reconnecting")
        during.close()
        redis_server = PrivateRedis(port=redis_server.port).start()
        stream.until_comment("keep-alive")  # subscribed again: the heartbeat goes on
        publisher.feeds.start(game.pk)
        for seat, move in _moves(game.seed, 3):
            publisher.feeds.play(game.pk, seat=seat, move=move, fault=None)
        assert [stream.next()["event"] for _ in range(4)] == ["snapshot", "play", "play", "play"]
        stream.close()
    finally:
        publisher.stop()
        server.stop()
        redis_server.stop()


@pytest.mark.parametrize("seed", range(12))
def test_the_public_game_is_the_engine_log_without_hands(seed):
    """Plays, escobas, each round's score and the result as the engine logs them; deals only as
    face-down cards of the right count; a forfeit on odd seeds."""
    ruleset = Ruleset.from_dict(CLASSIC)
    game, public = EngineGame.new(ruleset, seed), PublicGame(ruleset, seed)
    choices = random.Random(seed)
    while not game.is_over:
        if seed % 2 and len(game.log()["rounds"]) == 2:
            seat = game.current_seat
            game.forfeit(seat, "faults")
            public.forfeit(seat)
            break
        move = choices.choice(game.view(game.current_seat).legal_moves)
        game.apply(move)
        change = orjson.loads(orjson.dumps(public.play(move.to_str(), None)))
        assert set(change) >= {"round", "play", "meta"}
    log = game.log()
    doc = orjson.loads(orjson.dumps(public.doc))
    assert doc["result"] == log["result"]
    assert "seed" not in doc
    for mine, theirs in zip(doc["rounds"], log["rounds"], strict=True):
        assert {k: v for k, v in mine.items() if k != "deals"} == {
            k: v for k, v in theirs.items() if k != "deals"
        }
        assert [[len(hand) for hand in deal] for deal in mine["deals"]] == [
            [len(hand) for hand in deal] for deal in theirs["deals"]
        ]
        assert all(card is None for deal in mine["deals"] for hand in deal for card in hand)
