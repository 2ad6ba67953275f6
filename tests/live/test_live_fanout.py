"""One public replay per game per web process (web/game_replays.py), shared by the game's
streams: one subscription whatever the number of viewers, the same events to each, a late viewer
caught up from the shared state, a viewer that falls behind dropped without holding the others
back, a game played again replayed from its new deal, and who may watch asked per viewer."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
import redis

from games.engine import Game as EngineGame
from games.engine import Ruleset
from tests.live.feeds import CLASSIC, legal_moves, pending_game
from tests.live.servers import Stream
from tournaments.live_feed import live_game_key
from tournaments.models import Game, League, Match
from tournaments.selectors import pages as page_selectors
from web import game_replays
from web.game_replays import GameReplays, Viewer


def _subscriptions(redis_url: str, game_id: int) -> int:
    key = live_game_key(game_id)
    return dict(redis.Redis.from_url(redis_url).pubsub_numsub(key))[key.encode()]


def _wait(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


@pytest.mark.integration
def test_the_viewers_of_a_game_share_one_replay(asgi, feeds, redis_url, django_user_model):
    server = asgi(ESCOBA_LIVE_MAX_STREAMS="20", ESCOBA_LIVE_MAX_STREAMS_PER_CLIENT="20")
    owner = django_user_model.objects.create_user(username="ana", password="x-long-pass-1")
    game = pending_game(owner)
    plays = list(legal_moves(game.seed, 20))
    path = f"/live/games/{game.pk}/"
    feeds.start(game.pk)
    early = [Stream(server.port, path) for _ in range(5)]
    try:
        firsts = [stream.next() for stream in early]
        assert firsts[0]["event"] == "snapshot" and firsts[0]["data"]["n"] == 0
        assert all(first == firsts[0] for first in firsts)
        run = firsts[0]["id"].split(".")[0]
        for seat, move in plays[:10]:
            feeds.play(game.pk, seat=seat, move=move, fault=None)
        seen = [[stream.next() for _ in range(10)] for stream in early]
        assert [event["id"] for event in seen[0]] == [f"{run}.{n}" for n in range(1, 11)]
        assert all(events == seen[0] for events in seen)
        # Five streams, one subscription: the process follows the game once.
        assert _subscriptions(redis_url, game.pk) == 1

        # A late viewer gets the game so far, from the replay the others share.
        late = Stream(server.port, path)
        early.append(late)
        snapshot = late.next()
        assert (snapshot["event"], snapshot["id"]) == ("snapshot", f"{run}.10")
        log = snapshot["data"]["log"]
        assert [p for r in log["rounds"] for p in r["plays"]] == [
            event["data"]["play"] for event in seen[0]
        ]
        for seat, move in plays[10:]:
            feeds.play(game.pk, seat=seat, move=move, fault=None)
        rest = [[stream.next() for _ in range(10)] for stream in early]
        assert [event["id"] for event in rest[0]] == [f"{run}.{n}" for n in range(11, 21)]
        assert all(events == rest[0] for events in rest)
        assert _subscriptions(redis_url, game.pk) == 1
    finally:
        for stream in early:
            stream.close()
    # The last viewer gone, the process stops following the game.
    _wait(lambda: _subscriptions(redis_url, game.pk) == 0, 10, "the subscription to end")


@pytest.mark.integration
def test_a_viewer_that_falls_behind_is_dropped_and_the_others_go_on(
    feeds, transactional_db, django_user_model, monkeypatch
):
    """The replay never waits for a viewer: one whose queue is full (a browser that does not
    read) is dropped, to reconnect and resume; a viewer that keeps up gets every play."""
    monkeypatch.setattr(game_replays, "VIEWER_BACKLOG", 5)
    owner = django_user_model.objects.create_user(username="ana", password="x-long-pass-1")
    game = page_selectors.game_find(pending_game(owner).pk)
    plays = list(legal_moves(game.seed, 30))
    feeds.start(game.pk)

    async def watch() -> tuple[game_replays.GameReplay, Viewer, Viewer, bytes]:
        replays = GameReplays()
        keeping_up, stuck = Viewer(None), Viewer(None)
        replay = replays.join(game, keeping_up)
        replays.join(game, stuck)
        received = [await keeping_up.queue.get()]  # the snapshot
        last = b"id: %s.30\n" % received[0].split(b".")[0].removeprefix(b"id: ")
        for seat, move in plays:
            feeds.play(game.pk, seat=seat, move=move, fault=None)
        while not any(last in chunk for chunk in received):  # as a stream reads: all that waits
            received.append(await keeping_up.queue.get())
            while not keeping_up.queue.empty():
                received.append(keeping_up.queue.get_nowait())
        replay.leave(keeping_up)
        return replay, keeping_up, stuck, b"".join(received)

    replay, keeping_up, stuck, received = asyncio.run(asyncio.wait_for(watch(), 30))
    assert stuck.dropped and not keeping_up.dropped
    assert stuck.queue.qsize() == 5
    ids = [line.split(b".")[1] for line in received.splitlines() if line.startswith(b"id: ")]
    assert ids == [str(n).encode() for n in range(31)]


@pytest.mark.integration
def test_a_game_played_again_is_replayed_from_its_new_deal(server, feeds, django_user_model):
    """A game the service stopped is dealt afresh when played again (a new seed): the replay
    reads the game again at the new run, so the table and the plays are the new deal's."""
    owner = django_user_model.objects.create_user(username="ana", password="x-long-pass-1")
    game = pending_game(owner, seed=5)
    stream = Stream(server.port, f"/live/games/{game.pk}/")
    feeds.start(game.pk)
    assert stream.next()["event"] == "snapshot"
    for seat, move in legal_moves(5, 3):
        feeds.play(game.pk, seat=seat, move=move, fault=None)
    assert [stream.next()["event"] for _ in range(3)] == ["play"] * 3
    feeds.end(game.pk, "replay")
    assert stream.next()["event"] == "reset"
    Game.objects.filter(pk=game.pk).update(seed=77)
    feeds.start(game.pk)
    fresh = stream.next()
    assert fresh["event"] == "snapshot"
    new_deal = EngineGame.new(Ruleset.from_dict(CLASSIC), 77).log()["rounds"][0]["table"]
    assert fresh["data"]["log"]["rounds"][0]["table"] == new_deal
    for seat, move in legal_moves(77, 3):
        feeds.play(game.pk, seat=seat, move=move, fault=None)
    assert [stream.next()["event"] for _ in range(3)] == ["play"] * 3
    stream.close()


