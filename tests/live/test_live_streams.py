"""The live streams (web/game_streams.py, web/page_streams.py) under uvicorn with a real Redis,
fed by the worker's publisher (tournaments/live_feed.py ``LiveFeeds``) on its own event loop:
what a late viewer gets, resuming with Last-Event-ID, the end, the open-stream limit, unknown
ids, a Redis restart. The public view itself: tests/engine/test_engine_public_view.py.
"""

from __future__ import annotations

import http.client
import json
import os
import time
from pathlib import Path

import pytest
import redis

from scripts.private_redis import PrivateRedis
from tests.live.feeds import Feeds, legal_moves, pending_game
from tests.live.servers import AsgiServer, Stream
from tournaments.live_feed import live_game_key
from tournaments.messages import NOT_FOUND
from tournaments.models import Game, GameLog
from web.game_streams import NO_SUCH_GAME
from web.page_streams import NO_SUCH_PAGE
from web.sse import TOO_MANY_STREAMS


@pytest.mark.integration
def test_a_viewer_gets_the_game_so_far_then_each_play_and_resumes_where_it_was(
    shared_server, transactional_db, feeds, django_user_model
):
    server = shared_server
    owner = django_user_model.objects.create_user(username="ana", password="x-long-pass-1")
    game = pending_game(owner)
    plays = list(legal_moves(game.seed, 20))
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
def test_an_entry_that_overtook_the_one_before_it_waits_for_it(
    shared_server, transactional_db, feeds, django_user_model, redis_url
):
    """Two processes append a person's game's entries, each after its own commit (the web
    process for the person's moves, a worker for the bots'): entry n + 1 may reach Redis before
    entry n. The viewers still get every play, in order, and no "stalled"."""
    owner = django_user_model.objects.create_user(username="ana", password="x-long-pass-1")
    game = pending_game(owner)
    client = redis.Redis.from_url(redis_url)
    key = live_game_key(game.pk)
    feeds.start(game.pk)
    deadline = time.monotonic() + 10
    while client.llen(key) < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    run = json.loads(client.lindex(key, 0))["run"]
    stream = Stream(shared_server.port, f"/live/games/{game.pk}/")
    assert stream.next()["event"] == "snapshot"
    entries = [
        {"run": run, "n": n, "kind": "play", "seat": seat, "move": move, "fault": None}
        for n, (seat, move) in enumerate(legal_moves(game.seed, 3), start=1)
    ]
    for entry in (entries[1], entries[0], entries[2]):
        payload = json.dumps(entry)
        client.rpush(key, payload)
        client.publish(key, payload)
    events = [stream.next() for _ in range(3)]
    assert [(e["event"], e["data"]["n"]) for e in events] == [("play", n) for n in (1, 2, 3)]
    stream.close()
    client.close()


@pytest.mark.integration
def test_a_game_played_again_starts_its_viewers_afresh(
    shared_server, transactional_db, feeds, django_user_model
):
    server = shared_server
    owner = django_user_model.objects.create_user(username="ana", password="x-long-pass-1")
    game = pending_game(owner)
    plays = list(legal_moves(game.seed, 4))
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
    league = pending_game(owner).league
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
def test_open_streams_share_a_few_database_connections(asgi, django_user_model):
    """Every game followed reads the database while its streams are open (its status at each
    keep-alive; its row when a run starts). Reads in each request's own thread held a connection
    per stream for its whole life, so a hundred viewers used up PostgreSQL's connections; the
    streams share ESCOBA_LIVE_DB_THREADS. Five games, two viewers each."""
    server = asgi(
        ESCOBA_LIVE_MAX_STREAMS="12",
        ESCOBA_LIVE_MAX_STREAMS_PER_CLIENT="12",
        ESCOBA_LIVE_DB_THREADS="2",
    )
    owner = django_user_model.objects.create_user(username="ana", password="x-long-pass-1")
    games = [pending_game(owner, seed, names=(f"a{seed}", f"b{seed}")) for seed in range(5)]
    streams = [Stream(server.port, f"/live/games/{game.pk}/") for game in games for _ in "ab"]
    try:
        for stream in streams:
            assert stream.response.status == 200
            stream.until_comment("keep-alive")  # its game's status was read since it opened
        for stream in streams:
            stream.until_comment("keep-alive")
        # The 2 threads' connections; on PostgreSQL the web's pool (config/asgi.py) may keep
        # its 2 idle ones besides. Not one per stream: 10.
        assert _database_connections(server.process.pid) <= 4
    finally:
        for stream in streams:
            stream.close()


@pytest.mark.postgres
@pytest.mark.integration
def test_under_asgi_requests_take_their_postgresql_sessions_from_a_pool(server, django_user_model):
    """Each request runs in a thread of its own under ASGI, and Django's connections belong to
    threads: without the pool every request opened a new PostgreSQL session."""
    from django.db import connection

    owner = django_user_model.objects.create_user(username="ana", password="x-long-pass-1")
    game = pending_game(owner)

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
def test_unknown_ids_and_addresses_get_our_json_404(shared_server, transactional_db):
    server = shared_server
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
        game = pending_game(owner)
        stream = Stream(server.port, f"/live/games/{game.pk}/")
        assert stream.response.status == 200, stream.response.read()
        redis_server.stop()
        stream.until_comment("the live feed is reconnecting")
        during = Stream(server.port, f"/live/games/{game.pk}/")
        assert during.response.status == 200
        during.until_comment("the live feed is reconnecting")
        during.close()
        redis_server = PrivateRedis(port=redis_server.port).start()
        stream.until_comment("keep-alive")  # subscribed again: the heartbeat goes on
        publisher.feeds.start(game.pk)
        for seat, move in legal_moves(game.seed, 3):
            publisher.feeds.play(game.pk, seat=seat, move=move, fault=None)
        assert [stream.next()["event"] for _ in range(4)] == ["snapshot", "play", "play", "play"]
        stream.close()
    finally:
        publisher.stop()
        server.stop()
        redis_server.stop()
