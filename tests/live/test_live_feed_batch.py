"""The worker's live entries reach Redis as one script call per batch: every kind of entry of
several games, handed over together, lands in its own list and channel, in order and whole."""

from __future__ import annotations

import time

import orjson
import redis

from tournaments.live_feed import live_game_key, live_topic_key


def test_a_batch_of_every_kind_of_entry_lands_in_order(feeds, redis_url, settings):
    client = redis.Redis.from_url(redis_url)
    pubsub = client.pubsub()
    pubsub.subscribe(live_game_key(7), live_topic_key("league", 3))
    pubsub.get_message(timeout=1)
    pubsub.get_message(timeout=1)
    client.rpush(live_game_key(7), b"an older run")

    def batch() -> None:  # on the loop, so that all of it waits for one flush
        feeds.start(7)
        feeds.start(8)
        feeds.play(7, seat=0, move="7o:3c+5e", fault=None)
        feeds.play(8, seat=1, move="1e", fault="timeout")
        feeds.notify("league", 3)
        feeds.forfeit(7, seat=1)
        feeds.end(7, "finished")

    feeds._loop.call_soon_threadsafe(batch)
    deadline = time.monotonic() + 10
    while client.llen(live_game_key(7)) < 4 and time.monotonic() < deadline:
        time.sleep(0.02)

    entries = [orjson.loads(raw) for raw in client.lrange(live_game_key(7), 0, -1)]
    run = entries[0]["run"]
    assert entries == [
        {"run": run, "n": 0, "kind": "start"},
        {"run": run, "n": 1, "kind": "play", "seat": 0, "move": "7o:3c+5e", "fault": None},
        {"run": run, "n": 2, "kind": "forfeit", "seat": 1},
        {"run": run, "n": 3, "kind": "end", "status": "finished"},
    ]
    other = [orjson.loads(raw) for raw in client.lrange(live_game_key(8), 0, -1)]
    assert [entry["kind"] for entry in other] == ["start", "play"]
    assert other[1] | {"run": None} == {
        "run": None, "n": 1, "kind": "play", "seat": 1, "move": "1e", "fault": "timeout"
    }  # fmt: skip
    assert 0 < client.ttl(live_game_key(7)) <= settings.ESCOBA_LIVE_TTL_S
    heard = []
    while (message := pubsub.get_message(timeout=1)) is not None:
        heard.append((message["channel"].decode(), message["data"]))
    game = live_game_key(7).encode()
    assert heard == [
        (live_game_key(7), client.lindex(game, 0)),
        (live_game_key(7), client.lindex(game, 1)),
        (live_topic_key("league", 3), b"changed"),
        (live_game_key(7), client.lindex(game, 2)),
        (live_game_key(7), client.lindex(game, 3)),
    ]