@pytest.mark.integration
def test_who_may_watch_is_asked_of_each_viewer(server, feeds, django_user_model):
    """A rated game in play: its stream names no bot. Once another game in play shares its deal,
    a viewer that comes is refused (409) although the process follows the game for others, and
    at the game's next run the replay ends the streams it had."""
    owner = django_user_model.objects.create_user(username="ana", password="x-long-pass-1")
    game = pending_game(owner, seed=9, names=("zanahoria", "berenjena"))
    League.objects.filter(pk=game.league_id).update(rated=True)
    Match.objects.filter(pk=game.match_id).update(status=Match.Status.RUNNING)
    twin = Game.objects.create(
        league_id=game.league_id, match_id=game.match_id, number=2, seed=9,
        seating=list(reversed(game.seating)), status=Game.Status.FINISHED,
    )  # fmt: skip
    path = f"/live/games/{game.pk}/"
    watching = Stream(server.port, path)
    assert watching.response.status == 200
    feeds.start(game.pk)
    # The run's snapshot before any play: a replay that starts after the plays would show them
    # in its snapshot, not as plays.
    events = [watching.next()]
    assert events[0]["event"] == "snapshot" and events[0]["data"]["n"] == 0
    for seat, move in legal_moves(9, 4):
        feeds.play(game.pk, seat=seat, move=move, fault=None)
    events += [watching.next() for _ in range(4)]
    assert [event["event"] for event in events] == ["snapshot"] + ["play"] * 4
    sent = json.dumps(events)
    assert "zanahoria" not in sent and "berenjena" not in sent

    Game.objects.filter(pk=twin.pk).update(status=Game.Status.PENDING)
    refused = Stream(server.port, path)
    assert refused.response.status == 409
    assert json.loads(refused.response.read())["code"] == "set_in_play"

    feeds.end(game.pk, "replay")
    assert watching.next()["event"] == "reset"
    feeds.start(game.pk)
    assert watching.next() is None  # nothing of the new run: the stream ends
    watching.close()
